"""Array creation. Functions of shapes make plain arrays; `*_like` functions carry no
derivative; `array`/`asarray` of a list that holds traced values stack them."""

import numpy as np

from .. import numpy as fnp
from .._core.abstract import ShapedArray, same_rule
from .._core.backend import array_module, backend_of, is_cupy_array
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
