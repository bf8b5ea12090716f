"""logsumexp: a primitive reduction, public as fnad.numpy.logsumexp and (the same function)
fnad.scipy.special.logsumexp. Its rules compute softmax(a) from `a` with fnad.numpy, so
fnad.numpy needs nothing from the layer above it."""

import numpy as np

from .. import numpy as fnp
from .._core.backend import asarray_like
from .._core.tracer import Tracer
from .._core.abstract import dtype_rule, reduction_rule
from .._batching.families import axis_batch
from .._core.rules import defabstract_eval, defbatch, defjvp, defvjp
from ._util import const_of, dtype_of, expand_reduced, maybe_any, norm_axes, shape, wrap

__all__ = ["logsumexp"]


def shift(a, axis):
    """max(a) over `axis` (kept), with 0 where it is not finite: no inf - inf. For complex
    `a` the max of the real parts (SciPy's): a real shift leaves the imaginary part of the
    result the principal one, in (-pi, pi]."""
    m = np.max(a.real if a.dtype.kind == "c" else a, axis=axis, keepdims=True)
    return np.where(np.isfinite(m), m, 0).astype(m.dtype, copy=False)


def _shift_of(a, axis):
    """shift of `a`'s values, a constant; staged through fnad.numpy inside jit."""
    v = const_of(a)
    if not isinstance(v, Tracer):
        return shift(v, axis)
    m = fnp.max(fnp.real(v) if np.dtype(v.dtype).kind == "c" else v, axis=axis, keepdims=True)
    return fnp.where(fnp.isfinite(m), m, fnp.zeros_like(m, shape=()))


def _lse_impl(a, axis=None, keepdims=False):
    m = shift(a, axis)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=norm_axes(axis, out.ndim))[()]


_lse_p = wrap(_lse_impl, "logsumexp")


def _weight_impl(a, axis=None):
    """softmax(a) over `axis`: logsumexp's gradient, computed from `a` (not from the rounded
    logsumexp: exp(a - ans) would lose |ans| ulps), 0 rather than NaN where the sum of
    exponentials is 0 (every entry -inf). One shift, one exp and one division in place."""
    e = a - shift(a, axis)
    e = np.array(e) if isinstance(e, np.generic) else e  # a 0-d result: an array to write
    e = np.exp(e, out=e) if e.dtype.kind in "fc" else np.exp(e)
    s = np.sum(e, axis=axis, keepdims=True)
    dead = s == 0
    if isinstance(dead, np.ndarray) and not dead.any():  # the usual case (on a device: no sync)
        e /= s
        return e
    e /= np.where(dead, np.ones_like(s), s)
    return np.where(dead, np.zeros_like(e, shape=()), e)


# logsumexp's gradient weight is one primitive (not a dozen staged calls): its own rules are
# those of softmax, written with fnad.numpy so that they differentiate again.
_weight_p = wrap(_weight_impl, "logsumexp_weight")


def _vjp_weight(g, ans, a, axis=None):
    return ans * (g - fnp.sum(g * ans, axis=axis, keepdims=True))


defvjp(_weight_p, _vjp_weight)
defjvp(_weight_p, _vjp_weight)  # the Jacobian is symmetric
defvjp(_lse_p, lambda g, ans, a, axis=None, keepdims=False:
       expand_reduced(g, shape(a), axis, keepdims) * _weight_p(a, axis))
defjvp(_lse_p, lambda t, ans, a, axis=None, keepdims=False:
       fnp.sum(t * _weight_p(a, axis), axis=axis, keepdims=keepdims))


def _arr(x):
    return x if isinstance(x, Tracer) else asarray_like(x)


def _axis_arg(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) over `axis`, computed stably, as `scipy.special.logsumexp`.

    Args:
      a: array; entries may be -inf (they contribute nothing).
      axis: None (all axes), an int or a tuple of ints.
      b: optional scale factors broadcast against `a` (may be negative or 0).
      keepdims: keep the reduced axes with size 1.
      return_sign: also return the sign of the sum (then the result is log|sum|); without
        it a negative sum gives NaN, as SciPy.

    The gradient is softmax(a) (times b), 0 rather than NaN where all entries are -inf.

    Example:
      fnad.numpy.logsumexp(np.array([1e4, 1e4]))   # 1e4 + log(2)
    """
    a, axis = _arr(a), _axis_arg(axis)
    if not shape(a):  # SciPy takes a 0-d `a` as a 1-element 1-d one (axis 0 or -1 works)
        a = fnp.reshape(a, (1,))
    if b is None and not return_sign:
        return _lse_p(a, axis, keepdims)
    b = fnp.ones_like(a) if b is None else _arr(b)
    full = np.broadcast_shapes(shape(a), shape(b))
    a = a if shape(a) == full else fnp.broadcast_to(a, full)
    m = _shift_of(a, axis)  # a constant shift: the result does not depend on it
    s = fnp.sum(b * fnp.exp(a - m), axis=axis, keepdims=True)
    sign = fnp.sign(const_of(s))
    dead = sign == 0  # a zero sum (all of a -inf, or b 0): -inf, with a 0 gradient as above
    live = fnp.where(dead, fnp.ones_like(s), s)
    if np.dtype(dtype_of(s)).kind == "c":  # log(s), or log|s| and the phase s / |s| (SciPy)
        out = (fnp.log(fnp.abs(live)) if return_sign else fnp.log(live)) + m
        sign = fnp.where(dead, fnp.zeros_like(s), live / fnp.abs(live)) if return_sign else sign
    else:
        out = fnp.log(fnp.abs(live)) + m
    if maybe_any(dead):
        out = fnp.where(dead, fnp.full_like(out, -np.inf), out)
    if not return_sign and np.dtype(dtype_of(s)).kind != "c":
        out = fnp.where(sign < 0, fnp.full_like(out, np.nan), out)
    if not keepdims:
        axes = norm_axes(axis, len(full))
        out = fnp.squeeze(out, axes)
        sign = fnp.squeeze(sign, axes)
    return (out, sign) if return_sign else out

# ----------------------------------------------------------------------------- abstract evaluation

defabstract_eval(_lse_p, reduction_rule(_lse_impl))
defbatch(_lse_p, axis_batch(_lse_p))
defabstract_eval(_weight_p, dtype_rule(_weight_impl))
defbatch(_weight_p, axis_batch(_weight_p))
