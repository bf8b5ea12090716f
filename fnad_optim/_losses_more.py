"""More of optax.losses: the Dice losses of segmentation and the binary sparsemax loss."""

import numpy as np

import fnad
import fnad.numpy as fnp
from fnad.scipy.special import expit as _sigmoid
from fnad.scipy.special import log_softmax as _log_softmax
from fnad.scipy.special import softmax as _softmax

from ._projections import _unit_simplex

__all__ = ["dice_loss", "binary_dice_loss", "multiclass_generalized_dice_loss",
           "sparsemax_loss", "multiclass_sparsemax_loss", "ranking_softmax_loss"]


def _reduce(loss, reduction):
    if reduction == "mean":
        return fnp.mean(loss, axis=-1)
    if reduction == "sum":
        return fnp.sum(loss, axis=-1)
    if reduction == "none":
        return loss
    raise ValueError(f"dice_loss: reduction must be 'mean', 'sum' or 'none', got "
                     f"{reduction!r}.")


def dice_loss(predictions, targets, *, class_weights=None, smooth=1.0, alpha=0.5, beta=0.5,
              apply_softmax=True, reduction="mean", ignore_background=False, axis=None):
    """The (Tversky-weighted) Dice loss of segmentation: `1 - (|P ∩ T| + smooth) / (|P ∩ T| +
    alpha |P \\ T| + beta |T \\ P| + smooth)` per example and class, over the spatial axes
    (all but the first and the last, the classes), then reduced over the classes.

    `predictions` are logits (softmax over the classes, or a sigmoid for one class) unless
    `apply_softmax=False`, when they must be probabilities.

    Example:
      loss = dice_loss(logits, one_hot_masks).mean()   # (batch, H, W, classes)
    """
    predictions, targets = fnp.asarray(predictions), fnp.asarray(targets)
    if predictions.ndim == targets.ndim - 1:
        predictions = predictions[..., None]
    if targets.ndim == predictions.ndim - 1:
        targets = targets[..., None]
    if predictions.shape != targets.shape:
        raise ValueError(f"dice_loss: predictions {predictions.shape} and targets "
                         f"{targets.shape} must have the same shape.")
    probs = predictions
    if apply_softmax:
        probs = (_sigmoid(predictions) if predictions.shape[-1] == 1
                 else _softmax(predictions, axis=-1))
    else:
        sums = np.asarray(fnp.sum(predictions, axis=-1))
        if not np.allclose(sums, 1.0, rtol=1e-5):
            raise ValueError("dice_loss: with apply_softmax=False the predictions must sum to "
                             f"1 over the class axis; their sums range over [{sums.min():.6f}, "
                             f"{sums.max():.6f}].")
    axis = tuple(range(1, probs.ndim - 1)) if axis is None else axis
    inter = fnp.sum(probs * targets, axis=axis)
    pred_sum, target_sum = fnp.sum(probs, axis=axis), fnp.sum(targets, axis=axis)
    coeff = (inter + smooth) / (inter + alpha * (pred_sum - inter)
                                + beta * (target_sum - inter) + smooth)
    loss = 1.0 - coeff
    if class_weights is not None:
        loss = loss * class_weights
    if ignore_background and probs.shape[-1] > 1:
        loss = loss[..., 1:]
    return _reduce(loss, reduction)


def binary_dice_loss(predictions, targets, *, smooth=1.0, apply_sigmoid=True):
    """The Dice loss of one foreground class: `predictions` logits (sigmoid) or
    probabilities, per example.

    Example:
      loss = binary_dice_loss(logits, masks).mean()   # (batch, H, W)
    """
    predictions, targets = fnp.asarray(predictions), fnp.asarray(targets)
    if predictions.ndim == targets.ndim and predictions.shape[-1] != 1:
        predictions, targets = predictions[..., None], targets[..., None]
    return dice_loss(predictions, targets, smooth=smooth, apply_softmax=apply_sigmoid,
                     reduction="mean")


