"""The encoder-decoder transformer (pre-norm): encoder self-attention under a source padding
mask, decoder causal self-attention, cross-attention that never attends to source padding,
final norms; optional `shared_tok` tying of both embeddings and the output projection, and
RoPE opted into per attention site."""

import dataclasses
import functools

import numpy as np

import fnad.random as random

import fnad_nn as nn

from . import _blocks
from ._util import (array_module, cache_length, check_model, check_tokens, check_transformer_config,
                    dropout_keys, embed_scale, init_cache, init_norm, norm, on_params_device,
                    param_dtype, rope_tables, sinusoid_table)

__all__ = ["Seq2SeqConfig", "init_seq2seq", "seq2seq", "encode", "decode",
           "init_seq2seq_cache"]

POSITIONS = ("sinusoidal", "learned", "none")


@dataclasses.dataclass(frozen=True)
class Seq2SeqConfig:
    """The shape of an encoder-decoder transformer (hashable; pass it next to the params).

    Attributes:
      src_vocab, tgt_vocab: vocabulary sizes.
      d_model, n_heads: width and attention heads.
      n_enc_layers, n_dec_layers: encoder and decoder blocks.
      max_len: the longest source or target sequence.
      d_ff: feed-forward hidden size (default 4 * d_model).
      pad_id: the padding id of source (and target) sequences.
      shared_tok: one matrix for the source embedding, the target embedding and the output
        projection (needs `src_vocab == tgt_vocab`); embeddings are then scaled by
        sqrt(d_model) and the output has a learned bias.
      positions: additive positions on both embeddings: "sinusoidal", "learned" or "none".
      rope_encoder, rope_decoder, rope_cross_q, rope_cross_k: RoPE at the encoder
        self-attention, decoder self-attention, cross-attention queries (decoder positions)
        and cross-attention keys (source positions).
      rope_base, rope_scale: RoPE frequency base and length-interpolation factor.
      norm, norm_eps, activation, dropout, bias, dtype: as in `GPTConfig`.
    """
    src_vocab: int
    tgt_vocab: int
    d_model: int = 128
    n_heads: int = 4
    n_enc_layers: int = 3
    n_dec_layers: int = 3
    max_len: int = 128
    d_ff: int = None
    pad_id: int = 0
    shared_tok: bool = False
    positions: str = "sinusoidal"
    rope_encoder: bool = False
    rope_decoder: bool = False
    rope_cross_q: bool = False
    rope_cross_k: bool = False
    rope_base: float = 10000.0
    rope_scale: float = 1.0
    norm: str = "layer"
    norm_eps: float = 1e-5
    activation: str = "relu"
    dropout: float = 0.0
    bias: bool = True
    dtype: type = np.float32

    def __post_init__(self):
        check_transformer_config("Seq2SeqConfig", self, POSITIONS)
        if self.shared_tok and self.src_vocab != self.tgt_vocab:
            raise ValueError(f"Seq2SeqConfig: shared_tok=True needs src_vocab == tgt_vocab, "
                             f"got {self.src_vocab} and {self.tgt_vocab}; use one joint "
                             "vocabulary or shared_tok=False.")


