"""Losses with optax's names, arguments and conventions: per-example values (no reduction;
take the mean yourself), written with fnad.numpy so they differentiate, jit and vmap.
"""

import numpy as np

import fnad
import fnad.numpy as fnp
from fnad.scipy.special import log_softmax as _log_softmax
from fnad.scipy.special import logsumexp as _logsumexp

__all__ = ["l2_loss", "squared_error", "huber_loss", "log_cosh", "softmax_cross_entropy",
           "softmax_cross_entropy_with_integer_labels", "safe_softmax_cross_entropy",
           "sigmoid_binary_cross_entropy", "sigmoid_focal_loss", "hinge_loss",
           "multiclass_hinge_loss", "perceptron_loss", "multiclass_perceptron_loss",
           "cosine_similarity", "cosine_distance", "kl_divergence",
           "kl_divergence_with_log_targets", "generalized_kl_divergence",
           "convex_kl_divergence", "poly_loss_cross_entropy", "smooth_labels",
           "triplet_margin_loss", "ntxent", "ctc_loss", "ctc_loss_with_forward_probs"]


def _check_float(fname, name, x):
    dtype = getattr(x, "dtype", None)
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError(f"{fname}: {name} must be a float array, got dtype {dtype}; cast it "
                        "with .astype(float) first.")


def _expand_where(where, x, axis):
    if where is None:
        return None
    where = fnp.asarray(where)
    if where.ndim != fnp.ndim(x):
        where = fnp.expand_dims(where, axis)
    return where


def _masked_log_softmax(x, axis, where):
    """log_softmax over `axis` of the entries where `where` holds (-inf elsewhere)."""
    if where is None:
        return _log_softmax(x, axis=axis)
    shifted = fnp.where(where, x, -np.inf)
    return fnp.where(where, shifted - _logsumexp(shifted, axis=axis, keepdims=True), -np.inf)


def _sum(x, axis, where):
    if where is None:
        return fnp.sum(x, axis=axis)
    return fnp.sum(fnp.where(where, x, fnp.zeros_like(x)), axis=axis)


# ----------------------------------------------------------------------------- regression


def squared_error(predictions, targets=None):
    """`(predictions - targets) ** 2` elementwise (targets None: zero).

    Example:
      loss = squared_error(model(params, x), y).mean()
    """
    errors = predictions - targets if targets is not None else predictions
    return errors * errors


def l2_loss(predictions, targets=None):
    """Half the squared error, `0.5 * (predictions - targets) ** 2`, elementwise.

    Example:
      loss = l2_loss(model(params, x), y).mean()
    """
    return 0.5 * squared_error(predictions, targets)


def huber_loss(predictions, targets=None, *, delta=1.0):
    """Quadratic for errors under `delta`, linear beyond it: `0.5 e ** 2` for `|e| <= delta`,
    else `delta * (|e| - 0.5 delta)`, elementwise.

    Example:
      loss = huber_loss(pred, y, delta=1.0).mean()
    """
    errors = predictions - targets if targets is not None else predictions
    abs_e = fnp.abs(errors)
    quadratic = fnp.minimum(abs_e, delta)
    return 0.5 * quadratic * quadratic + delta * (abs_e - quadratic)


def log_cosh(predictions, targets=None):
    """`log(cosh(predictions - targets))`, computed without overflow, elementwise.

    Example:
      loss = log_cosh(pred, y).mean()
    """
    errors = predictions - targets if targets is not None else predictions
    return fnp.logaddexp(errors, -errors) - np.log(2.0)


def cosine_similarity(predictions, targets, *, epsilon=0.0, axis=-1, where=None):
    """The cosine of the angle between `predictions` and `targets` along `axis`, each
    squared norm floored at `epsilon`.

    Example:
      sim = cosine_similarity(a, b, epsilon=1e-8)   # shape a.shape[:-1]
    """
    _check_float("cosine_similarity", "predictions", predictions)
    _check_float("cosine_similarity", "targets", targets)

    def unit(x):
        norm2 = fnp.expand_dims(_sum(x * x, axis, where), axis)
        return x / fnp.sqrt(fnp.maximum(norm2, epsilon))

    return _sum(unit(predictions) * unit(targets), axis, where)


