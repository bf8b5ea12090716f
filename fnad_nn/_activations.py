"""Activations: relu, leaky_relu, gelu, silu, sigmoid, tanh, softplus, softmax,
log_softmax, one_hot.

The frequent ones are primitives whose rules are written with `fnad.numpy`, so their
backward passes cost one or two elementwise passes and still differentiate again.
"""

import math

import numpy as np

import fnad.numpy as fnp
import fnad.scipy.special as _special
from fnad.extend import (array_module, as_primitive, defabstract_eval, defbatch, defjvp, defvjp,
                         dtype_rule, elementwise_batch, primitive, unbroadcast)
from fnad.kernels import cpu as _cpu
from fnad.kernels.cpu import parallel_rows
from fnad.scipy.special import erf, expit

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


def _softplus_impl(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


_relu = primitive(_relu_impl, "relu")
_softplus = primitive(_softplus_impl, "softplus")


# relu's derivative is the mask ans > 0 (0 at 0, as PyTorch): a comparison, so it carries no
# derivative itself; multiplying by the bool mask keeps g's dtype in one pass.
defvjp(_relu, _relu_vjp)
defjvp(_relu, lambda t, ans, x: t * fnp.greater(ans, 0))
defbatch(_relu, elementwise_batch(_relu))
defvjp(_softplus, lambda g, ans, x: g * expit(x))
defjvp(_softplus, lambda t, ans, x: t * expit(x))
defbatch(_softplus, elementwise_batch(_softplus))

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
    return expit(x)


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
    return x * expit(x)


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
    """Softmax along `axis`, shifted by the maximum so it never overflows
    (`fnad.scipy.special.softmax` with a last-axis default).

    Args:
      x: array of any shape.
      axis: the axis that sums to one.

    Returns:
      An array shaped like `x`. A slice of all -inf has no distribution and gives NaN, as
      `torch.softmax` and SciPy; for attention, `scaled_dot_product_attention` defines a
      fully masked row as zeros instead.

    Example:
      softmax(np.array([0.0, 0.0]))   # [0.5, 0.5]
    """
    return _special.softmax(x, axis)


def log_softmax(x, axis=-1):
    """`x - logsumexp(x, axis)`, computed stably (`fnad.scipy.special.log_softmax` with a
    last-axis default).

    Args:
      x: array of any shape.
      axis: the normalised axis.

    Returns:
      An array shaped like `x`.

    Example:
      log_softmax(np.array([0.0, 0.0]))   # [-0.6931, -0.6931]
    """
    return _special.log_softmax(x, axis)


def one_hot(labels, num_classes, *, dtype=np.float32, axis=-1):
    """One-hot encoding of integer labels along a new axis (no derivative).

    Args:
      labels: integer array of any shape; out-of-range labels (e.g. -100) give all-zero rows.
      num_classes: size of the new axis.
      dtype: output dtype.
      axis: where the new axis goes (the last by default, as in JAX).

    Returns:
      An array of shape `labels.shape + (num_classes,)` (for axis=-1).

    Example:
      one_hot(np.array([0, 2]), 3)   # [[1, 0, 0], [0, 0, 1]]
    """
    xp = array_module(labels)
    out = (as_array(xp, labels)[..., None] == xp.arange(num_classes)).astype(dtype)
    return out if axis in (-1, out.ndim - 1) else xp.moveaxis(out, -1, axis)


# ----------------------------------------------------------------------------- exact GELU
# float64 goes through fnad.scipy.special.erf; float32 through one branch-free erfc fit.

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
    x = np.asarray(x, order="C")  # not ascontiguousarray, which makes a 0-d array 1-d
    xf = x.reshape(-1)
    out = np.empty_like(xf)
    for i in range(0, xf.size, _BLOCK):
        fill(xf[i:i + _BLOCK], out[i:i + _BLOCK])
    return out.reshape(x.shape)


def _phi_impl(x):
    """The standard normal CDF. float32 uses one branch-free erfc fit (float32-accurate, and
    accurate relative to Phi itself in the lower tail), block by block so the dozen passes
    run in cache; float64 (and any dtype on a device) uses Cody's erf."""
    x = x if array_module(x) is not np else np.asarray(x)
    if x.dtype != np.float32 or type(x) is not np.ndarray:
        return 0.5 * (1 + erf(x * _INV_SQRT2))
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
    x = x if array_module(x) is not np else np.asarray(x)
    y = _cpu.gelu(x)  # one pass on every core (fnad.kernels.cpu), where it applies
    if y is not None:
        return y
    if x.dtype == np.float32 and type(x) is np.ndarray:  # the blocked pass is NumPy's
        return _blocks(x, _gelu32_block)
    return x * _phi_impl(x)


_phi = primitive(_phi_impl, "normal_cdf")
defvjp(_phi, lambda g, ans, x: g * (fnp.exp(-0.5 * x * x) * _INV_SQRT_2PI))
defjvp(_phi, lambda t, ans, x: t * (fnp.exp(-0.5 * x * x) * _INV_SQRT_2PI))
defbatch(_phi, elementwise_batch(_phi))


def _gelu_d(x):
    # Phi(x) + x phi(x)
    if type(x) is np.ndarray and x.dtype == np.float32:  # plain float32: one blocked pass
        return _blocks(x, _gelu_d32_block)
    return _phi(x) + x * fnp.exp(-0.5 * x * x) * _INV_SQRT_2PI


def _gelu_grad_mul_impl(g, x):
    """g * GELU'(x): the cotangent (and tangent) of exact GELU in one pass where the CPU
    kernel applies."""
    y = _cpu.gelu_grad_mul(g, x)
    return y if y is not None else g * _gelu_d(x)


def _gelu_dd(x):
    # GELU''(x) = phi(x) (2 - x^2)
    return fnp.exp(-0.5 * x * x) * _INV_SQRT_2PI * (2 - x * x)


_gelu_exact = primitive(_gelu_exact_impl, "gelu")
_gelu_grad_mul = primitive(_gelu_grad_mul_impl, "gelu_grad_mul")
defvjp(_gelu_exact, lambda g, ans, x: _gelu_grad_mul(g, x))
defjvp(_gelu_exact, lambda t, ans, x: _gelu_grad_mul(t, x))
defbatch(_gelu_exact, elementwise_batch(_gelu_exact))
defbatch(_gelu_grad_mul, elementwise_batch(_gelu_grad_mul))
defvjp(_gelu_grad_mul,
       lambda c, ans, g, x: unbroadcast(_gelu_grad_mul(c, x), fnp.shape(g)),
       lambda c, ans, g, x: unbroadcast(c * g * _gelu_dd(x), fnp.shape(x)))
defjvp(_gelu_grad_mul,
       lambda t, ans, g, x: _gelu_grad_mul(t, x),
       lambda t, ans, g, x: t * g * _gelu_dd(x))


# ----------------------------------------------------------------------------- abstract evaluation
# Each keeps its input's shape; the dtype is the implementation's on a size-1 stand-in.

defabstract_eval(_relu, dtype_rule(_relu_impl))
defabstract_eval(_softplus, dtype_rule(_softplus_impl))
defabstract_eval(_phi, dtype_rule(_phi_impl))
defabstract_eval(_gelu_exact, dtype_rule(_gelu_exact_impl))
defabstract_eval(_gelu_grad_mul, lambda g, x: as_primitive(fnp.multiply).abstract_eval(g, x))
