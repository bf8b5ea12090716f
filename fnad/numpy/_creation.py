"""Array creation. Functions of shapes make plain arrays; `*_like` functions carry no
derivative in the array they take the shape of; the values an array is made from are
differentiable and can be traced: `full`/`full_like`'s fill value, `linspace`/`logspace`'s
end points (and base), `meshgrid`'s vectors, `array`/`asarray`/`copy` of traced values (a
list holding traced values is stacked). On plain values each is NumPy's own function."""

import numpy as np

from .. import numpy as fnp
from .._core.abstract import ShapedArray, same_rule, xp_of
from .._core.backend import array_module, backend_of, is_cupy_array
from .._core.tracer import Tracer
from .._core.rules import as_primitive, defabstract_eval, defjvp_linear, defvjp, defvjp_all
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

defvjp(tril, lambda g, ans, m, k=0: tril(g, k))
defjvp_linear(tril)
defvjp(triu, lambda g, ans, m, k=0: triu(g, k))
defjvp_linear(triu)


# ----------------------------------------------------------------------------- traced values


def _full_impl(fill_value, shape, dtype=None, order="C"):
    return array_module(fill_value).full(shape, fill_value, dtype, order=order)


_full_p = wrap(_full_impl, "full")


def _shape_tuple(shape):
    return (int(shape),) if np.ndim(shape) == 0 else tuple(int(n) for n in shape)


def full(shape, fill_value, dtype=None, order="C", **kwargs):
    """An array of `shape` filled with `fill_value` (NumPy's `full`), differentiable and
    stageable in a traced fill value (which may be an array broadcasting to `shape`)."""
    if isinstance(fill_value, (list, tuple)) and _holds_tracer(fill_value):
        fill_value = asarray(fill_value)
    if isinstance(fill_value, Tracer):
        return _full_p(fill_value, _shape_tuple(shape), None if dtype is None else
                       np.dtype(dtype), order)
    return np.full(shape, fill_value, dtype, order, **kwargs)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    """An array of `a`'s shape and dtype filled with `fill_value` (NumPy's `full_like`):
    no derivative through `a`; differentiable and stageable in a traced fill value."""
    if isinstance(fill_value, (list, tuple)) and _holds_tracer(fill_value):
        fill_value = asarray(fill_value)
    if isinstance(fill_value, Tracer):
        out_shape = fnp.shape(a) if shape is None else _shape_tuple(shape)
        return _full_p(fill_value, out_shape, np.dtype(dtype if dtype is not None else
                                                       dtype_of(a)), "C")
    return _full_like_p(a, fill_value, dtype, order, subok, shape, **kwargs)


def _vjp_full(g, ans, fill, shape, dtype=None, order="C"):
    return fnp.astype(unbroadcast(g, fnp.shape(fill)), dtype_of(fill))


defvjp(_full_p, _vjp_full)
defjvp_linear(_full_p)


def _copy_impl(a):
    return a.copy()


_copy_p = wrap(_copy_impl, "copy")
defvjp(_copy_p, lambda g, ans, a: g)
defjvp_linear(_copy_p)


def copy(a, order="K", subok=False):
    """A new array with `a`'s values (NumPy's `copy`); on a traced value a `copy` operation,
    so that a jitted function hands out a fresh array where the eager one would."""
    if isinstance(a, Tracer):
        return _copy_p(a)
    if isinstance(a, (list, tuple)) and _holds_tracer(a):
        return asarray(a)  # stacking already makes a new array
    return array_module(a).copy(a, order=order) if hasattr(a, "dtype") else np.copy(
        a, order=order, subok=subok)


def _linspace_impl(start, stop, num, endpoint, dtype, axis):
    return array_module(start, stop).linspace(start, stop, num, endpoint, dtype=dtype,
                                              axis=axis)


_linspace_p = wrap(_linspace_impl, "linspace")


def _fractions(ans, num, endpoint, axis, dtype):
    """t with linspace = start + t * (stop - start): i / div along `axis`, shaped to
    broadcast against the result (the last sample is `stop` itself when endpoint)."""
    div = (num - 1) if endpoint else num
    t = np.arange(num, dtype=np.float64) / div if div > 0 else np.zeros(num)
    nd = len(fnp.shape(ans))
    ax = axis % nd if nd else 0
    return t.reshape((num,) + (1,) * (nd - 1 - ax)).astype(dtype_of(ans), copy=False)


def _vjp_linspace(g, ans, start, stop, num, endpoint, dtype, axis):
    t = _fractions(ans, num, endpoint, axis, dtype_of(g))
    ga, gb = g * (1 - t), g * t
    return (fnp.astype(_sum_to(ga, start, ans, axis), dtype_of(start)),
            fnp.astype(_sum_to(gb, stop, ans, axis), dtype_of(stop)))


def _sum_to(g, like, ans, axis):
    nd = len(fnp.shape(ans))
    return unbroadcast(fnp.sum(g, axis=axis % nd), fnp.shape(like))


