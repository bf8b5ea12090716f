"""The further activations of `jax.nn` with JAX's definitions: elu, selu, celu, glu, swish,
relu6, hard_tanh, hard_sigmoid, hard_silu, log_sigmoid, soft_sign, mish, squareplus,
sparse_plus, sparse_sigmoid, standardize, logsumexp, identity.

Each is a composition of `fnad.numpy` functions, so grad, vmap and jit need nothing more.
"""

import fnad.numpy as fnp
import fnad.scipy.special as _special

from ._activations import silu, softplus

__all__ = ["elu", "selu", "celu", "glu", "swish", "relu6", "hard_tanh", "hard_sigmoid",
           "hard_silu", "hard_swish", "log_sigmoid", "soft_sign", "mish", "squareplus",
           "sparse_plus", "sparse_sigmoid", "standardize", "logsumexp", "identity"]

# SELU's constants (Klambauer et al., 2017), as in JAX and PyTorch
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def elu(x, alpha=1.0):
    """Exponential linear unit: `x` where `x > 0`, else `alpha * (exp(x) - 1)`.

    Example:
      elu(np.array([-1.0, 2.0]))   # [-0.6321, 2.]
    """
    pos = fnp.greater(x, 0)
    return fnp.where(pos, x, alpha * fnp.expm1(fnp.where(pos, 0.0, x)))


def selu(x):
    """Scaled ELU: `scale * elu(x, alpha)` with the self-normalising constants.

    Example:
      selu(np.array([1.0]))   # [1.0507]
    """
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def celu(x, alpha=1.0):
    """Continuously differentiable ELU: `max(x, 0) + alpha * expm1(min(x, 0) / alpha)`.

    Example:
      celu(np.array([-1.0]), alpha=2.0)   # [-0.7869]
    """
    return fnp.maximum(x, 0) + alpha * fnp.expm1(fnp.minimum(x, 0) / alpha)


def glu(x, axis=-1):
    """Gated linear unit: `x`'s halves `a, b` along `axis` give `a * sigmoid(b)`.

    Example:
      glu(np.ones((2, 4))).shape   # (2, 2)
    """
    n = x.shape[axis]
    if n % 2:
        raise ValueError(f"glu: axis {axis} of x (shape {tuple(x.shape)}) has odd size {n}; "
                         "it is split in two equal halves.")
    a, b = fnp.split(x, 2, axis=axis)
    return a * _special.expit(b)


def swish(x):
    """`x * sigmoid(x)` (JAX's name for `silu`)."""
    return silu(x)


def relu6(x):
    """`min(max(x, 0), 6)`.

    Example:
      relu6(np.array([-1.0, 7.0]))   # [0., 6.]
    """
    return fnp.minimum(fnp.maximum(x, 0), 6)


def hard_tanh(x):
    """`x` clipped to [-1, 1].

    Example:
      hard_tanh(np.array([-2.0, 0.5]))   # [-1., 0.5]
    """
    return fnp.where(fnp.greater(x, 1), 1, fnp.where(fnp.less(x, -1), -1, x))


def hard_sigmoid(x):
    """`relu6(x + 3) / 6`, a piecewise-linear sigmoid."""
    return relu6(x + 3.0) / 6.0


def hard_silu(x):
    """`x * hard_sigmoid(x)` (also `hard_swish`)."""
    return x * hard_sigmoid(x)


def hard_swish(x):
    """`x * hard_sigmoid(x)` (also `hard_silu`)."""
    return hard_silu(x)


def log_sigmoid(x):
    """`log(sigmoid(x))` = `-softplus(-x)`, without overflow.

    Example:
      log_sigmoid(np.zeros(1))   # [-0.6931]
    """
    return -softplus(-x, threshold=None)


def soft_sign(x):
    """`x / (|x| + 1)`."""
    return x / (fnp.abs(x) + 1)


def mish(x):
    """`x * tanh(softplus(x))`."""
    return x * fnp.tanh(softplus(x, threshold=None))


def squareplus(x, b=4):
    """`(x + sqrt(x**2 + b)) / 2`, a smooth ReLU."""
    return (x + fnp.sqrt(fnp.square(x) + b)) / 2


def sparse_plus(x):
    """0 for `x <= -1`, `x` for `x >= 1`, `(x + 1)**2 / 4` between."""
    return fnp.where(fnp.less_equal(x, -1), 0.0,
                     fnp.where(fnp.greater_equal(x, 1), x, fnp.square(x + 1) / 4))


def sparse_sigmoid(x):
    """`clip((x + 1) / 2, 0, 1)`, the derivative of `sparse_plus`."""
    return 0.5 * fnp.clip(x + 1.0, 0.0, 2.0)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None,
                algorithm="fast"):
    """`(x - mean) / sqrt(variance + epsilon)` along `axis` (JAX's `jax.nn.standardize`).

    Args:
      x: an array. axis: int or tuple of ints. mean, variance: given statistics, or None to
        compute them. epsilon: added to the variance. where: a boolean mask of the entries
        that count in the statistics. algorithm: "fast" (variance E[x**2] - E[x]**2, JAX's
        default, clipped at 0) or "stable" (E[(x - E[x])**2]).

    Example:
      standardize(np.array([[1.0, 3.0]]))   # [[-1., 1.]] (up to epsilon)
    """
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"standardize: algorithm {algorithm!r} is not 'fast' or 'stable'.")
    kw = {} if where is None else {"where": where}
    if mean is None:
        mean = fnp.mean(x, axis=axis, keepdims=True, **kw)
    if variance is None:
        if algorithm == "stable":
            variance = fnp.mean(fnp.square(x - mean), axis=axis, keepdims=True, **kw)
        else:
            variance = fnp.maximum(
                0.0, fnp.mean(fnp.square(x), axis=axis, keepdims=True, **kw) - fnp.square(mean))
    return (x - mean) / fnp.sqrt(variance + epsilon)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """`log(sum(b * exp(a)))` computed stably (`fnad.scipy.special.logsumexp`)."""
    return _special.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)


def identity(x):
    """`x` unchanged."""
    return x
