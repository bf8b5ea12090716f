"""Array creation. Functions of shapes make plain arrays; `*_like` functions carry no
derivative in the array they take the shape of; the values an array is made from are
differentiable and can be traced: `full`/`full_like`'s fill value, `meshgrid`'s vectors,
`array`/`asarray`/`copy` of traced values (a list holding traced values is stacked). On
plain values each is NumPy's own function. (`linspace`, `logspace` and `geomspace`, also
differentiable in their end points, are in `_spaces.py`.)"""

import numpy as np

from .. import numpy as fnp
from .._core.abstract import ShapedArray, is_aval, same_rule, xp_of
from .._core.backend import array_module, backend_of, is_device_array
from .._core.tracer import Tracer
from .._batching.families import fallback, keep_batch, like_batch, only_first, to_front, tri_batch
from .._core.rules import as_primitive, defabstract_eval, defbatch, defjvp_linear, defvjp
from ._util import dtype_of, unbroadcast, wrap, wrap_nondiff

zeros = np.zeros
ones = np.ones
empty = np.empty
eye = np.eye
identity = np.identity
arange = np.arange
tri = np.tri
indices = np.indices
zeros_like = wrap_nondiff(np.zeros_like, "zeros_like")
ones_like = wrap_nondiff(np.ones_like, "ones_like")
empty_like = wrap_nondiff(np.empty_like, "empty_like")
_full_like_p = wrap_nondiff(np.full_like, "full_like")  # fill value fixed; `a` read for shape
tril = wrap(np.tril)
triu = wrap(np.triu)

for _f in (zeros_like, ones_like, empty_like, _full_like_p):
    defbatch(_f, like_batch(_f))
del _f
defvjp(tril, lambda g, ans, m, k=0: tril(g, k))
defjvp_linear(tril)
defbatch(tril, tri_batch(tril))
defvjp(triu, lambda g, ans, m, k=0: triu(g, k))
defjvp_linear(triu)
defbatch(triu, tri_batch(triu))


# ----------------------------------------------------------------------------- traced values


def _full_impl(fill_value, shape, dtype=None, order="C"):
    return array_module(fill_value).full(shape, fill_value, dtype, order=order)


_full_p = wrap(_full_impl, "full")


def _shape_tuple(shape):
    return (int(shape),) if np.ndim(shape) == 0 else tuple(int(n) for n in shape)


def full(shape, fill_value, dtype=None, order="C", **kwargs):
    """An array of `shape` filled with `fill_value` (NumPy's `full`), differentiable and
    stageable in a traced fill value (which may be an array broadcasting to `shape`)."""
    if isinstance(fill_value, (list, tuple)) and _holds_value(fill_value):
        fill_value = asarray(fill_value)
    if isinstance(fill_value, Tracer):
        return _full_p(fill_value, _shape_tuple(shape), None if dtype is None else
                       np.dtype(dtype), order)
    return np.full(shape, fill_value, dtype, order, **kwargs)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    """An array of `a`'s shape and dtype filled with `fill_value` (NumPy's `full_like`):
    no derivative through `a`; differentiable and stageable in a traced fill value."""
    if isinstance(fill_value, (list, tuple)) and _holds_value(fill_value):
        fill_value = asarray(fill_value)
    if isinstance(fill_value, Tracer):
        out_shape = fnp.shape(a) if shape is None else _shape_tuple(shape)
        return _full_p(fill_value, out_shape, np.dtype(dtype if dtype is not None else
                                                       dtype_of(a)), "C")
    return _full_like_p(a, fill_value, dtype=dtype, order=order, subok=subok, shape=shape,
                        **kwargs)


def _vjp_full(g, ans, fill, shape, dtype=None, order="C"):
    return fnp.astype(unbroadcast(g, fnp.shape(fill)), dtype_of(fill), copy=False)


def _batch_full(args, dims, **kw):
    (fill, shp, *rest), d = args, dims[0]
    if not only_first(dims):
        return fallback(_full_p, args, dims, kw)
    fill = to_front(fill, d)  # size-1 axes after the batch axis up to len(shp) example axes
    s = fnp.shape(fill)
    fill = fnp.reshape(fill, s[:1] + (1,) * (len(shp) - len(s) + 1) + s[1:])
    return as_primitive(_full_p).bind(fill, (s[0],) + tuple(shp), *rest, **kw), 0


defvjp(_full_p, _vjp_full)
defjvp_linear(_full_p)
defbatch(_full_p, _batch_full)


def _copy_impl(a):
    return a.copy()


_copy_p = wrap(_copy_impl, "copy")
defvjp(_copy_p, lambda g, ans, a: g)
defjvp_linear(_copy_p)
defbatch(_copy_p, keep_batch(_copy_p))