def init_seq2seq(key, config):
    """Parameters of an encoder-decoder transformer.

    Embeddings are `N(0, d_model**-0.5)` when shared (so the sqrt(d_model)-scaled inputs
    are of unit size), else `N(0, 0.02)`; blocks use PyTorch's layer defaults.

    Args:
      key: a `fnad.random.PRNGKey`.
      config: a `Seq2SeqConfig`.

    Returns:
      `{"tok": {"w"}, "out_b"}` when shared, else `{"src_tok", "tgt_tok", "head"}`; plus
      `["src_pos", "tgt_pos"]`, `"enc": [...]`, `"enc_norm"`, `"dec": [...]`, `"dec_norm"`.

    Example:
      config = Seq2SeqConfig(src_vocab=40, tgt_vocab=40, d_model=64, shared_tok=True)
      params = init_seq2seq(fnad.random.PRNGKey(0), config)
    """
    c = config
    ks, kt, kh, kp, kq, ke, kd = random.split(key, 7)
    std = c.d_model ** -0.5 if c.shared_tok else 0.02
    w_init = functools.partial(nn.init.normal, std=std)
    params = {}
    if c.shared_tok:
        params["tok"] = nn.init_embedding(ks, c.src_vocab, c.d_model, dtype=c.dtype,
                                          w_init=w_init)
        params["out_b"] = np.zeros((c.tgt_vocab,), c.dtype)
    else:
        params["src_tok"] = nn.init_embedding(ks, c.src_vocab, c.d_model, dtype=c.dtype,
                                              w_init=w_init)
        params["tgt_tok"] = nn.init_embedding(kt, c.tgt_vocab, c.d_model, dtype=c.dtype,
                                              w_init=w_init)
        params["head"] = nn.init_linear(kh, c.d_model, c.tgt_vocab, bias=c.bias, dtype=c.dtype)
    if c.positions == "learned":
        normal02 = functools.partial(nn.init.normal, std=0.02)
        params["src_pos"] = nn.init_positional_embedding(kp, c.max_len, c.d_model,
                                                         dtype=c.dtype, w_init=normal02)
        params["tgt_pos"] = nn.init_positional_embedding(kq, c.max_len, c.d_model,
                                                         dtype=c.dtype, w_init=normal02)
    kw = dict(norm_kind=c.norm, activation=c.activation, bias=c.bias, dtype=c.dtype)
    params["enc"] = [_blocks.init_self_block(k, c.d_model, c.n_heads, c.d_ff, **kw)
                     for k in random.split(ke, c.n_enc_layers)]
    params["enc_norm"] = init_norm(c.norm, c.d_model, c.dtype)
    params["dec"] = [_blocks.init_cross_block(k, c.d_model, c.n_heads, c.d_ff, **kw)
                     for k in random.split(kd, c.n_dec_layers)]
    params["dec_norm"] = init_norm(c.norm, c.d_model, c.dtype)
    return params


def _embed(params, c, ids, side, offset, key, train):
    tok = params["tok"] if c.shared_tok else params[side + "_tok"]
    x = nn.embedding(tok, ids)
    if c.shared_tok:
        x = x * embed_scale(c.d_model, True)
    t = ids.shape[-1]
    if offset + t > c.max_len:
        raise ValueError(f"seq2seq: {'source' if side == 'src' else 'target'} positions "
                         f"{offset}..{offset + t - 1} exceed max_len={c.max_len}; shorten the "
                         "sequences or initialise with a larger max_len.")
    if c.positions == "learned":
        x = nn.positional_embedding(params[side + "_pos"], x, offset=offset)
    elif c.positions == "sinusoidal":
        xp, dt = array_module(params), param_dtype(params)
        x = x + sinusoid_table(xp, dt, c.max_len, c.d_model)[offset:offset + t]
    return nn.dropout(x, c.dropout, key=key, train=train)