def cosine_distance(predictions, targets, *, epsilon=0.0, axis=-1, where=None):
    """`1 - cosine_similarity(predictions, targets)`.

    Example:
      dist = cosine_distance(a, b)
    """
    return 1.0 - cosine_similarity(predictions, targets, epsilon=epsilon, axis=axis,
                                   where=where)


# ----------------------------------------------------------------------------- classification


def softmax_cross_entropy(logits, labels, axis=-1, where=None):
    """Cross entropy between `labels` (probabilities) and the softmax of `logits` along
    `axis`; `where` masks entries out of both the softmax and the sum.

    Example:
      loss = softmax_cross_entropy(logits, one_hot_labels).mean()
    """
    _check_float("softmax_cross_entropy", "logits", logits)
    where = _expand_where(where, logits, axis)
    log_probs = _masked_log_softmax(logits, axis, where)
    return -_sum(labels * log_probs, axis, where)


def softmax_cross_entropy_with_integer_labels(logits, labels, axis=-1, where=None):
    """Cross entropy of integer class `labels` under the softmax of `logits` along `axis`
    (an int), `logsumexp(logits) - logits[label]`.

    Example:
      loss = softmax_cross_entropy_with_integer_labels(logits, y).mean()   # y: int, (batch,)
    """
    fname = "softmax_cross_entropy_with_integer_labels"
    _check_float(fname, "logits", logits)
    if np.dtype(getattr(labels, "dtype", np.int64)).kind not in "iu":
        raise TypeError(f"{fname}: labels must be integers, got dtype {labels.dtype}; for "
                        "probabilities use softmax_cross_entropy.")
    if not isinstance(axis, int):
        raise ValueError(f"{fname}: axis must be an int, got {axis!r}.")
    axis = axis % fnp.ndim(logits)
    where = _expand_where(where, logits, axis)
    label_logits = fnp.squeeze(fnp.take_along_axis(
        logits, fnp.expand_dims(fnp.asarray(labels), axis), axis=axis), axis)
    if where is None:
        return _logsumexp(logits, axis=axis) - label_logits
    out = _logsumexp(fnp.where(where, logits, -np.inf), axis=axis) - label_logits
    return fnp.where(fnp.any(where, axis=axis), out, fnp.zeros_like(out))


def safe_softmax_cross_entropy(logits, labels):
    """`softmax_cross_entropy` over the last axis that is finite where `logits` is `-inf`
    and its label 0 (0 log 0 = 0).

    Example:
      loss = safe_softmax_cross_entropy(masked_logits, labels)
    """
    _check_float("safe_softmax_cross_entropy", "logits", logits)
    log_probs = _log_softmax(logits, axis=-1)
    zero = labels == 0
    safe = fnp.where(zero, fnp.zeros_like(log_probs), log_probs)
    return -fnp.sum(fnp.where(zero, fnp.zeros_like(safe), labels * safe), axis=-1)


def _log_sigmoid(x):
    return -fnp.logaddexp(fnp.zeros_like(x), -x)


def sigmoid_binary_cross_entropy(logits, labels):
    """Binary cross entropy of `labels` (0/1 or probabilities) under `sigmoid(logits)`,
    elementwise.

    Example:
      loss = sigmoid_binary_cross_entropy(logits, y.astype(float)).mean()
    """
    _check_float("sigmoid_binary_cross_entropy", "logits", logits)
    labels = fnp.astype(fnp.asarray(labels), fnp.result_type(logits))
    return -labels * _log_sigmoid(logits) - (1.0 - labels) * _log_sigmoid(-logits)


