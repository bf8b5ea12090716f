"""Losses, numerically stable; the softmax cross-entropies are single fused primitives whose
backward is `softmax - target` (and which still differentiate again)."""

import numpy as np

import fnad.numpy as fnp
from fnad.extend import (ShapedArray, array_module, as_primitive, batch_fallback, batch_size,
                         defabstract_eval, defbatch, defjvp, defvjp, lead_batch, primitive,
                         to_front)

from ._activations import _softplus, log_softmax, softmax
from ._util import as_array, dtype_of, shape_of

__all__ = ["softmax_cross_entropy", "sparse_softmax_cross_entropy", "cross_entropy",
           "nll_loss", "mse_loss", "binary_cross_entropy_with_logits"]

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(fname, reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fname}: reduction={reduction!r}; use 'mean', 'sum' or 'none'.")


def _reduce(loss, reduction, weight=None):
    """Mean/sum/none of per-example `loss`; with `weight`, the mean is sum(w l) / sum(w)
    (0 when every weight is 0)."""
    if weight is not None:
        loss = loss * weight
    if reduction == "none":
        return loss
    total = fnp.sum(loss)
    if reduction == "sum":
        return total
    if weight is None:
        return total / max(int(np.prod(shape_of(loss))), 1)
    count = fnp.sum(weight)  # arithmetic, not a Python if: stageable
    return total / fnp.where(count > 0, count, 1)


# ----------------------------------------------------------------------------- fused kernels

def _lse(z):
    m = np.max(z, axis=-1, keepdims=True)
    return (m + np.log(np.sum(np.exp(z - m), axis=-1, keepdims=True)))[..., 0]


def _smoothed_target(labels, num_classes, smoothing, dtype, xp):
    q = (labels[..., None] == xp.arange(num_classes)).astype(dtype)
    if smoothing:
        q = q * dtype.type(1 - smoothing) + dtype.type(smoothing / num_classes)
    return q


def _sparse_xent_impl(logits, labels, smoothing=0.0):
    picked = np.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
    loss = _lse(logits) - picked
    if smoothing:
        loss = loss + smoothing * (picked - np.mean(logits, axis=-1))
    return loss


def _sparse_xent_dz(ans, logits, labels, smoothing):
    q = _smoothed_target(labels, shape_of(logits)[-1], smoothing, dtype_of(logits),
                         array_module(logits))
    return softmax(logits) - q


_sparse_xent = primitive(_sparse_xent_impl, "sparse_softmax_cross_entropy")
defvjp(_sparse_xent, lambda g, ans, z, y, s=0.0: fnp.expand_dims(g, -1)
       * _sparse_xent_dz(ans, z, y, s))
defjvp(_sparse_xent, lambda t, ans, z, y, s=0.0: fnp.sum(t * _sparse_xent_dz(ans, z, y, s),
                                                         axis=-1))


def _batch_sparse_xent(args, dims, **kw):
    n = batch_size(args, dims)
    if any(d is not None for d in dims[2:]):
        return batch_fallback(_sparse_xent.primitive, args, dims, kw, n)
    z, y = to_front(args[0], dims[0], n), to_front(args[1], dims[1], n)
    return _sparse_xent(z, y, *args[2:], **kw), 0


defbatch(_sparse_xent, _batch_sparse_xent)


def _xent_impl(logits, targets):
    return np.sum(targets, axis=-1) * _lse(logits) - np.sum(targets * logits, axis=-1)


def _xent_dz(logits, targets):
    return softmax(logits) * fnp.sum(targets, axis=-1, keepdims=True) - targets


_xent = primitive(_xent_impl, "softmax_cross_entropy")
defvjp(_xent, lambda g, ans, z, t: fnp.expand_dims(g, -1) * _xent_dz(z, t),
       lambda g, ans, z, t: -fnp.expand_dims(g, -1) * log_softmax(z))
defjvp(_xent, lambda tz, ans, z, t: fnp.sum(tz * _xent_dz(z, t), axis=-1),
       lambda tt, ans, z, t: -fnp.sum(tt * log_softmax(z), axis=-1))
defbatch(_xent, lead_batch(_xent, 2))


# ----------------------------------------------------------------------------- public

