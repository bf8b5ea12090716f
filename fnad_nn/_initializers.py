"""`jax.nn.initializers`: factories that return `init(key, shape, dtype=np.float32)`, with
JAX's definitions (variance scaling draws a truncated normal rescaled to the variance asked
for; fans read `in_axis`, `out_axis`, `batch_axis` and the receptive field). PyTorch's
formulas stay in `fnad_nn.init`.

Example:
  init = fnad_nn.initializers.glorot_normal()
  w = init(key, (784, 256))
"""

import math

import numpy as np

import fnad.numpy as fnp
import fnad.random as random

__all__ = ["zeros", "ones", "constant", "normal", "uniform", "truncated_normal",
           "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal"]

_FLOAT = np.float32  # JAX's default float dtype (without x64), fnad.random's default

# the standard deviation of a standard normal truncated to (-2, 2)
_TRUNC_STD = 0.87962566103423978


def zeros(key, shape, dtype=_FLOAT):
    """An array of zeros (an initializer itself, as in JAX, not a factory)."""
    return fnp.zeros(_shape(shape), dtype)


def ones(key, shape, dtype=_FLOAT):
    """An array of ones (an initializer itself, as in JAX, not a factory)."""
    return fnp.ones(_shape(shape), dtype)


def constant(value, dtype=_FLOAT):
    """An initializer filling with `value`.

    Example:
      constant(0.1)(key, (3,))   # [0.1, 0.1, 0.1]
    """
    def init(key, shape, dtype=dtype):
        return fnp.full(_shape(shape), value, dtype)
    return init


def normal(stddev=1e-2, dtype=_FLOAT):
    """An initializer drawing `stddev * N(0, 1)`."""
    def init(key, shape, dtype=dtype):
        return random.normal(key, _shape(shape), dtype) * np.asarray(stddev, dtype)
    return init


def uniform(scale=1e-2, dtype=_FLOAT):
    """An initializer drawing uniformly from [0, scale)."""
    def init(key, shape, dtype=dtype):
        return random.uniform(key, _shape(shape), dtype) * np.asarray(scale, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=_FLOAT, lower=-2.0, upper=2.0):
    """An initializer drawing `stddev *` a standard normal truncated to (lower, upper)."""
    def init(key, shape, dtype=dtype):
        return random.truncated_normal(key, lower, upper, _shape(shape), dtype) * \
            np.asarray(stddev, dtype)
    return init


def _shape(shape):
    return (shape,) if isinstance(shape, int) else tuple(shape)


def _size(shape, axes):
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    return math.prod(shape[a] for a in axes)


def _fans(shape, in_axis, out_axis, batch_axis):
    """(fan_in, fan_out): in/out sizes times the receptive field (the other axes)."""
    if len(shape) <= 1 and in_axis == -2:
        raise ValueError(f"variance_scaling: a {len(shape)}-d shape {shape} has no input axis "
                         "-2; give in_axis (and out_axis) explicitly, or use a 2-d shape.")
    fan_in, fan_out, batch = (_size(shape, in_axis), _size(shape, out_axis),
                              _size(shape, batch_axis))
    receptive = math.prod(shape) / fan_in / fan_out / batch
    return fan_in * receptive, fan_out * receptive


_DENOM = {"fan_in": lambda i, o: i, "fan_out": lambda i, o: o,
          "fan_avg": lambda i, o: (i + o) / 2, "fan_geo_avg": lambda i, o: math.sqrt(i * o)}


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=_FLOAT):
    """An initializer with variance `scale / n`, n the fan chosen by `mode`.

    Args:
      scale: the variance's numerator. mode: "fan_in", "fan_out", "fan_avg" or "fan_geo_avg".
      distribution: "truncated_normal" (a normal truncated to +-2 standard deviations,
        rescaled to keep the variance), "normal" or "uniform".
      in_axis, out_axis, batch_axis: the axes (ints or tuples) of the fans; the remaining
        axes are the receptive field.

    Example:
      w = variance_scaling(2.0, "fan_in", "truncated_normal")(key, (3, 3, 16, 32))
    """
    if mode not in _DENOM:
        raise ValueError(f"variance_scaling: mode {mode!r} is not one of {sorted(_DENOM)}.")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"variance_scaling: distribution {distribution!r} is not one of "
                         "'truncated_normal', 'normal', 'uniform'.")

    def init(key, shape, dtype=dtype):
        shape = _shape(shape)
        variance = scale / _DENOM[mode](*_fans(shape, in_axis, out_axis, batch_axis))
        if distribution == "truncated_normal":
            std = np.asarray(math.sqrt(variance) / _TRUNC_STD, dtype)
            return random.truncated_normal(key, -2.0, 2.0, shape, dtype) * std
        if distribution == "normal":
            return random.normal(key, shape, dtype) * np.asarray(math.sqrt(variance), dtype)
        return random.uniform(key, shape, dtype, -1.0, 1.0) * \
            np.asarray(math.sqrt(3 * variance), dtype)
    return init


def _named(scale, mode, distribution, name):
    def factory(in_axis=-2, out_axis=-1, batch_axis=(), dtype=_FLOAT):
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)
    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (f"`variance_scaling({scale}, {mode!r}, {distribution!r})` "
                       f"(JAX's `{name}`).")
    return factory


glorot_uniform = xavier_uniform = _named(1.0, "fan_avg", "uniform", "glorot_uniform")
glorot_normal = xavier_normal = _named(1.0, "fan_avg", "truncated_normal", "glorot_normal")
lecun_uniform = _named(1.0, "fan_in", "uniform", "lecun_uniform")
lecun_normal = _named(1.0, "fan_in", "truncated_normal", "lecun_normal")
he_uniform = kaiming_uniform = _named(2.0, "fan_in", "uniform", "he_uniform")
he_normal = kaiming_normal = _named(2.0, "fan_in", "truncated_normal", "he_normal")


def orthogonal(scale=1.0, column_axis=-1, dtype=_FLOAT):
    """An initializer of (semi-)orthogonal matrices: the Q of a Gaussian matrix's QR, signs
    fixed by R's diagonal so Q is uniformly distributed; `column_axis` holds the columns.

    Example:
      q = orthogonal()(key, (4, 4));  q.T @ q   # the identity
    """
    def init(key, shape, dtype=dtype):
        shape = _shape(shape)
        if len(shape) < 2:
            raise ValueError(f"orthogonal: shape {shape} needs at least two axes.")
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        tall = (n_rows, n_cols) if n_rows >= n_cols else (n_cols, n_rows)
        a = random.normal(key, tall, dtype)
        q, r = fnp.linalg.qr(a)
        q = q * fnp.sign(fnp.diagonal(r))
        if n_rows < n_cols:
            q = q.T
        rest = tuple(s for i, s in enumerate(shape) if i != column_axis % len(shape))
        q = fnp.moveaxis(fnp.reshape(q, rest + (n_cols,)), -1, column_axis)
        return (q * np.asarray(scale, dtype)).astype(dtype)
    return init