def sigmoid_focal_loss(logits, labels, *, alpha=None, gamma=2.0):
    """The focal loss (Lin et al. 2017): binary cross entropy weighted by `(1 - p_t) **
    gamma`, and by `alpha` / `1 - alpha` for positives / negatives when given.

    Example:
      loss = sigmoid_focal_loss(logits, y, alpha=0.25).mean()
    """
    _check_float("sigmoid_focal_loss", "logits", logits)
    labels = fnp.astype(fnp.asarray(labels), fnp.result_type(logits))
    ce = sigmoid_binary_cross_entropy(logits, labels)
    log_p, log_q = _log_sigmoid(logits), _log_sigmoid(-logits)
    # log(1 - p_t) = log((1 - y) p + y q), taken in the log domain for stability
    log_one_minus_pt = _logsumexp(fnp.stack([log_p, log_q], axis=-1), axis=-1,
                                  b=fnp.stack([1 - labels, labels], axis=-1))
    loss = ce * fnp.exp(gamma * log_one_minus_pt)
    if alpha is None:
        return loss
    return (alpha * labels + (1.0 - alpha) * (1.0 - labels)) * loss


def hinge_loss(predictor_outputs, targets):
    """`max(0, 1 - outputs * targets)` for targets in {-1, 1}.

    Example:
      loss = hinge_loss(scores, y_pm1).mean()
    """
    return fnp.maximum(0, 1 - predictor_outputs * targets)


def perceptron_loss(predictor_outputs, targets):
    """`max(0, -outputs * targets)` for targets in {-1, 1}.

    Example:
      loss = perceptron_loss(scores, y_pm1).mean()
    """
    return fnp.maximum(0, -predictor_outputs * targets)


def _label_score(scores, labels):
    return fnp.squeeze(fnp.take_along_axis(scores, fnp.expand_dims(fnp.asarray(labels), -1),
                                           axis=-1), -1)


def multiclass_hinge_loss(scores, labels):
    """`max_k(scores_k + [k != label]) - scores_label` over the last axis.

    Example:
      loss = multiclass_hinge_loss(scores, y).mean()   # y: int class indices
    """
    one_hot = fnp.asarray(fnp.arange(scores.shape[-1]) == fnp.expand_dims(labels, -1),
                          dtype=fnp.result_type(scores))
    return fnp.max(scores + 1.0 - one_hot, axis=-1) - _label_score(scores, labels)


def multiclass_perceptron_loss(scores, labels):
    """`max_k scores_k - scores_label` over the last axis.

    Example:
      loss = multiclass_perceptron_loss(scores, y).mean()
    """
    return fnp.max(scores, axis=-1) - _label_score(scores, labels)


def poly_loss_cross_entropy(logits, labels, *, epsilon=2.0, axis=-1, where=None):
    """PolyLoss (Leng et al. 2022): cross entropy plus `epsilon * (1 - p_t)`.

    Example:
      loss = poly_loss_cross_entropy(logits, one_hot_labels, epsilon=1.0).mean()
    """
    _check_float("poly_loss_cross_entropy", "logits", logits)
    where_x = _expand_where(where, logits, axis)
    p = fnp.exp(_masked_log_softmax(logits, axis, where_x))
    one_minus_pt = _sum(labels * (1 - p), axis, where_x)
    return softmax_cross_entropy(logits, labels, axis, where) + epsilon * one_minus_pt


def smooth_labels(labels, alpha, *, axis=-1, where=None):
    """Label smoothing: `(1 - alpha) * labels + alpha / num_classes` along `axis`.

    Example:
      loss = softmax_cross_entropy(logits, smooth_labels(one_hot, 0.1))
    """
    if where is None:
        n = labels.shape[axis]
    else:
        n = fnp.sum(fnp.asarray(where), axis=axis, keepdims=True)
    return (1.0 - alpha) * labels + alpha / n


# ----------------------------------------------------------------------------- divergences