def softmax_cross_entropy(logits, targets, *, axis=-1, label_smoothing=0.0, reduction="mean"):
    """Cross-entropy between `softmax(logits)` and target distributions (one-hot or soft).

    Per example: `-sum(targets * log_softmax(logits))`, fused into one primitive whose
    gradient is `softmax(logits) * sum(targets) - targets`.

    Args:
      logits: array `(..., C)` of unnormalised scores (class axis `axis`).
      targets: array shaped like `logits` (probabilities or one-hot rows).
      axis: the class axis.
      label_smoothing: mixes targets with the uniform distribution, as PyTorch.
      reduction: "mean" (over examples), "sum" or "none".

    Returns:
      A scalar, or the per-example losses `(...)` for reduction="none".

    Example:
      loss = softmax_cross_entropy(logits, one_hot(labels, 10))
    """
    _check_reduction("softmax_cross_entropy", reduction)
    if shape_of(logits) != shape_of(targets):
        raise ValueError(f"softmax_cross_entropy: logits {shape_of(logits)} and targets "
                         f"{shape_of(targets)} must have the same shape; for integer labels use "
                         "sparse_softmax_cross_entropy.")
    if axis not in (-1, len(shape_of(logits)) - 1):
        logits, targets = fnp.moveaxis(logits, axis, -1), fnp.moveaxis(targets, axis, -1)
    if label_smoothing:
        c = shape_of(logits)[-1]
        targets = targets * (1 - label_smoothing) + label_smoothing / c
    return _reduce(_xent(logits, targets), reduction)


def sparse_softmax_cross_entropy(logits, labels, *, mask=None, ignore_index=None,
                                 label_smoothing=0.0, reduction="mean"):
    """Cross-entropy of integer labels under `softmax(logits)`, fused into one primitive.

    Positions whose label equals `ignore_index`, or whose `mask` is 0, contribute nothing;
    the mean divides by the total weight of the remaining positions (0 if there are none).
    With `label_smoothing = e` the target is `(1 - e) * one_hot + e / C`, as PyTorch.

    Args:
      logits: array `(..., C)`.
      labels: integer array `(...)`.
      mask: optional array `(...)` of 0/1 (or float) weights, e.g. `labels != pad_id`.
      ignore_index: optional label value to skip (PyTorch uses -100).
      label_smoothing: in [0, 1].
      reduction: "mean", "sum" or "none" (per-position losses, zero where skipped).

    Returns:
      A scalar, or per-position losses `(...)`.

    Example:
      loss = sparse_softmax_cross_entropy(logits, labels, mask=(labels != 0))
    """
    _check_reduction("sparse_softmax_cross_entropy", reduction)
    xp = array_module(logits)  # labels follow the logits' device
    labels = as_array(xp, labels)
    if labels.dtype.kind not in "iu":
        raise TypeError(f"sparse_softmax_cross_entropy: labels must be integers, got dtype "
                        f"{labels.dtype}; for probability targets use softmax_cross_entropy.")
    if shape_of(logits)[:-1] != labels.shape:
        raise ValueError(f"sparse_softmax_cross_entropy: logits {shape_of(logits)} need labels "
                         f"of shape {shape_of(logits)[:-1]}, got {labels.shape}.")
    labels, weight = _label_weights(xp, labels, mask, ignore_index, dtype_of(logits))
    c = shape_of(logits)[-1]
    # Concrete NumPy labels are checked; traced ones (a staged step) cannot be, and device
    # ones are not (reading the check back would cost a synchronisation each step).
    if type(labels) is np.ndarray and labels.size and (labels.min() < 0 or labels.max() >= c):
        raise ValueError(f"sparse_softmax_cross_entropy: labels must lie in [0, {c}); got "
                         f"values in [{labels.min()}, {labels.max()}]. Pass ignore_index= for "
                         "padding labels.")
    loss = _sparse_xent(logits, labels, float(label_smoothing))
    return _reduce(loss, reduction, weight)