def multiclass_generalized_dice_loss(predictions, targets, *, smooth=1.0, apply_softmax=True,
                                     ignore_background=False):
    """The generalised Dice loss (Sudre et al. 2017): classes weighted by their inverse
    squared frequency in `targets`; a scalar.

    Example:
      loss = multiclass_generalized_dice_loss(logits, one_hot_masks)
    """
    targets = fnp.asarray(targets)
    freq = fnp.sum(targets, axis=tuple(range(targets.ndim - 1)))
    w = 1.0 / (freq ** 2 + 1e-7)
    w = w / fnp.sum(w) * w.shape[0]
    return fnp.mean(dice_loss(predictions, targets, class_weights=w, smooth=smooth,
                              apply_softmax=apply_softmax, reduction="none",
                              ignore_background=ignore_background))


def _sparse_plus(x):
    """0 below -1, `(x + 1) ** 2 / 4` between -1 and 1, `x` above 1."""
    return fnp.where(x <= -1.0, fnp.zeros_like(x),
                     fnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparsemax_loss(logits, labels):
    """The binary sparsemax loss (Blondel et al. 2020), zero exactly where the sparse sigmoid
    of the logits equals the 0/1 label.

    Example:
      loss = sparsemax_loss(logits, y).mean()
    """
    logits = fnp.asarray(logits)
    return _sparse_plus(fnp.where(fnp.asarray(labels) != 0, -logits, logits))


def _one_sparsemax_loss(scores, label):
    proba = _unit_simplex(scores)
    picked = fnp.take(scores, label)
    shifted = fnp.where(fnp.arange(scores.shape[0]) == label, 0.0, scores - picked)
    return (fnp.sum(proba * fnp.where(proba != 0, shifted, 0.0))
            + 0.5 * (1.0 - fnp.sum(proba * proba)))


def multiclass_sparsemax_loss(scores, labels):
    """The multiclass sparsemax loss (Martins and Astudillo 2016) of integer `labels` under
    `scores` (batch, classes), per example.

    Example:
      loss = multiclass_sparsemax_loss(scores, y).mean()
    """
    scores = fnp.asarray(scores)
    if scores.ndim != 2:
        raise ValueError(f"multiclass_sparsemax_loss: scores must be (batch, classes), got "
                         f"shape {scores.shape}.")
    return fnad.vmap(_one_sparsemax_loss)(scores, fnp.asarray(labels))


def ranking_softmax_loss(logits, labels, *, where=None, weights=None, reduce_fn=fnp.mean):
    """The listwise softmax cross entropy of ranking (relevance `labels` per item, the
    items on the last axis), reduced over the lists by `reduce_fn` (None: per list).

    Example:
      loss = ranking_softmax_loss(scores, relevance)   # (lists, items)
    """
    logits = fnp.asarray(logits)
    labels = fnp.astype(fnp.asarray(labels), fnp.result_type(logits))
    if where is not None:
        labels = fnp.where(where, labels, fnp.zeros_like(labels))
        logits = fnp.where(where, logits, -np.inf)
    if weights is not None:
        labels = labels * weights
    log_p = _log_softmax(logits, axis=-1)
    if where is not None:  # masked items: -inf log probabilities, 0 labels, no term
        log_p = fnp.where(where, log_p, fnp.zeros_like(log_p))
    terms = labels * log_p
    loss = -fnp.sum(terms, axis=-1)
    any_item = None if where is None else fnp.any(where, axis=-1)
    if reduce_fn is None:
        return loss if any_item is None else fnp.where(any_item, loss, 0.0)
    out = reduce_fn(loss) if any_item is None else reduce_fn(loss, where=any_item)
    if reduce_fn is fnp.mean:  # a mean over no list is 0, not nan
        valid = ~fnp.any(fnp.isnan(loss))
        out = fnp.where(fnp.isnan(out) & valid, 0.0, out)
    return out