def kl_divergence(log_predictions, targets, axis=-1, where=None):
    """KL(targets || predictions) along `axis`, with the predictions as log probabilities
    (0 log 0 = 0).

    Example:
      kl = kl_divergence(log_softmax(logits), probs)
    """
    _check_float("kl_divergence", "log_predictions", log_predictions)
    _check_float("kl_divergence", "targets", targets)
    zero = targets == 0
    log_t = fnp.log(fnp.where(zero, fnp.ones_like(targets), targets))
    return _sum(targets * (log_t - log_predictions), axis, where)


def kl_divergence_with_log_targets(log_predictions, log_targets, axis=-1, where=None):
    """`kl_divergence` with the targets given as log probabilities too.

    Example:
      kl = kl_divergence_with_log_targets(log_p, log_q)
    """
    _check_float("kl_divergence_with_log_targets", "log_predictions", log_predictions)
    return _sum(fnp.exp(log_targets) * (log_targets - log_predictions), axis, where)


def generalized_kl_divergence(log_predictions, targets, axis=-1, where=None):
    """The KL divergence of unnormalised measures: `kl_divergence + sum(exp(log_predictions)
    - targets)`, convex in the predictions.

    Example:
      kl = generalized_kl_divergence(log_p, q)
    """
    return (kl_divergence(log_predictions, targets, axis, where)
            + _sum(fnp.exp(log_predictions) - targets, axis, where))


def convex_kl_divergence(log_predictions, targets, axis=-1, where=None):
    """optax's older name of `generalized_kl_divergence`.

    Example:
      kl = convex_kl_divergence(log_p, q)
    """
    return generalized_kl_divergence(log_predictions, targets, axis, where)


# ----------------------------------------------------------------------------- metric learning


def triplet_margin_loss(anchors, positives, negatives, axis=-1, norm_degree=2, margin=1.0,
                        eps=1e-6):
    """`max(0, d(a, p) - d(a, n) + margin)` with `d(x, y) = (sum((x - y) ** norm_degree) +
    eps) ** (1 / norm_degree)` along `axis`.

    Example:
      loss = triplet_margin_loss(a, p, n).mean()
    """
    def dist(x, y):
        return (fnp.sum((x - y) ** norm_degree, axis=axis) + eps) ** (1.0 / norm_degree)

    return fnp.maximum(dist(anchors, positives) - dist(anchors, negatives) + margin, 0)


def ntxent(embeddings, labels, temperature=0.07):
    """The normalised temperature-scaled cross entropy (SimCLR) of `embeddings` (batch, d)
    whose pairs of equal `labels` are positives; a scalar.

    Example:
      loss = ntxent(z, labels)
    """
    if fnp.ndim(embeddings) != 2:
        raise ValueError(f"ntxent: embeddings must be (batch, features), got shape "
                         f"{fnp.shape(embeddings)}.")
    labels = fnp.asarray(labels)
    if labels.shape[0] != embeddings.shape[0]:
        raise ValueError(f"ntxent: labels {labels.shape} and embeddings {embeddings.shape} "
                         "must have the same leading dimension.")
    eps = np.finfo(fnp.result_type(embeddings)).eps
    xcs = cosine_similarity(embeddings[None, :, :], embeddings[:, None, :],
                            epsilon=eps) / temperature
    same = labels[:, None] == labels[None, :]
    pos = fnp.logical_and(same, ~fnp.eye(same.shape[0], dtype=bool))
    neg = ~same
    x_neg = fnp.where(neg, xcs, -np.inf)
    x_pos = fnp.where(pos, xcs, -np.inf)
    top = fnad.stop_gradient(fnp.max(fnp.concatenate([x_neg, x_pos], axis=-1), axis=1,
                                     keepdims=True))
    s_neg, s_pos = x_neg - top, x_pos - top
    denom = fnp.sum(fnp.exp(s_neg), axis=1, keepdims=True) + fnp.exp(s_pos)
    log_softmax = s_pos - fnp.log(denom)
    return -fnp.sum(fnp.where(pos, log_softmax, fnp.zeros_like(log_softmax))) / fnp.sum(pos)


# ----------------------------------------------------------------------------- sequences


