"""Initialisers with PyTorch's formulas, drawing their numbers from `fnad.random`.

Every initialiser is `init(key, shape, dtype=np.float32, **options) -> array`. Fans follow
JAX's convention: `in_axis` and `out_axis` name the input and output axes (by default the
last two, `(d_in, d_out)` as in `init_linear`); the other axes form the receptive field.
For a PyTorch-layout weight `(out, in, kh, kw)` pass `in_axis=1, out_axis=0`.
"""

import math

import numpy as np

import fnad.random as random

__all__ = ["zeros", "ones", "constant", "normal", "uniform", "truncated_normal",
           "kaiming_uniform", "kaiming_normal", "he_uniform", "he_normal", "xavier_uniform",
           "xavier_normal", "glorot_uniform", "glorot_normal", "calculate_gain", "fans",
           "torch_default_uniform"]


def _random():
    return random


def _shape(shape):
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def fans(shape, in_axis=-2, out_axis=-1):
    """`(fan_in, fan_out)` of a weight of `shape` (PyTorch's rule, JAX's axis convention).

    Args:
      shape: the weight's shape; 1-D shapes count as fan_in = fan_out = shape[0].
      in_axis, out_axis: the input and output axes.

    Returns:
      A pair of ints.

    Example:
      fans((4, 3))                                 # (4, 3)
      fans((8, 2, 3, 3), in_axis=1, out_axis=0)    # (18, 72)
    """
    shape = _shape(shape)
    if len(shape) < 2:
        n = shape[0] if shape else 1
        return n, n
    nd = len(shape)
    ia, oa = in_axis % nd, out_axis % nd
    field = int(np.prod([s for i, s in enumerate(shape) if i not in (ia, oa)]))
    return shape[ia] * field, shape[oa] * field


def calculate_gain(nonlinearity, param=None):
    """PyTorch's recommended gain for a nonlinearity.

    Args:
      nonlinearity: "linear", "conv2d", "sigmoid", "tanh", "relu", "leaky_relu", "selu", ...
      param: the negative slope for "leaky_relu" (default 0.01).

    Returns:
      A float.

    Example:
      calculate_gain("relu")   # 1.4142
    """
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                        "conv_transpose2d", "conv_transpose3d", "sigmoid", "identity"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; use one of "
                     "linear, sigmoid, tanh, relu, leaky_relu, selu.")


def zeros(key, shape, dtype=np.float32):
    """Zeros (the key is ignored). Example: `zeros(key, (3,))`."""
    return np.zeros(_shape(shape), dtype)


def ones(key, shape, dtype=np.float32):
    """Ones (the key is ignored). Example: `ones(key, (3,))`."""
    return np.ones(_shape(shape), dtype)


def constant(key, shape, dtype=np.float32, *, value=0.0):
    """A constant array (the key is ignored). Example: `constant(key, (3,), value=0.5)`."""
    return np.full(_shape(shape), value, dtype)


def normal(key, shape, dtype=np.float32, *, mean=0.0, std=1.0):
    """Normal `N(mean, std**2)` samples.

    Args:
      key: a `fnad.random.PRNGKey`.
      shape, dtype: of the result.
      mean, std: the distribution's parameters.

    Returns:
      An array of `shape`.

    Example:
      w = normal(fnad.random.PRNGKey(0), (3, 4), std=0.02)
    """
    x = _random().normal(key, _shape(shape), dtype)
    return (x * std + mean).astype(dtype)


def uniform(key, shape, dtype=np.float32, *, low=0.0, high=1.0):
    """Uniform samples in `[low, high)`.

    Args:
      key: a `fnad.random.PRNGKey`.
      shape, dtype: of the result.
      low, high: the bounds.

    Returns:
      An array of `shape`.

    Example:
      w = uniform(fnad.random.PRNGKey(0), (3, 4), low=-0.1, high=0.1)
    """
    return _random().uniform(key, _shape(shape), dtype, minval=low, maxval=high)


def truncated_normal(key, shape, dtype=np.float32, *, mean=0.0, std=1.0, a=-2.0, b=2.0):
    """Normal `N(mean, std**2)` truncated to `[a, b]` (absolute bounds, as PyTorch's
    `trunc_normal_`).

    Args:
      key: a `fnad.random.PRNGKey`.
      shape, dtype: of the result.
      mean, std: of the untruncated normal.
      a, b: the absolute truncation bounds.

    Returns:
      An array of `shape` with values in `[a, b]`.

    Example:
      w = truncated_normal(fnad.random.PRNGKey(0), (3, 4), std=0.02, a=-0.04, b=0.04)
    """
    lo, hi = (a - mean) / std, (b - mean) / std
    z = _random().truncated_normal(key, lo, hi, _shape(shape), dtype)
    return (z * std + mean).astype(dtype)


