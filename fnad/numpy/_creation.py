"""Array creation. Functions of shapes make plain arrays; `*_like` functions carry no
derivative; `array`/`asarray` of a list that holds traced values stack them."""

import numpy as np

from .. import numpy as fnp
from .._core.abstract import ShapedArray, same_rule
from .._core.backend import array_module, backend_of, is_cupy_array, is_device_array
from .._core.tracer import Tracer
from .._core.rules import as_primitive, defabstract_eval, defjvp_linear, defvjp
from ._util import wrap, wrap_nondiff

zeros = np.zeros
ones = np.ones
full = np.full
empty = np.empty
eye = np.eye
identity = np.identity
arange = np.arange
tri = np.tri
meshgrid = np.meshgrid
indices = np.indices
zeros_like = wrap_nondiff(np.zeros_like, "zeros_like")
ones_like = wrap_nondiff(np.ones_like, "ones_like")
empty_like = wrap_nondiff(np.empty_like, "empty_like")
full_like = wrap_nondiff(np.full_like, "full_like")
tril = wrap(np.tril)
triu = wrap(np.triu)

defvjp(tril, lambda g, ans, m, k=0: tril(g, k))
defjvp_linear(tril)
defvjp(triu, lambda g, ans, m, k=0: triu(g, k))
defjvp_linear(triu)


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
        return a if dtype is None else fnp.astype(a, dtype)
    if isinstance(a, (list, tuple)) and _holds_value(a):
        xp = array_module(*_values_in(a))  # plain items go to the values' device
        res = fnp.stack([asarray(x) if _holds_value(x) else _on(xp, x) for x in a])
        return res if dtype is None else fnp.astype(res, dtype)
    if is_cupy_array(a):
        return a if dtype is None else a.astype(dtype, copy=False)
    return np.asarray(a, dtype=dtype, order=order, copy=copy)


def array(object, dtype=None, *, copy=True, order="K", ndmin=0, like=None):
    """A new array from `object` (traced values and lists holding them are differentiable)."""
    if isinstance(object, Tracer) or (isinstance(object, (list, tuple))
                                      and _holds_value(object)):
        res = asarray(object, dtype)
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


for _f in (zeros_like, ones_like, empty_like, full_like):
    defabstract_eval(_f, _like_rule(as_primitive(_f).impl))
defabstract_eval(tril, same_rule)
defabstract_eval(triu, same_rule)
del _f