def ctc_loss_with_forward_probs(logits, logit_paddings, labels, label_paddings, *, blank_id=0,
                                log_epsilon=-1e5):
    """The CTC loss per sequence, with the forward log probabilities of the blank (`phi`,
    (T, B, N + 1)) and label (`emit`, (T, B, N)) states.

    `logits` is (B, T, K), `logit_paddings` (B, T) with 1.0 at padding, `labels` (B, N)
    integers and `label_paddings` (B, N).

    Example:
      loss, phi, emit = ctc_loss_with_forward_probs(logits, lpad, labels, ypad)
    """
    fname = "ctc_loss"
    if fnp.ndim(logits) != 3 or fnp.ndim(labels) != 2:
        raise ValueError(f"{fname}: logits must be (batch, time, classes) and labels (batch, "
                         f"labels), got {fnp.shape(logits)} and {fnp.shape(labels)}.")
    b, t_max, k = logits.shape
    if labels.shape[0] != b or fnp.shape(label_paddings) != labels.shape \
            or fnp.shape(logit_paddings) != (b, t_max):
        raise ValueError(f"{fname}: shapes disagree: logits {logits.shape}, logit_paddings "
                         f"{fnp.shape(logit_paddings)}, labels {labels.shape}, "
                         f"label_paddings {fnp.shape(label_paddings)}.")
    n = labels.shape[1]
    dtype = fnp.result_type(logits)
    logprobs = _log_softmax(logits, axis=-1)
    label_lens = n - fnp.astype(fnp.sum(label_paddings, axis=1), fnp.int32)
    repeat = fnp.asarray(labels[:, :-1] == labels[:, 1:], dtype=dtype)
    repeat = fnp.concatenate([repeat, fnp.zeros((b, 1), dtype)], axis=1)
    one_hot = fnp.asarray(fnp.expand_dims(labels, -1) == fnp.arange(k), dtype=dtype)
    emit_lp = fnp.einsum("btk,bnk->btn", logprobs, one_hot)
    phi_lp = logprobs[:, :, blank_id:blank_id + 1]

    def add_to_phi(phi, score):
        return fnp.concatenate([phi[:, :1], fnp.logaddexp(phi[:, 1:], score)], axis=-1)

    phi = fnp.concatenate([fnp.zeros((b, 1), dtype), fnp.full((b, n), log_epsilon, dtype)],
                          axis=1)
    emit = fnp.full((b, n), log_epsilon, dtype)
    phis, emits = [], []
    for t in range(t_max):
        prev_phi_orig = phi
        prev_phi = add_to_phi(phi, emit + log_epsilon * repeat)
        e_lp, p_lp = emit_lp[:, t], phi_lp[:, t]
        pad = fnp.reshape(fnp.asarray(logit_paddings[:, t], dtype=dtype), (b, 1))
        next_emit = fnp.logaddexp(prev_phi[:, :-1] + e_lp, emit + e_lp)
        next_phi = add_to_phi(prev_phi + p_lp, emit + p_lp + log_epsilon * (1.0 - repeat))
        emit = pad * emit + (1.0 - pad) * next_emit
        phi = pad * prev_phi_orig + (1.0 - pad) * next_phi
        phis.append(phi)
        emits.append(emit)
    last = add_to_phi(phis[-1], emits[-1])
    phis[-1] = last
    pick = fnp.asarray(fnp.expand_dims(label_lens, -1) == fnp.arange(n + 1), dtype=dtype)
    per_seq = -fnp.sum(last * pick, axis=-1)
    return per_seq, fnp.stack(phis), fnp.stack(emits)


def ctc_loss(logits, logit_paddings, labels, label_paddings, *, blank_id=0, log_epsilon=-1e5):
    """The CTC loss (Graves et al. 2006) per sequence; see `ctc_loss_with_forward_probs`.

    Example:
      loss = ctc_loss(logits, logit_paddings, labels, label_paddings).mean()
    """
    return ctc_loss_with_forward_probs(logits, logit_paddings, labels, label_paddings,
                                       blank_id=blank_id, log_epsilon=log_epsilon)[0]
