"""A configurable decoder-only transformer (GPT): learned, sinusoidal or rotary positions,
pre-norm LayerNorm or RMSNorm blocks, ReLU/GELU/SwiGLU feed-forward, dropout, and an output
head tied to the token embedding (one leaf)."""

import dataclasses
import functools

import numpy as np

import fnad
import fnad.random as random

import fnad_nn as nn

from . import _blocks
from ._util import (array_module, cache_length, check_model, check_tokens, check_transformer_config,
                    dropout_keys, init_cache, init_norm, norm, param_dtype, rope_tables,
                    sinusoid_table)

__all__ = ["GPTConfig", "init_gpt", "gpt", "init_gpt_cache"]

POSITIONS = ("learned", "sinusoidal", "rotary")


@dataclasses.dataclass(frozen=True)
class GPTConfig:
    """The shape of a GPT (hashable; pass it next to the params).

    Attributes:
      vocab: vocabulary size.
      d_model, n_heads, n_layers: width, attention heads, blocks.
      max_len: the longest sequence (position table / rotary table length).
      d_ff: feed-forward hidden size (default 4 * d_model).
      positions: "learned" (a table added to the embeddings), "sinusoidal" (fixed, added;
        the seed's GPTV1) or "rotary" (RoPE on queries and keys; the seed's GPT2).
      rope_base, rope_scale: RoPE frequency base and length-interpolation factor.
      norm: "layer" (LayerNorm) or "rms" (RMSNorm), applied before each sublayer and at
        the end.
      norm_eps: the norms' epsilon.
      activation: "relu", "gelu", "gelu_tanh", "silu" or "swiglu".
      dropout: rate on embeddings, residual branches and the feed-forward hidden layer.
      tie_embeddings: the output head is the token embedding transposed (one leaf).
      bias: biases in the attention and feed-forward projections.
      dtype: parameter dtype.
    """
    vocab: int
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 4
    max_len: int = 256
    d_ff: int = None
    positions: str = "learned"
    rope_base: float = 10000.0
    rope_scale: float = 1.0
    norm: str = "layer"
    norm_eps: float = 1e-5
    activation: str = "gelu"
    dropout: float = 0.0
    tie_embeddings: bool = True
    bias: bool = True
    dtype: type = np.float32

    def __post_init__(self):
        check_transformer_config("GPTConfig", self, POSITIONS)
        if self.positions == "rotary" and (self.d_model // self.n_heads) % 2:
            raise ValueError(f"GPTConfig: rotary positions need an even head size, got "
                             f"d_model // n_heads = {self.d_model // self.n_heads}.")


def init_gpt(key, config):
    """Parameters of a GPT: token embedding `N(0, 0.02)`, learned positions `N(0, 0.02)`
    (when chosen), pre-norm blocks (PyTorch's layer defaults), final norm, and a head
    `{"w": (d_model, vocab), "b"}` unless tied.

    Args:
      key: a `fnad.random.PRNGKey`.
      config: a `GPTConfig`.

    Returns:
      `{"tok": {"w"}, ["pos": {"w"}], "blocks": [...], "norm": {...}, ["head": {...}]}`.

    Example:
      config = GPTConfig(vocab=65, d_model=64, n_heads=4, n_layers=2, max_len=128)
      params = init_gpt(fnad.random.PRNGKey(0), config)
    """
    c = config
    kt, kp, kh, kb = random.split(key, 4)
    normal02 = functools.partial(nn.init.normal, std=0.02)
    params = {"tok": nn.init_embedding(kt, c.vocab, c.d_model, dtype=c.dtype, w_init=normal02)}
    if c.positions == "learned":
        params["pos"] = nn.init_positional_embedding(kp, c.max_len, c.d_model, dtype=c.dtype,
                                                     w_init=normal02)
    params["blocks"] = [
        _blocks.init_self_block(k, c.d_model, c.n_heads, c.d_ff, norm_kind=c.norm,
                                activation=c.activation, bias=c.bias, dtype=c.dtype)
        for k in random.split(kb, c.n_layers)]
    params["norm"] = init_norm(c.norm, c.d_model, c.dtype)
    if not c.tie_embeddings:
        params["head"] = nn.init_linear(kh, c.d_model, c.vocab, bias=c.bias, dtype=c.dtype)
    return params


def init_gpt_cache(params, config, batch_size):
    """An empty key/value cache per block, on the params' device, for `gpt(..., cache=)`:
    buffers for `config.max_len` positions written in place (keep only the newest cache).

    Example:
      cache = init_gpt_cache(params, config, 4)
      logits, cache = gpt(params, config, prompt, cache=cache)
    """
    c = config
    return init_cache(params, c.n_layers, batch_size, c.n_heads, c.d_model // c.n_heads,
                      c.max_len)


def gpt(params, config, tokens, *, key=None, train=False, cache=None):
    """Logits of a GPT for token ids, causally masked.

    Args:
      params: from `init_gpt`.
      config: the `GPTConfig` used to initialise them.
      tokens: integer ids `(B, T)`.
      key: a `fnad.random.PRNGKey` for dropout (only used with `train=True`).
      train: whether dropout is active.
      cache: optional per-block key/value cache from `init_gpt_cache` (or a previous call):
        `tokens` are then the positions after the cached ones.

    Returns:
      Logits `(B, T, vocab)`; with `cache`, `(logits, new_cache)`.

    Example:
      logits = gpt(params, config, tokens)
      loss = fnad_nn.sparse_softmax_cross_entropy(logits, targets)
    """
    c = config
    check_model("gpt", params, "init_gpt", ("tok", "blocks", "norm")
                + ("pos",) * (c.positions == "learned") + ("head",) * (not c.tie_embeddings))
    tok = check_tokens("gpt", params, tokens)
    t = tok.shape[-1]
    offset = 0 if cache is None else cache_length(cache[0])
    if offset + t > c.max_len:
        raise ValueError(f"gpt: positions {offset}..{offset + t - 1} exceed max_len="
                         f"{c.max_len}; crop the input to its last {c.max_len - offset} tokens "
                         "or initialise with a larger max_len.")
    keys = dropout_keys("gpt", key, 3 * c.n_layers + 1, train, c.dropout)
    x = nn.embedding(params["tok"], tok)
    xp, dt = array_module(params), param_dtype(params)
    rope = None
    if c.positions == "learned":
        x = nn.positional_embedding(params["pos"], x, offset=offset)
    elif c.positions == "sinusoidal":
        x = x + sinusoid_table(xp, dt, c.max_len, c.d_model)[offset:offset + t]
    else:
        rope = rope_tables(xp, dt, c.max_len, c.d_model // c.n_heads, c.rope_base, c.rope_scale)
    x = nn.dropout(x, c.dropout, key=keys[-1], train=train)
    new_cache = None if cache is None else []
    for i, p in enumerate(params["blocks"]):
        with fnad.named_scope(f"block_{i}"):
            x = _blocks.self_block(p, x, c, keys=keys[3 * i:3 * i + 3], train=train,
                                   causal=True, rope=rope,
                                   cache=None if cache is None else cache[i])
        if cache is not None:
            x, layer_cache = x
            new_cache.append(layer_cache)
    logits = head(params, c, norm(c.norm, params["norm"], x, c.norm_eps))
    return logits if cache is None else (logits, new_cache)


def head(params, config, h):
    """The output projection: the tied embedding transposed, or the untied head."""
    if config.tie_embeddings:
        return h @ params["tok"]["w"].T
    return nn.linear(params["head"], h)