def copy(a, order="K", subok=False):
    """A new array with `a`'s values (NumPy's `copy`); on a traced value a `copy` operation,
    so that a jitted function hands out a fresh array where the eager one would."""
    if isinstance(a, Tracer):
        return _copy_p(a)
    if isinstance(a, (list, tuple)) and _holds_value(a):
        return asarray(a)  # stacking already makes a new array
    return array_module(a).copy(a, order=order) if hasattr(a, "dtype") else np.copy(
        a, order=order, subok=subok)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate matrices from coordinate vectors (NumPy's `meshgrid`), differentiable and
    stageable in traced vectors."""
    if not any(isinstance(x, Tracer) for x in xi):
        return np.meshgrid(*xi, copy=copy, sparse=sparse, indexing=indexing)
    if indexing not in ("xy", "ij"):
        raise ValueError("fnad.numpy.meshgrid: valid values for `indexing` are 'xy' and 'ij'.")
    nd = len(xi)
    out = [fnp.reshape(fnp.asarray(x), (1,) * i + (-1,) + (1,) * (nd - i - 1))
           for i, x in enumerate(xi)]
    if indexing == "xy" and nd > 1:
        out[0] = fnp.reshape(out[0], (1, -1) + (1,) * (nd - 2))
        out[1] = fnp.reshape(out[1], (-1, 1) + (1,) * (nd - 2))
    if not sparse:
        full_shape = np.broadcast_shapes(*(fnp.shape(o) for o in out))
        out = [fnp.broadcast_to(o, full_shape) for o in out]
    if copy:
        out = [_copy_p(o) for o in out]
    return tuple(out)


def _holds_value(obj):
    """True when `obj` is, or holds in nested lists and tuples, a traced value or a device
    array: what NumPy's own functions cannot take (fnad's general code serves them)."""
    if isinstance(obj, Tracer) or is_device_array(obj):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_holds_value(o) for o in obj)
    return False


def _values_in(obj):
    """The traced values and device arrays in `obj` (nested lists and tuples)."""
    if isinstance(obj, Tracer) or is_device_array(obj):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _values_in(o)


_SCALARS = (bool, int, float, complex, np.number, np.bool_)


def _on(xp, x):
    """A plain item of a list holding traced values, made an array of `xp`: a Python or
    NumPy number is filled in on the device (no copy from the host)."""
    if isinstance(x, _SCALARS):
        return xp.full((), x, dtype=np.asarray(x).dtype)
    return xp.asarray(x)


def asarrays(*xs):
    """`xs` as arrays on one device, for an op that combines them: traced values, arrays and
    lists as `asarray` makes them, Python and NumPy numbers as 0-d arrays filled in on the
    device of the others (no copy from the host), so that `fnp.linspace(x, 1.0)` with `x` on
    a GPU makes its 1.0 there. Arrays on different devices raise a DeviceMismatchError."""
    arrs = [x if isinstance(x, _SCALARS) else asarray(x) for x in xs]
    xp = array_module(*(a for a in arrs if not isinstance(a, _SCALARS)))
    return tuple(_on(xp, a) if isinstance(a, _SCALARS) else a for a in arrs)


def asarray(a, dtype=None, order=None, *, copy=None, like=None):
    """`a` as an array. Traced values pass through (cast if `dtype` differs); nested lists
    holding traced values are stacked, so their derivatives survive, and so are lists
    holding device arrays (their plain items made on that device)."""
    if isinstance(a, Tracer):
        return a if dtype is None else fnp.astype(a, dtype, copy=False)
    if isinstance(a, (list, tuple)) and _holds_value(a):
        xp = array_module(*_values_in(a))  # plain items go to the values' device
        res = fnp.stack([asarray(x) if _holds_value(x) else _on(xp, x) for x in a])
        return res if dtype is None else fnp.astype(res, dtype, copy=False)
    if is_device_array(a):
        return a if dtype is None else a.astype(dtype, copy=False)
    return np.asarray(a, dtype=dtype, order=order, copy=copy)


def array(object, dtype=None, *, copy=True, order="K", ndmin=0, like=None):
    """A new array from `object` (traced values and lists holding them are differentiable)."""
    if isinstance(object, Tracer) or (isinstance(object, (list, tuple))
                                      and _holds_value(object)):
        res = asarray(object, dtype)
        if copy and res is object:  # a traced array as it was: NumPy would copy it
            res = _copy_p(res)
        while fnp.ndim(res) < ndmin:
            res = fnp.expand_dims(res, 0)
        return res
    if is_device_array(object):
        return backend_of(object).xp.array(object, dtype=dtype, copy=copy, ndmin=ndmin)
    return np.array(object, dtype=dtype, copy=copy, order=order, ndmin=ndmin)

# ----------------------------------------------------------------------------- abstract evaluation


def _like_rule(fn):
    """`zeros_like(x, dtype=None, ..., shape=None)` and kin: x's shape unless `shape` is
    given; the dtype from `fn` on a 0-d stand-in."""
    def rule(x, *args, shape=None, **kwargs):
        # a NumPy scalar fill arrives as an abstract value: a 0-d stand-in of its dtype
        args = [np.zeros((), a.dtype) if is_aval(a) else a for a in args]
        out = fn(np.zeros((), x.dtype), *args, **kwargs)
        shape = x.shape if shape is None else (shape if np.ndim(shape) else (shape,))
        return ShapedArray(shape, out.dtype, xp=x.xp)
    return rule


for _f in (zeros_like, ones_like, empty_like, _full_like_p):
    defabstract_eval(_f, _like_rule(as_primitive(_f).impl))


def _full_rule(fill, shape, dtype=None, order="C"):
    fill_dtype = fill.dtype if hasattr(fill, "dtype") else np.result_type(fill)
    return ShapedArray(tuple(shape), np.dtype(dtype) if dtype is not None else fill_dtype,
                       xp=xp_of([fill]))


defabstract_eval(_full_p, _full_rule)
defabstract_eval(_copy_p, same_rule)
defabstract_eval(tril, same_rule)
defabstract_eval(triu, same_rule)
del _f
