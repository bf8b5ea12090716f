"""Normalisation layers: layer_norm, rms_norm, batch_norm (explicit running statistics)."""

import numpy as np

import fnad.numpy as fnp
from fnad import stop_gradient

from ._fused import normalize, scale_shift
from ._util import ParamSpec, check_last_dim, check_params, shape_of

__all__ = ["init_layer_norm", "layer_norm", "init_rms_norm", "rms_norm", "init_batch_norm",
           "batch_norm"]


def init_layer_norm(d, *, bias=True, dtype=np.float32):
    """Parameters of a layer norm over a last axis of size `d` (scale 1, bias 0, as PyTorch).

    Args:
      d: normalised size.
      bias: whether to include the additive `bias`.
      dtype: parameter dtype.

    Returns:
      `{"scale": (d,), "bias": (d,)}` ("bias" is None when bias=False).

    Example:
      params = init_layer_norm(16)
      y = layer_norm(params, x)
    """
    return {"scale": np.ones((d,), dtype), "bias": np.zeros((d,), dtype) if bias else None}


_LAYER_NORM = ParamSpec("init_layer_norm", {"scale": 1, "bias": 1}, nullable=("bias",),
                        same=[("bias", 0, "scale", 0)])
_RMS_NORM = ParamSpec("init_rms_norm", {"scale": 1})
_BATCH_NORM = ParamSpec("init_batch_norm (its first result)", {"scale": 1, "bias": 1},
                        same=[("bias", 0, "scale", 0)])


def layer_norm(params, x, *, eps=1e-5):
    """Normalise over the last axis to zero mean and unit (biased) variance, then scale and
    shift: `(x - mean) / sqrt(var + eps) * scale + bias`.

    Args:
      params: `{"scale": (d,), "bias": (d,) or None}`.
      x: array of shape `(..., d)`.
      eps: added to the variance.

    Returns:
      An array shaped like `x`.

    Example:
      params = init_layer_norm(16)
      layer_norm(params, np.ones((2, 5, 16), np.float32)).shape   # (2, 5, 16)
    """
    check_params("layer_norm", params, x, spec=_LAYER_NORM)
    check_last_dim("layer_norm", x, shape_of(params["scale"])[0])
    return scale_shift(normalize(x, eps), params["scale"], params["bias"])


def init_rms_norm(d, *, dtype=np.float32):
    """Parameters of an RMS norm over a last axis of size `d` (scale 1).

    Args:
      d: normalised size.
      dtype: parameter dtype.

    Returns:
      `{"scale": (d,)}`.

    Example:
      params = init_rms_norm(16)
    """
    return {"scale": np.ones((d,), dtype)}


def rms_norm(params, x, *, eps=1e-6):
    """Root-mean-square norm: `x / sqrt(mean(x**2) + eps) * scale` over the last axis.

    Args:
      params: `{"scale": (d,)}`.
      x: array of shape `(..., d)`.
      eps: added to the mean square.

    Returns:
      An array shaped like `x`.

    Example:
      params = init_rms_norm(16)
      rms_norm(params, np.ones((3, 16), np.float32)).shape   # (3, 16)
    """
    check_params("rms_norm", params, x, spec=_RMS_NORM)
    check_last_dim("rms_norm", x, shape_of(params["scale"])[0])
    inv = 1 / fnp.sqrt(fnp.mean(x * x, axis=-1, keepdims=True) + eps)
    return x * inv * params["scale"]


def init_batch_norm(d, *, dtype=np.float32):
    """Parameters and running statistics of a batch norm over `d` features.

    Args:
      d: number of features.
      dtype: dtype of both.

    Returns:
      `(params, state)`: params `{"scale": (d,), "bias": (d,)}` (1 and 0), state
      `{"mean": (d,), "var": (d,)}` (0 and 1), as PyTorch's BatchNorm.

    Example:
      params, state = init_batch_norm(16)
      y, state = batch_norm(params, state, x, train=True)
    """
    return ({"scale": np.ones((d,), dtype), "bias": np.zeros((d,), dtype)},
            {"mean": np.zeros((d,), dtype), "var": np.ones((d,), dtype)})


def batch_norm(params, state, x, *, train=True, momentum=0.1, eps=1e-5, axis=-1):
    """Batch normalisation with explicit running statistics.

    In training the batch statistics are taken over every axis except the feature `axis`
    (batch, and time for `(B, T, C)` input); the returned state moves towards them:
    `new = (1 - momentum) * old + momentum * batch` with the unbiased batch variance, as
    PyTorch. In evaluation (`train=False`) the running statistics are used and the state is
    returned unchanged. Each call is a pure function, so calling the layer several times
    before differentiating gives every call its own correct gradient.

    Args:
      params: `{"scale": (C,), "bias": (C,)}`.
      state: `{"mean": (C,), "var": (C,)}` running statistics.
      x: array with the features on `axis` (e.g. `(B, C)`, `(B, T, C)`; `axis=1` for NCHW).
      train: batch statistics (True) or running statistics (False).
      momentum: update rate of the running statistics.
      eps: added to the variance.
      axis: the feature axis.

    Returns:
      `(y, new_state)`: y shaped like `x`; new_state carries no derivative.

    Example:
      params, state = init_batch_norm(16)
      y, state = batch_norm(params, state, np.ones((8, 16), np.float32))
    """
    check_params("batch_norm", params, x, call="batch_norm(params, state, x)",
                 spec=_BATCH_NORM)
    s = shape_of(x)
    nd = len(s)
    ax = axis % nd if nd else 0
    c = shape_of(params["scale"])[0]
    if nd < 2 or s[ax] != c:
        raise ValueError(f"batch_norm: input of shape {s} has no feature axis {axis} of size {c}; "
                         "pass axis= (e.g. axis=1 for NCHW) or reshape the input.")
    red = tuple(i for i in range(nd) if i != ax)
    bshape = tuple(c if i == ax else 1 for i in range(nd))
    scale = fnp.reshape(params["scale"], bshape)
    bias = fnp.reshape(params["bias"], bshape)
    if not train:
        inv = 1 / fnp.sqrt(fnp.reshape(state["var"], bshape) + eps)
        return (x - fnp.reshape(state["mean"], bshape)) * (inv * scale) + bias, state
    n = int(np.prod([s[i] for i in red]))
    if n < 2:
        raise ValueError(f"batch_norm: training needs more than one value per feature, got "
                         f"input shape {s}; use train=False or a larger batch.")
    mean = fnp.mean(x, axis=red, keepdims=True)
    xc = x - mean
    var = fnp.mean(xc * xc, axis=red, keepdims=True)
    y = xc * (1 / fnp.sqrt(var + eps) * scale) + bias
    batch_mean = stop_gradient(fnp.reshape(mean, (c,)))
    batch_var = stop_gradient(fnp.reshape(var, (c,))) * (n / (n - 1))
    new_state = {"mean": (1 - momentum) * state["mean"] + momentum * batch_mean,
                 "var": (1 - momentum) * state["var"] + momentum * batch_var}
    dt = state["mean"].dtype
    new_state = {k: v.astype(dt) for k, v in new_state.items()}
    return y, new_state
