"""Reductions and their rules: sum, mean, max/min (ties share the gradient)."""

import numpy as np

from .. import numpy as fnp
from ..extend import defjvp, defjvp_linear, defvjp
from ._util import norm_axes, shape, wrap

sum = wrap(np.sum)
mean = wrap(np.mean)
amax = wrap(np.amax)
amin = wrap(np.amin)
max = wrap(np.max)
min = wrap(np.min)


def _expand_reduced(g, x_shape, axis, keepdims):
    """Reinsert reduced axes of size 1 so that `g` broadcasts against the input."""
    if keepdims:
        return g
    axes = norm_axes(axis, len(x_shape))
    kept = tuple(1 if i in axes else s for i, s in enumerate(x_shape))
    return g if shape(g) == kept else fnp.reshape(g, kept)


def _vjp_sum(g, ans, x, axis=None, dtype=None, out=None, keepdims=False, **kw):
    g = _expand_reduced(g, shape(x), axis, keepdims)
    return fnp.broadcast_to(g, shape(x))


def _vjp_mean(g, ans, x, axis=None, dtype=None, out=None, keepdims=False, **kw):
    x_shape = shape(x)
    n = int(np.prod([x_shape[a] for a in norm_axes(axis, len(x_shape))]))
    return _vjp_sum(g, ans, x, axis, keepdims=keepdims) / n


def _vjp_extreme(g, ans, x, axis=None, out=None, keepdims=False, **kw):
    x_shape = shape(x)
    ans_b = _expand_reduced(ans, x_shape, axis, keepdims)
    hit = fnp.equal(x, ans_b)
    count = fnp.sum(hit, axis=axis, keepdims=True)
    weight = fnp.where(hit, 1.0 / count, 0.0).astype(ans_b.dtype)
    return _vjp_sum(g, ans, x, axis, keepdims=keepdims) * weight


def _jvp_extreme(t, ans, x, axis=None, out=None, keepdims=False, **kw):
    x_shape = shape(x)
    ans_b = _expand_reduced(ans, x_shape, axis, keepdims)
    hit = fnp.equal(x, ans_b)
    count = fnp.sum(hit, axis=axis, keepdims=keepdims)
    return fnp.sum(fnp.where(hit, t, fnp.zeros_like(t)), axis=axis, keepdims=keepdims) / count


defvjp(sum, _vjp_sum)
defjvp_linear(sum)
defvjp(mean, _vjp_mean)
defjvp_linear(mean)
for _f in (amax, amin, max, min):
    defvjp(_f, _vjp_extreme)
    defjvp(_f, _jvp_extreme)
del _f