def _jvp_linspace(tangents, ans, start, stop, num, endpoint, dtype, axis):
    t = _fractions(ans, num, endpoint, axis, dtype_of(ans))
    ta, tb = tangents[:2]
    out = 0.0
    for tan, w in ((ta, 1 - t), (tb, t)):
        if tan is not None:
            out = out + fnp.expand_dims(fnp.asarray(tan), axis) * w
    return fnp.astype(fnp.broadcast_to(out, fnp.shape(ans)), dtype_of(ans))


defvjp_all(_linspace_p, lambda g, ans, *a: _vjp_linspace(g, ans, *a))
as_primitive(_linspace_p).jvp_all = lambda ts, ans, *a: _jvp_linspace(ts, ans, *a)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, **kwargs):
    """`num` evenly spaced samples from `start` to `stop` (NumPy's `linspace`),
    differentiable and stageable in traced end points."""
    if not (_holds_tracer(start) or _holds_tracer(stop)):
        return np.linspace(start, stop, num, endpoint, retstep, dtype, axis, **kwargs)
    num = int(num)
    if num < 0:
        raise ValueError(f"fnad.numpy.linspace: number of samples, {num}, must be "
                         "non-negative.")
    out = _linspace_p(start, stop, num, bool(endpoint), None if dtype is None else
                      np.dtype(dtype), int(axis))
    if not retstep:
        return out
    div = (num - 1) if endpoint else num
    step = ((fnp.asarray(stop) - fnp.asarray(start)) / div if div > 0
            else fnp.full_like(fnp.asarray(stop) - fnp.asarray(start), np.nan))
    return out, step


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """`base ** linspace(start, stop)` (NumPy's `logspace`), differentiable and stageable in
    traced end points and base."""
    if not any(_holds_tracer(v) for v in (start, stop, base)):
        return np.logspace(start, stop, num, endpoint, base, dtype, axis)
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    if isinstance(base, Tracer) or np.ndim(base):
        base = fnp.expand_dims(fnp.asarray(base), axis)
    out = fnp.power(base, y)
    return out if dtype is None else fnp.astype(out, dtype)


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


def _holds_tracer(obj):
    if isinstance(obj, Tracer):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_holds_tracer(o) for o in obj)
    return False


def _tracers_in(obj):
    if isinstance(obj, Tracer):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tracers_in(o)


def _on(xp, x):
    """A plain item of a list holding traced values, made an array of `xp`: a Python number
    is filled in on the device (no copy from the host)."""
    if isinstance(x, (bool, int, float, complex)):
        return xp.full((), x, dtype=np.asarray(x).dtype)
    return xp.asarray(x)


def asarray(a, dtype=None, order=None, *, copy=None, like=None):
    """`a` as an array. Traced values pass through (cast if `dtype` differs); nested lists
    holding traced values are stacked, so their derivatives survive."""
    if isinstance(a, Tracer):
        return a if dtype is None else fnp.astype(a, dtype)
    if isinstance(a, (list, tuple)) and _holds_tracer(a):
        xp = array_module(*_tracers_in(a))  # plain items go to the traced values' device
        res = fnp.stack([asarray(x) if _holds_tracer(x) else _on(xp, x) for x in a])
        return res if dtype is None else fnp.astype(res, dtype)
    if is_cupy_array(a):
        return a if dtype is None else a.astype(dtype, copy=False)
    return np.asarray(a, dtype=dtype, order=order, copy=copy)


def array(object, dtype=None, *, copy=True, order="K", ndmin=0, like=None):
    """A new array from `object` (traced values and lists holding them are differentiable)."""
    if isinstance(object, Tracer) or (isinstance(object, (list, tuple))
                                      and _holds_tracer(object)):
        res = asarray(object, dtype)
        if copy and res is object:  # a traced array as it was: NumPy would copy it
            res = _copy_p(res)
        while fnp.ndim(res) < ndmin:
            res = fnp.expand_dims(res, 0)
        return res
    if is_cupy_array(object):
        return backend_of(object).xp.array(object, dtype=dtype, copy=copy, ndmin=ndmin)
    return np.array(object, dtype=dtype, copy=copy, order=order, ndmin=ndmin)

# ----------------------------------------------------------------------------- abstract evaluation


def _like_rule(fn):
    """`zeros_like(x, dtype=None, ..., shape=None)` and kin: x's shape unless `shape` is
    given; the dtype from `fn` on a 0-d stand-in."""
    def rule(x, *args, shape=None, **kwargs):
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


def _linspace_rule(start, stop, num, endpoint, dtype, axis):
    lo = np.zeros(getattr(start, "shape", ()), getattr(start, "dtype", np.result_type(start)))
    hi = np.zeros(getattr(stop, "shape", ()), getattr(stop, "dtype", np.result_type(stop)))
    out = np.linspace(lo, hi, 2, endpoint, dtype=dtype, axis=axis)
    shp = list(out.shape)
    shp[axis % out.ndim] = num
    return ShapedArray(tuple(shp), out.dtype, xp=xp_of([start, stop]))


defabstract_eval(_full_p, _full_rule)
defabstract_eval(_copy_p, same_rule)
defabstract_eval(_linspace_p, _linspace_rule)
defabstract_eval(tril, same_rule)
defabstract_eval(triu, same_rule)
del _f
