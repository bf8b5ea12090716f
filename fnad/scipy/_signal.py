"""N-d convolution and correlation (direct method), differentiable in both arguments.

One primitive, the full convolution out[n] = sum_k a[n - k] v[k]; its VJPs are again full
convolutions (with the other argument flipped) cut to the argument's shape, so every
derivative order works, and it is bilinear, so its JVP is itself. The modes 'same' and
'valid' are slices of the full result, and correlate(a, v) = convolve(a, flip(v)).
"""

import numpy as np

from .. import numpy as fnp
from .._core.backend import array_module
from .._core.tracer import Tracer
from .._core.rules import defjvp_linear, defvjp
from .._core.abstract import ShapedArray, xp_of
from .._core.rules import defabstract_eval
from ..numpy._util import shape, wrap


def _conv_full_impl(a, v):
    """The full n-d convolution, looping over the entries of the smaller operand."""
    xp = array_module(a, v)
    if a.size < v.size:
        a, v = v, a
    out_shape = tuple(n + k - 1 for n, k in zip(a.shape, v.shape))
    out = xp.zeros(out_shape, dtype=np.result_type(a.dtype, v.dtype))
    for k in np.ndindex(*v.shape):
        out[tuple(slice(i, i + n) for i, n in zip(k, a.shape))] += v[k] * a
    return out


_conv_full_p = wrap(_conv_full_impl, "convolve_full")


def _flip(x):
    return fnp.flip(x, axis=tuple(range(len(shape(x))))) if shape(x) else x


def _cut(x, starts, sizes):
    return x[tuple(slice(s, s + n) for s, n in zip(starts, sizes))]


def _vjp_conv(g, other, mine_shape):
    full = _conv_full_p(g, _flip(other))
    return _cut(full, [k - 1 for k in shape(other)], mine_shape)


defvjp(_conv_full_p, lambda g, ans, a, v: _vjp_conv(g, v, shape(a)),
       lambda g, ans, a, v: _vjp_conv(g, a, shape(v)))
defjvp_linear(_conv_full_p, argnums=(0, 1))


def _check(in1, in2, mode, fname):
    in1 = in1 if isinstance(in1, Tracer) else np.asarray(in1)
    in2 = in2 if isinstance(in2, Tracer) else np.asarray(in2)
    s1, s2 = shape(in1), shape(in2)
    if len(s1) != len(s2):
        raise ValueError(f"fnad.scipy.signal.{fname}: in1 and in2 should have the same "
                         f"dimensionality, got shapes {s1} and {s2}; reshape one of them.")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"fnad.scipy.signal.{fname}: mode must be 'full', 'same' or 'valid', "
                         f"got {mode!r}.")
    if mode == "valid" and not (all(a >= b for a, b in zip(s1, s2))
                                or all(b >= a for a, b in zip(s1, s2))):
        raise ValueError(f"fnad.scipy.signal.{fname}: for 'valid' mode one input must be at "
                         f"least as large as the other in every dimension, got {s1} and {s2}.")
    if 0 in s1 or 0 in s2:
        raise ValueError(f"fnad.scipy.signal.{fname}: empty inputs (shapes {s1}, {s2}).")
    return in1, in2


def _convolve(in1, in2, mode):
    s1, s2 = shape(in1), shape(in2)
    if not s1:
        return in1 * in2
    full = _conv_full_p(in1, in2)
    if mode == "full":
        return full
    if mode == "same":
        return _cut(full, [(k - 1) // 2 for k in s2], s1)
    return _cut(full, [min(n, k) - 1 for n, k in zip(s1, s2)],
                [abs(n - k) + 1 for n, k in zip(s1, s2)])


def convolve(in1, in2, mode="full", method="auto"):
    """The n-d convolution of in1 and in2, as `scipy.signal.convolve`.

    Args:
      in1, in2: arrays of the same number of dimensions.
      mode: 'full' (every overlap), 'same' (in1's shape, centred) or 'valid' (complete
        overlaps only).
      method: accepted for SciPy compatibility; the direct method is always used.

    Differentiable in both arguments, to any order.

    Example:
      fnad.scipy.signal.convolve(np.array([1.0, 2.0]), np.array([1.0, 1.0]))   # [1, 3, 2]
    """
    in1, in2 = _check(in1, in2, mode, "convolve")
    return _convolve(in1, in2, mode)


def correlate(in1, in2, mode="full", method="auto"):
    """The n-d cross-correlation z[k] = sum_l in1[l] in2[l - k + N - 1], as
    `scipy.signal.correlate` (real inputs): convolve(in1, in2 flipped on every axis).

    Example:
      fnad.scipy.signal.correlate(x, kernel, mode="valid")
    """
    in1, in2 = _check(in1, in2, mode, "correlate")
    if mode == "valid" and any(k > n for n, k in zip(shape(in1), shape(in2))):
        # SciPy swaps the inputs here, which reverses the result
        return _flip(_convolve(in2, _flip(in1), mode))
    return _convolve(in1, _flip(in2), mode)


__all__ = ["convolve", "correlate"]

# ----------------------------------------------------------------------------- abstract evaluation


def _conv_full_aval(a, v):
    out = tuple(n + k - 1 for n, k in zip(a.shape, v.shape))
    return ShapedArray(out, np.result_type(a.dtype, v.dtype), xp=xp_of((a, v)))


defabstract_eval(_conv_full_p, _conv_full_aval)
