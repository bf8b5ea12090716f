"""Losses of the models and evaluation over a data split: mean token cross-entropy in
batches (plain arrays, so nothing is traced), perplexity and bits per character."""

import math

import numpy as np

from fnad.extend import getval

import fnad_nn as nn

from . import _gpt, _rnn_models, _seq2seq
from ._util import on_params_device

__all__ = ["token_loss", "evaluate", "lm_batches", "perplexity", "bits_per_char"]


def _logits(params, config, inputs, key, train):
    if isinstance(config, _gpt.GPTConfig):
        return _gpt.gpt(params, config, inputs, key=key, train=train)
    if isinstance(config, _rnn_models.RNNLMConfig):
        return _rnn_models.rnn_lm(params, config, inputs, key=key, train=train)[0]
    src, tgt_in = inputs
    if isinstance(config, _seq2seq.Seq2SeqConfig):
        return _seq2seq.seq2seq(params, config, src, tgt_in, key=key, train=train)
    if isinstance(config, _rnn_models.RNNSeq2SeqConfig):
        return _rnn_models.rnn_seq2seq(params, config, src, tgt_in)
    raise TypeError(f"token_loss: config of type {type(config).__name__} is not a model "
                    "config; pass a GPTConfig, Seq2SeqConfig, RNNLMConfig or RNNSeq2SeqConfig.")


def token_loss(params, config, inputs, targets, *, ignore_index=None, key=None, train=False):
    """Mean cross-entropy (nats per counted target token) of a model on one batch.

    Args:
      params, config: the model.
      inputs: token ids `(B, T)` for decoder-only models; a pair `(src, tgt_in)` for
        encoder-decoder models.
      targets: next-token ids `(B, T)`.
      ignore_index: a target id that does not count (e.g. the padding id).
      key, train: dropout.

    Returns:
      A scalar, differentiable with respect to `params`.

    Example:
      loss, grads = fnad.value_and_grad(token_loss)(params, config, x, y)
    """
    logits = _logits(params, config, inputs, key, train)
    targets = on_params_device(params, targets)  # labels follow the params' device
    return nn.sparse_softmax_cross_entropy(logits, targets, ignore_index=ignore_index)


def lm_batches(data, seq_len, batch_size):
    """Non-overlapping `(x, y)` windows of a 1-D token array, `y` shifted by one, in order
    (the last batch may be smaller; the tail shorter than `seq_len + 1` is dropped).

    Example:
      loss = evaluate(params, config, lm_batches(val_ids, 128, 32))
    """
    data = np.asarray(data)
    n = (len(data) - 1) // seq_len
    if n < 1:
        raise ValueError(f"lm_batches: {len(data)} tokens are too few for one window of "
                         f"seq_len={seq_len} (+1 for the targets); use a smaller seq_len.")
    starts = np.arange(n) * seq_len
    idx = starts[:, None] + np.arange(seq_len)
    for i in range(0, n, batch_size):
        rows = idx[i:i + batch_size]
        yield data[rows], data[rows + 1]


def evaluate(params, config, batches, *, ignore_index=None):
    """Mean token cross-entropy (nats) over batches `(inputs, targets)`, weighted by the
    number of counted targets, computed on plain arrays (nothing is traced or kept).

    Example:
      val = evaluate(params, config, lm_batches(val_ids, 128, 32))
      print(perplexity(val), bits_per_char(val))
    """
    total, count = 0.0, 0
    for inputs, targets in batches:
        t = getval(targets)
        n = int((t != ignore_index).sum()) if ignore_index is not None else t.size
        if n:
            loss = token_loss(params, config, inputs, targets, ignore_index=ignore_index)
            total += float(loss) * n
            count += n
    if not count:
        raise ValueError("evaluate: the batches hold no counted targets; check the split and "
                         "ignore_index.")
    return total / count


def perplexity(loss):
    """`exp(loss)` of a mean cross-entropy in nats."""
    return math.exp(loss)


def bits_per_char(loss):
    """A mean cross-entropy in nats per character, in bits: `loss / ln 2`."""
    return loss / math.log(2.0)