def _label_weights(xp, labels, mask, ignore_index, dt):
    """Labels with `ignore_index` replaced by 0, and the per-position weights (or None)
    from `ignore_index` and `mask`."""
    weight = None
    if ignore_index is not None:
        keep = labels != ignore_index
        labels = fnp.where(keep, labels, 0)
        weight = keep.astype(dt)
    if mask is not None:
        m = as_array(xp, mask).astype(dt)
        weight = m if weight is None else weight * m
    return labels, weight


def cross_entropy(probs, targets, *, eps=0.0, reduction="mean"):
    """Cross-entropy of probabilities (not logits): `-sum(targets * log(probs + eps))`.

    Args:
      probs: array `(..., C)` of probabilities.
      targets: integer labels `(...)` or target distributions `(..., C)`.
      eps: optional floor added inside the log.
      reduction: "mean", "sum" or "none".

    Returns:
      A scalar, or per-example losses.

    Example:
      loss = cross_entropy(softmax(logits), labels)   # prefer sparse_softmax_cross_entropy
    """
    _check_reduction("cross_entropy", reduction)
    logp = fnp.log(probs + eps) if eps else fnp.log(probs)
    if getattr(targets, "dtype", None) is not None and targets.dtype.kind in "iu":
        return nll_loss(logp, targets, reduction=reduction)
    return _reduce(-fnp.sum(targets * logp, axis=-1), reduction)


def nll_loss(log_probs, labels, *, mask=None, ignore_index=None, reduction="mean"):
    """Negative log-likelihood `-log_probs[..., label]` (PyTorch's `nll_loss`).

    Args:
      log_probs: array `(..., C)` of log-probabilities.
      labels: integer array `(...)`.
      mask, ignore_index: as in `sparse_softmax_cross_entropy`.
      reduction: "mean", "sum" or "none".

    Returns:
      A scalar, or per-position losses.

    Example:
      loss = nll_loss(log_softmax(logits), labels)
    """
    _check_reduction("nll_loss", reduction)
    xp = array_module(log_probs)
    labels = as_array(xp, labels)
    labels, weight = _label_weights(xp, labels, mask, ignore_index, dtype_of(log_probs))
    picked = fnp.take_along_axis(log_probs, labels[..., None], axis=-1)[..., 0]
    return _reduce(-picked, reduction, weight)


def mse_loss(pred, target, *, reduction="mean"):
    """Mean squared error `(pred - target)**2`.

    Args:
      pred, target: arrays of the same shape.
      reduction: "mean", "sum" or "none".

    Returns:
      A scalar, or the elementwise losses.

    Example:
      loss = mse_loss(model(params, x), y)
    """
    _check_reduction("mse_loss", reduction)
    d = pred - target
    return _reduce(d * d, reduction)


def binary_cross_entropy_with_logits(logits, targets, *, pos_weight=None, reduction="mean"):
    """Binary cross-entropy of `sigmoid(logits)` against `targets` in [0, 1], computed from the
    logits without overflow: `(1 - t) x + (1 + (pw - 1) t) softplus(-x)`.

    Args:
      logits: array of any shape.
      targets: array of the same shape.
      pos_weight: optional weight of positive examples (broadcast over the last axis).
      reduction: "mean", "sum" or "none".

    Returns:
      A scalar, or the elementwise losses.

    Example:
      loss = binary_cross_entropy_with_logits(scores, labels.astype(np.float32))
    """
    _check_reduction("binary_cross_entropy_with_logits", reduction)
    sp = _softplus(-logits)
    if pos_weight is None:
        loss = (1 - targets) * logits + sp
    else:
        loss = (1 - targets) * logits + (1 + (pos_weight - 1) * targets) * sp
    return _reduce(loss, reduction)

# ----------------------------------------------------------------------------- abstract evaluation


def _sparse_xent_aval(logits, labels, smoothing=0.0):
    tiny = _sparse_xent_impl(np.zeros((1,) * logits.ndim, logits.dtype),
                             np.zeros((1,) * labels.ndim, labels.dtype), smoothing)
    return ShapedArray(logits.shape[:-1], tiny.dtype, xp=logits.xp)


def _xent_aval(logits, targets):
    both = as_primitive(fnp.multiply).abstract_eval(logits, targets)
    return both.update(shape=both.shape[:-1])


defabstract_eval(_sparse_xent, _sparse_xent_aval)
defabstract_eval(_xent, _xent_aval)
