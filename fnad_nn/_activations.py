"""Activations: relu, leaky_relu, gelu, silu, sigmoid, tanh, softplus, softmax,
log_softmax, one_hot.

The frequent ones are primitives whose rules are written with `fnad.numpy`, so their
backward passes cost one or two elementwise passes and still differentiate again.
"""

import math

import numpy as np

import fnad.numpy as fnp
from fnad._backend import array_module
from fnad.extend import defabstract_eval, defjvp, defvjp, dtype_rule, primitive

from ._parallel import parallel_rows
from ._util import as_array

__all__ = ["relu", "leaky_relu", "gelu", "silu", "sigmoid", "tanh", "softplus", "softmax",
           "log_softmax", "one_hot"]




# ----------------------------------------------------------------------------- primitives

def _plain(*arrays):
    return all(type(a) is np.ndarray for a in arrays)


def _relu_impl(x):
    if not (_plain(x) and x.ndim):
        return np.maximum(x, 0)
    out = np.empty_like(x)
    parallel_rows(lambda lo, hi: np.maximum(x[lo:hi], 0, out=out[lo:hi]), len(x), x.nbytes)
    return out


def _relu_vjp(g, ans, x):
    if not (_plain(g, ans) and g.shape == ans.shape and g.ndim):
        return g * fnp.greater(ans, 0)
    out = np.empty_like(g)
    parallel_rows(lambda lo, hi: np.multiply(g[lo:hi], ans[lo:hi] > 0, out=out[lo:hi]),
                  len(g), g.nbytes)
    return out