def _fan(shape, mode, in_axis, out_axis):
    fan_in, fan_out = fans(shape, in_axis, out_axis)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"kaiming: mode={mode!r}; use 'fan_in' or 'fan_out'.")
    return fan_in if mode == "fan_in" else fan_out


def kaiming_uniform(key, shape, dtype=np.float32, *, a=0.0, mode="fan_in",
                    nonlinearity="leaky_relu", in_axis=-2, out_axis=-1):
    """He/Kaiming uniform: `U(-bound, bound)`, `bound = gain * sqrt(3 / fan)` (PyTorch's
    `kaiming_uniform_`).

    Args:
      key: a `fnad.random.PRNGKey`.
      shape, dtype: of the result.
      a: negative slope for "leaky_relu".
      mode: "fan_in" or "fan_out".
      nonlinearity: passed to `calculate_gain`.
      in_axis, out_axis: see `fans`.

    Returns:
      An array of `shape`.

    Example:
      w = kaiming_uniform(fnad.random.PRNGKey(0), (128, 64), nonlinearity="relu")
    """
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(shape, mode, in_axis, out_axis))
    bound = math.sqrt(3.0) * std
    return uniform(key, shape, dtype, low=-bound, high=bound)


def kaiming_normal(key, shape, dtype=np.float32, *, a=0.0, mode="fan_in",
                   nonlinearity="leaky_relu", in_axis=-2, out_axis=-1):
    """He/Kaiming normal: `N(0, std**2)`, `std = gain / sqrt(fan)` (PyTorch's
    `kaiming_normal_`).

    Args: as `kaiming_uniform`.

    Returns:
      An array of `shape`.

    Example:
      w = kaiming_normal(fnad.random.PRNGKey(0), (128, 64), nonlinearity="relu")
    """
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(shape, mode, in_axis, out_axis))
    return normal(key, shape, dtype, std=std)


def xavier_uniform(key, shape, dtype=np.float32, *, gain=1.0, in_axis=-2, out_axis=-1):
    """Glorot/Xavier uniform: `U(-a, a)`, `a = gain * sqrt(6 / (fan_in + fan_out))`.

    Args:
      key: a `fnad.random.PRNGKey`.
      shape, dtype: of the result.
      gain: scaling factor.
      in_axis, out_axis: see `fans`.

    Returns:
      An array of `shape`.

    Example:
      w = xavier_uniform(fnad.random.PRNGKey(0), (128, 64))
    """
    fan_in, fan_out = fans(shape, in_axis, out_axis)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform(key, shape, dtype, low=-bound, high=bound)


def xavier_normal(key, shape, dtype=np.float32, *, gain=1.0, in_axis=-2, out_axis=-1):
    """Glorot/Xavier normal: `N(0, std**2)`, `std = gain * sqrt(2 / (fan_in + fan_out))`.

    Args: as `xavier_uniform`.

    Returns:
      An array of `shape`.

    Example:
      w = xavier_normal(fnad.random.PRNGKey(0), (128, 64))
    """
    fan_in, fan_out = fans(shape, in_axis, out_axis)
    return normal(key, shape, dtype, std=gain * math.sqrt(2.0 / (fan_in + fan_out)))


he_uniform = kaiming_uniform
he_normal = kaiming_normal
glorot_uniform = xavier_uniform
glorot_normal = xavier_normal


def torch_default_uniform(key, shape, dtype=np.float32, *, fan_in):
    """`U(-1/sqrt(fan_in), 1/sqrt(fan_in))`: PyTorch's default for Linear and Conv weights
    and biases (kaiming_uniform with a=sqrt(5)) and, with fan_in = hidden size, for RNNs.

    Args:
      key: a `fnad.random.PRNGKey`.
      shape, dtype: of the result.
      fan_in: the fan that sets the bound.

    Returns:
      An array of `shape`.

    Example:
      b = torch_default_uniform(fnad.random.PRNGKey(0), (64,), fan_in=128)
    """
    bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
    return uniform(key, shape, dtype, low=-bound, high=bound)