def _rope(params, c, on):
    if not on:
        return None
    xp, dt = array_module(params), param_dtype(params)
    return rope_tables(xp, dt, c.max_len, c.d_model // c.n_heads, c.rope_base, c.rope_scale)


def _src_mask(params, c, src):
    return on_params_device(params, nn.padding_mask(src, pad_id=c.pad_id))


def _seq2seq_keys(c):
    """The top-level keys init_seq2seq gives for config `c`."""
    return (("tok", "out_b") if c.shared_tok else ("src_tok", "tgt_tok", "head")) + (
        ("src_pos", "tgt_pos") if c.positions == "learned" else ()) + (
        "enc", "enc_norm", "dec", "dec_norm")


def encode(params, config, src, *, key=None, train=False):
    """The encoder output `(B, S, d_model)` for source ids `(B, S)` padded with `pad_id`.

    Example:
      memory = encode(params, config, src)
    """
    c = config
    check_model("seq2seq encode", params, "init_seq2seq", _seq2seq_keys(c))
    src = check_tokens("seq2seq encode", params, src)
    keys = dropout_keys("seq2seq", key, 3 * c.n_enc_layers + 1, train, c.dropout)
    x = _embed(params, c, src, "src", 0, keys[-1], train)
    mask, rope = _src_mask(params, c, src), _rope(params, c, c.rope_encoder)
    for i, p in enumerate(params["enc"]):
        x = _blocks.self_block(p, x, c, keys=keys[3 * i:3 * i + 3], train=train, mask=mask,
                               rope=rope)
    return norm(c.norm, params["enc_norm"], x, c.norm_eps)


def init_seq2seq_cache(params, config, memory, src):
    """Decoding state for `decode(..., cache=)`: the cross-attention keys/values of every
    decoder block (projected once), the source padding mask, and empty self-attention
    caches.

    Example:
      cache = init_seq2seq_cache(params, config, encode(params, config, src), src)
    """
    c = config
    rope_k = _rope(params, c, c.rope_cross_k)
    return {"cross": [nn.context_kv(p["cross_attn"], memory, rope=rope_k) for p in params["dec"]],
            "self": init_cache(params, c.n_dec_layers, memory.shape[0], c.n_heads,
                               c.d_model // c.n_heads, c.max_len),
            "mask": _src_mask(params, c, src)}


def decode(params, config, memory, src, tgt_in, *, key=None, train=False, cache=None):
    """Decoder logits `(B, T, tgt_vocab)` for target inputs `(B, T)` given the encoder
    output `memory` and the source ids (for the padding mask).

    With `cache` (from `init_seq2seq_cache`), `memory` and `src` may be None, `tgt_in` are
    the positions after the cached ones, and the result is `(logits, new_cache)`.

    Example:
      logits = decode(params, config, encode(params, config, src), src, tgt_in)
    """
    c = config
    check_model("seq2seq decode", params, "init_seq2seq", _seq2seq_keys(c))
    tgt_in = check_tokens("seq2seq decode", params, tgt_in)
    keys = dropout_keys("seq2seq", key, 4 * c.n_dec_layers + 1, train, c.dropout)
    offset = 0 if cache is None else cache_length(cache["self"][0])
    x = _embed(params, c, tgt_in, "tgt", offset, keys[-1], train)
    mask = _src_mask(params, c, src) if cache is None else cache["mask"]
    self_rope = _rope(params, c, c.rope_decoder)
    cross_rope = (_rope(params, c, c.rope_cross_q), _rope(params, c, c.rope_cross_k))
    new_self = []
    for i, p in enumerate(params["dec"]):
        kw = dict(keys=keys[4 * i:4 * i + 4], train=train, cross_mask=mask, self_rope=self_rope,
                  cross_rope=cross_rope)
        if cache is None:
            x = _blocks.cross_block(p, x, c, context=memory, **kw)
        else:
            x, layer = _blocks.cross_block(p, x, c, context_kv=cache["cross"][i],
                                           cache=cache["self"][i], **kw)
            new_self.append(layer)
    h = norm(c.norm, params["dec_norm"], x, c.norm_eps)
    if c.shared_tok:
        logits = h @ params["tok"]["w"].T + params["out_b"]
    else:
        logits = nn.linear(params["head"], h)
    return logits if cache is None else (logits, dict(cache, self=new_self))


def seq2seq(params, config, src, tgt_in, *, key=None, train=False):
    """Logits `(B, T, tgt_vocab)` of the target inputs given the source ids.

    Args:
      params: from `init_seq2seq`.
      config: the `Seq2SeqConfig`.
      src: source ids `(B, S)`, padded with `config.pad_id` (padding is never attended).
      tgt_in: decoder inputs `(B, T)` (e.g. `[BOS, y_1, ..., y_{T-1}]`).
      key: a `fnad.random.PRNGKey` for dropout; train: whether dropout is active.

    Returns:
      Logits `(B, T, tgt_vocab)`.

    Example:
      logits = seq2seq(params, config, src, tgt[:, :-1])
      loss = fnad_nn.sparse_softmax_cross_entropy(logits, tgt[:, 1:], ignore_index=0)
    """
    ke, kd = dropout_keys("seq2seq", key, 2, train, config.dropout)
    memory = encode(params, config, src, key=ke, train=train)
    return decode(params, config, memory, src, tgt_in, key=kd, train=train)
