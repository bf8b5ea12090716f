"""Pre-norm transformer blocks with a choice of norm (LayerNorm or RMSNorm), shared by GPT
and Seq2Seq. Each sublayer is `x + dropout(sublayer(norm(x)))`."""

import fnad.random as random

import fnad_nn as nn

from ._util import cache_length, init_norm, norm


def init_self_block(key, d_model, n_heads, d_ff, *, norm_kind, activation, bias, dtype):
    """`{"norm1", "attn", "norm2", "ff"}`: self-attention and feed-forward."""
    ka, kf = random.split(key, 2)
    return {"norm1": init_norm(norm_kind, d_model, dtype),
            "attn": nn.init_multi_head_attention(ka, d_model, n_heads, bias=bias, dtype=dtype),
            "norm2": init_norm(norm_kind, d_model, dtype),
            "ff": nn.init_feed_forward(kf, d_model, d_ff, activation=activation, bias=bias,
                                       dtype=dtype)}


def init_cross_block(key, d_model, n_heads, d_ff, *, norm_kind, activation, bias, dtype):
    """`{"norm1", "self_attn", "norm2", "cross_attn", "norm3", "ff"}`."""
    ks, kc, kf = random.split(key, 3)
    return {"norm1": init_norm(norm_kind, d_model, dtype),
            "self_attn": nn.init_multi_head_attention(ks, d_model, n_heads, bias=bias,
                                                      dtype=dtype),
            "norm2": init_norm(norm_kind, d_model, dtype),
            "cross_attn": nn.init_multi_head_attention(kc, d_model, n_heads, bias=bias,
                                                       dtype=dtype),
            "norm3": init_norm(norm_kind, d_model, dtype),
            "ff": nn.init_feed_forward(kf, d_model, d_ff, activation=activation, bias=bias,
                                       dtype=dtype)}


def _residual(x, y, rate, key, train):
    return x + nn.dropout(y, rate, key=key, train=train)


def _ff(p, x, cfg, key, train):
    return nn.feed_forward(p["ff"], x, activation=cfg.activation, dropout_rate=cfg.dropout,
                           key=key, train=train)


def self_block(p, x, cfg, *, keys, train, mask=None, causal=False, rope=None, cache=None):
    """Self-attention block; with `cache` returns `(x, new_cache)`."""
    k1, k2, k3 = keys
    causal = causal and x.shape[-2] > 1  # one query (a decoding step) sees every key anyway
    a = nn.multi_head_attention(p["attn"], norm(cfg.norm, p["norm1"], x, cfg.norm_eps),
                                mask=mask, causal=causal, rope=rope, kv_cache=cache)
    if cache is not None:
        a, cache = a
    x = _residual(x, a, cfg.dropout, k1, train)
    f = _ff(p, norm(cfg.norm, p["norm2"], x, cfg.norm_eps), cfg, k2, train)
    x = _residual(x, f, cfg.dropout, k3, train)
    return x if cache is None else (x, cache)


def cross_block(p, x, cfg, *, keys, train, context=None, context_kv=None, cross_mask=None,
                self_rope=None, cross_rope=None, cache=None):
    """Causal self-attention, cross-attention into the encoder output (never to its padding),
    feed-forward; with `cache` (self-attention keys so far) returns `(x, new_cache)`."""
    k1, k2, k3, k4 = keys
    pos = 0 if cache is None else cache_length(cache)
    a = nn.multi_head_attention(p["self_attn"], norm(cfg.norm, p["norm1"], x, cfg.norm_eps),
                                causal=x.shape[-2] > 1, rope=self_rope, kv_cache=cache)
    if cache is not None:
        a, cache = a
    x = _residual(x, a, cfg.dropout, k1, train)
    c = nn.multi_head_attention(p["cross_attn"], norm(cfg.norm, p["norm2"], x, cfg.norm_eps),
                                context, context_kv=context_kv, mask=cross_mask,
                                rope=cross_rope, offset=pos)
    x = _residual(x, c, cfg.dropout, k2, train)
    f = _ff(p, norm(cfg.norm, p["norm3"], x, cfg.norm_eps), cfg, k3, train)
    x = _residual(x, f, cfg.dropout, k4, train)
    return x if cache is None else (x, cache)