def _sigmoid_impl(x):
    # exp(-|x|) never overflows; both branches agree with 1 / (1 + exp(-x))
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _softplus_impl(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _softmax_impl(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    e /= np.sum(e, axis=axis, keepdims=True)
    return e


def _log_softmax_impl(x, axis=-1):
    s = x - np.max(x, axis=axis, keepdims=True)
    s -= np.log(np.sum(np.exp(s), axis=axis, keepdims=True))
    return s


_relu = primitive(_relu_impl, "relu")
_sigmoid = primitive(_sigmoid_impl, "sigmoid")
_softplus = primitive(_softplus_impl, "softplus")
_softmax = primitive(_softmax_impl, "softmax")
_log_softmax = primitive(_log_softmax_impl, "log_softmax")


# relu's derivative is the mask ans > 0 (0 at 0, as PyTorch): a comparison, so it carries no
# derivative itself; multiplying by the bool mask keeps g's dtype in one pass.
defvjp(_relu, _relu_vjp)
defjvp(_relu, lambda t, ans, x: t * fnp.greater(ans, 0))
defvjp(_sigmoid, lambda g, ans, x: g * (ans * (1 - ans)))
defjvp(_sigmoid, lambda t, ans, x: t * (ans * (1 - ans)))
defvjp(_softplus, lambda g, ans, x: g * sigmoid(x))
defjvp(_softplus, lambda t, ans, x: t * sigmoid(x))


def _vjp_softmax(g, ans, x, axis=-1):
    return ans * (g - fnp.sum(g * ans, axis=axis, keepdims=True))


def _vjp_log_softmax(g, ans, x, axis=-1):
    return g - fnp.exp(ans) * fnp.sum(g, axis=axis, keepdims=True)


defvjp(_softmax, _vjp_softmax)
defjvp(_softmax, _vjp_softmax)  # the Jacobian is symmetric
defvjp(_log_softmax, _vjp_log_softmax)
defjvp(_log_softmax, lambda t, ans, x, axis=-1: t - fnp.sum(fnp.exp(ans) * t, axis=axis,
                                                            keepdims=True))

# ----------------------------------------------------------------------------- public


def relu(x):
    """Rectified linear unit `max(x, 0)`; its derivative at 0 is 0, as in PyTorch.

    Args:
      x: array of any shape.

    Returns:
      An array shaped like `x`.

    Example:
      relu(np.array([-1.0, 2.0]))   # [0., 2.]
    """
    return _relu(x)


def leaky_relu(x, negative_slope=0.01):
    """`x` where `x > 0`, else `negative_slope * x` (PyTorch's default slope 0.01).

    Args:
      x: array of any shape.
      negative_slope: slope for negative inputs.

    Returns:
      An array shaped like `x`.

    Example:
      leaky_relu(np.array([-1.0, 2.0]), 0.1)   # [-0.1, 2.]
    """
    return fnp.where(fnp.greater(x, 0), x, x * negative_slope)


def sigmoid(x):
    """Logistic function `1 / (1 + exp(-x))`, evaluated without overflow.

    Args:
      x: array of any shape.

    Returns:
      An array shaped like `x`, in (0, 1).

    Example:
      sigmoid(np.zeros(2))   # [0.5, 0.5]
    """
    return _sigmoid(x)


def tanh(x):
    """Hyperbolic tangent (`fnad.numpy.tanh`).

    Args:
      x: array of any shape.

    Returns:
      An array shaped like `x`.

    Example:
      tanh(np.zeros(2))   # [0., 0.]
    """
    return fnp.tanh(x)


def silu(x):
    """Sigmoid-weighted linear unit (swish) `x * sigmoid(x)`.

    Args:
      x: array of any shape.

    Returns:
      An array shaped like `x`.

    Example:
      silu(np.array([0.0, 1.0]))   # [0., 0.7311]
    """
    return x * _sigmoid(x)


def softplus(x, beta=1.0, threshold=20.0):
    """`log(1 + exp(beta * x)) / beta`, linear above `threshold` (as PyTorch's Softplus).

    Args:
      x: array of any shape.
      beta: sharpness.
      threshold: where `beta * x` exceeds it, the output is `x` itself.

    Returns:
      An array shaped like `x`.

    Example:
      softplus(np.zeros(1))   # [0.6931]
    """
    bx = x * beta if beta != 1.0 else x
    sp = _softplus(bx)
    if beta != 1.0:
        sp = sp / beta
    if threshold is None:
        return sp
    return fnp.where(fnp.greater(bx, threshold), x, sp)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _gelu_tanh(x):
    # PyTorch's approximate="tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    inner = _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1 + fnp.tanh(inner))


def gelu(x, approximate=False):
    """Gaussian error linear unit `x * Phi(x)`.

    Args:
      x: array of any shape.
      approximate: False for the exact erf form; True or "tanh" for PyTorch's tanh
        approximation.

    Returns:
      An array shaped like `x`.

    Example:
      gelu(np.array([1.0]))                 # [0.8413]
      gelu(np.array([1.0]), approximate=True)
    """
    if approximate in (True, "tanh"):
        return _gelu_tanh(x)
    if approximate not in (False, "none", None):
        raise ValueError(f"gelu: approximate={approximate!r}; use False (exact) or 'tanh'.")
    return _gelu_exact(x)


def softmax(x, axis=-1):
    """Softmax along `axis`, shifted by the maximum so it never overflows.

    Args:
      x: array of any shape.
      axis: the axis that sums to one.

    Returns:
      An array shaped like `x`.

    Example:
      softmax(np.array([0.0, 0.0]))   # [0.5, 0.5]
    """
    return _softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    """`x - logsumexp(x, axis)`, computed stably.

    Args:
      x: array of any shape.
      axis: the normalised axis.

    Returns:
      An array shaped like `x`.

    Example:
      log_softmax(np.array([0.0, 0.0]))   # [-0.6931, -0.6931]
    """
    return _log_softmax(x, axis=axis)


def one_hot(labels, num_classes, *, dtype=np.float32):
    """One-hot encoding of integer labels along a new last axis (no derivative).

    Args:
      labels: integer array of any shape; out-of-range labels (e.g. -100) give all-zero rows.
      num_classes: size of the new axis.
      dtype: output dtype.

    Returns:
      An array of shape `labels.shape + (num_classes,)`.

    Example:
      one_hot(np.array([0, 2]), 3)   # [[1, 0, 0], [0, 0, 1]]
    """
    xp = array_module(labels)
    return (as_array(xp, labels)[..., None] == xp.arange(num_classes)).astype(dtype)


# ----------------------------------------------------------------------------- exact GELU
# erf comes from fnad.scipy.special when it is there; otherwise a private erf primitive
# (W. J. Cody's rational approximations, relative error below 1e-15).

def _erf_impl(x):
    x = np.asarray(x)
    out = np.empty_like(x)
    a = np.abs(x)
    small = a < 0.5
    mid = (a >= 0.5) & (a < 4.0)
    big = ~(small | mid)
    if small.any():
        z = x[small]
        out[small] = z * _poly(_ERF_A, z * z) / _poly(_ERF_B, z * z)
    if mid.any():
        z = a[mid]
        r = np.exp(-z * z) * _poly(_ERF_C, z) / _poly(_ERF_D, z)
        out[mid] = np.copysign(1 - r, x[mid])
    if big.any():
        z = a[big]
        iz2 = 1 / (z * z)
        r = iz2 * _poly(_ERF_P, iz2) / _poly(_ERF_Q, iz2)
        r = np.exp(-z * z) / z * (1 / math.sqrt(math.pi) + r)
        out[big] = np.copysign(1 - r, x[big])
    return out


def _poly(c, z):
    r = np.full_like(z, c[0])
    for ci in c[1:]:
        r = r * z + ci
    return r


# Coefficients from W. J. Cody, "Rational Chebyshev approximations for the error function"
# (Math. Comp. 1969), highest degree first.
_ERF_A = [1.857777061846031526730e-1, 3.161123743870565596947e0, 1.138641541510501556495e2,
          3.774852376853020208137e2, 3.209377589138469472562e3]
_ERF_B = [1.0, 2.360129095234412093499e1, 2.440246379344441733056e2,
          1.282616526077372275645e3, 2.844236833439170622273e3]
_ERF_C = [2.15311535474403846343e-8, 5.64188496988670089180e-1, 8.88314979438837594118e0,
          6.61191906371416294775e1, 2.98635138197400131132e2, 8.81952221241769090411e2,
          1.71204761263407058314e3, 2.05107837782607146532e3, 1.23033935479799725272e3]
_ERF_D = [1.0, 1.57449261107098347253e1, 1.17693950891312499305e2, 5.37181101862009857509e2,
          1.62138957456669018874e3, 3.29079923573345962678e3, 4.36261909014324715820e3,
          3.43936767414372163696e3, 1.23033935480374942043e3]
_ERF_P = [1.63153871373020978498e-2, 3.05326634961232344035e-1, 3.60344899949804439429e-1,
          1.25781726111229246204e-1, 1.60837851487422766278e-2, 6.58749161529837803157e-4]
_ERF_Q = [1.0, 2.56852019228982242072e0, 1.87295284992346725209e0, 5.27905102951428412248e-1,
          6.05183413124413191178e-2, 2.33520497626869185443e-3]
_ERF_P = [-c for c in _ERF_P]


# Coefficients of the Chebyshev fit erfc(z) ~ t exp(-z^2 + P(t)), t = 1 / (1 + z / 2)
# (Numerical Recipes' erfcc; relative error below 1.2e-7 for all z >= 0), lowest degree first.
_ERFC_F32 = [-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
             -1.13520398, 1.48851587, -0.82215223, 0.17087277]


_BLOCK = 1 << 15  # float32 elements per block: the temporaries of a block stay in cache


def _phi32_block(x, out):
    """Phi(x) of a float32 block into `out` (same shape), in place on two temporaries."""
    z = np.abs(x)
    z *= np.float32(_INV_SQRT2)
    t = z * np.float32(0.5)
    t += np.float32(1)
    np.reciprocal(t, out=t)
    acc = out
    acc.fill(_ERFC_F32[-1])
    for c in reversed(_ERFC_F32[:-1]):
        acc *= t
        acc += np.float32(c)
    z *= z
    acc -= z
    np.exp(acc, out=acc)
    acc *= t
    acc *= np.float32(0.5)  # acc = Phi(-|x|)
    # Phi(x) = acc + [x >= 0] * (1 - 2 acc): exactly acc for x < 0 (the lower tail keeps its
    # relative accuracy), 1 - acc otherwise. Arithmetic on the mask, because np.where and
    # masked ufuncs branch per element and cost several passes on random signs.
    np.multiply(acc, np.float32(-2), out=t)
    t += np.float32(1)
    t *= x >= 0
    acc += t
    return acc, z


def _blocks(x, fill):
    """Apply `fill(x_block, out_block)` over C-ordered blocks of float32 `x`; a new array."""
    x = np.ascontiguousarray(x)
    xf = x.reshape(-1)
    out = np.empty_like(xf)
    for i in range(0, xf.size, _BLOCK):
        fill(xf[i:i + _BLOCK], out[i:i + _BLOCK])
    return out.reshape(x.shape)


def _phi_impl(x):
    """The standard normal CDF. float32 uses one branch-free erfc fit (float32-accurate, and
    accurate relative to Phi itself in the lower tail), block by block so the dozen passes
    run in cache; float64 uses Cody's erf."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        return 0.5 * (1 + _erf_impl(x * _INV_SQRT2))
    return _blocks(x, _phi32_block)


def _gelu32_block(x, out):
    _phi32_block(x, out)
    out *= x


def _gelu_d32_block(x, out):
    # Phi(x) + x phi(x), with phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
    _, z = _phi32_block(x, out)  # z = x^2 / 2
    np.negative(z, out=z)
    np.exp(z, out=z)
    z *= x
    z *= np.float32(_INV_SQRT_2PI)
    out += z


def _gelu_exact_impl(x):
    x = np.asarray(x)
    if x.dtype == np.float32:
        return _blocks(x, _gelu32_block)
    return x * _phi_impl(x)


_phi = primitive(_phi_impl, "normal_cdf")
defvjp(_phi, lambda g, ans, x: g * (fnp.exp(-0.5 * x * x) * _INV_SQRT_2PI))
defjvp(_phi, lambda t, ans, x: t * (fnp.exp(-0.5 * x * x) * _INV_SQRT_2PI))


def _gelu_d(x):
    # Phi(x) + x phi(x)
    if type(x) is np.ndarray and x.dtype == np.float32:  # plain float32: one blocked pass
        return _blocks(x, _gelu_d32_block)
    return _phi(x) + x * fnp.exp(-0.5 * x * x) * _INV_SQRT_2PI


_erf_p = primitive(_erf_impl, "erf")
_gelu_exact = primitive(_gelu_exact_impl, "gelu")
defvjp(_erf_p, lambda g, ans, x: g * (2 / math.sqrt(math.pi)) * fnp.exp(-x * x))
defjvp(_erf_p, lambda t, ans, x: t * (2 / math.sqrt(math.pi)) * fnp.exp(-x * x))
defvjp(_gelu_exact, lambda g, ans, x: g * _gelu_d(x))
defjvp(_gelu_exact, lambda t, ans, x: t * _gelu_d(x))


def _erf(x):
    return _erf_p(x)

# ----------------------------------------------------------------------------- abstract evaluation
# Each keeps its input's shape; the dtype is the implementation's on a size-1 stand-in.

defabstract_eval(_relu, dtype_rule(_relu_impl))
defabstract_eval(_sigmoid, dtype_rule(_sigmoid_impl))
defabstract_eval(_softplus, dtype_rule(_softplus_impl))
defabstract_eval(_softmax, dtype_rule(_softmax_impl))
defabstract_eval(_log_softmax, dtype_rule(_log_softmax_impl))
defabstract_eval(_phi, dtype_rule(_phi_impl))
defabstract_eval(_erf_p, dtype_rule(_erf_impl))
defabstract_eval(_gelu_exact, dtype_rule(_gelu_exact_impl))
