"""Feed-forward sublayers and pre-norm transformer blocks (encoder and decoder)."""

import numpy as np

import fnad

from ._activations import gelu, relu, silu
from ._attention import init_multi_head_attention, multi_head_attention
from ._dropout import dropout
from ._linear import init_linear, linear
from ._norm import init_layer_norm, layer_norm
from ._util import ParamSpec, check_params, split_key

__all__ = ["init_feed_forward", "feed_forward", "init_transformer_block", "transformer_block",
           "init_decoder_block", "decoder_block"]

_ACTIVATIONS = {"relu": relu, "gelu": gelu, "gelu_tanh": lambda x: gelu(x, approximate=True),
                "silu": silu}


def init_feed_forward(key, d_model, d_ff=None, *, activation="relu", bias=True,
                      dtype=np.float32):
    """Parameters of a position-wise feed-forward sublayer.

    Args:
      key: a `fnad.random.PRNGKey`.
      d_model: input and output size.
      d_ff: hidden size (default 4 * d_model).
      activation: "relu", "gelu", "gelu_tanh", "silu" (two linear layers) or "swiglu"
        (adds a gate: `fc2(silu(gate(x)) * fc1(x))`).
      bias: whether the linear layers have biases.
      dtype: parameter dtype.

    Returns:
      `{"fc1", "fc2"}` (plus `"gate"` for swiglu), each an `init_linear` dict.

    Example:
      params = init_feed_forward(fnad.random.PRNGKey(0), 128, activation="swiglu")
      y = feed_forward(params, x)
    """
    d_ff = 4 * d_model if d_ff is None else d_ff
    k1, k2, k3 = split_key(key, 3)
    params = {"fc1": init_linear(k1, d_model, d_ff, bias=bias, dtype=dtype),
              "fc2": init_linear(k2, d_ff, d_model, bias=bias, dtype=dtype)}
    if activation == "swiglu":
        params["gate"] = init_linear(k3, d_model, d_ff, bias=bias, dtype=dtype)
    elif activation not in _ACTIVATIONS:
        raise ValueError(f"init_feed_forward: activation={activation!r}; use one of "
                         f"{sorted(_ACTIVATIONS) + ['swiglu']}.")
    return params


# the sublayers check their own params; "gate" is there for the gated activations only
_FEED_FORWARD = ParamSpec("init_feed_forward", {"fc1": None, "fc2": None, "gate": None},
                          absent=("gate",))
_BLOCK = ParamSpec("init_transformer_block", dict.fromkeys(("ln1", "attn", "ln2", "ff")))
_DECODER_BLOCK = ParamSpec("init_decoder_block", dict.fromkeys(
    ("ln1", "self_attn", "ln2", "cross_attn", "ln3", "ff")))


def feed_forward(params, x, *, activation=None, dropout_rate=0.0, key=None, train=False):
    """Position-wise feed-forward: `fc2(dropout(act(fc1(x))))`, or SwiGLU
    `fc2(dropout(silu(gate(x)) * fc1(x)))`.

    Args:
      params: from `init_feed_forward`.
      x: array `(..., d_model)`.
      activation: "relu", "gelu", "gelu_tanh", "silu", "swiglu" or a function; default
        "swiglu" when params has a "gate", else "relu".
      dropout_rate: dropout on the hidden layer when training.
      key: a `fnad.random.PRNGKey` for dropout (keyword-only).
      train: whether dropout is active.

    Returns:
      An array shaped like `x`.

    Example:
      y = feed_forward(params, x, activation="gelu")
    """
    check_params("feed_forward", params, x, spec=_FEED_FORWARD)
    gated = "gate" in params
    if activation is None:
        activation = "swiglu" if gated else "relu"
    if (activation == "swiglu") != gated:
        raise ValueError(f"feed_forward: activation={activation!r} but the params "
                         f"{'have' if gated else 'lack'} a 'gate'; initialise with "
                         f"init_feed_forward(..., activation={activation!r}).")
    h = linear(params["fc1"], x)
    if gated:
        h = silu(linear(params["gate"], x)) * h
    else:
        act = activation if callable(activation) else _ACTIVATIONS.get(activation)
        if act is None:
            raise ValueError(f"feed_forward: unknown activation {activation!r}; use one of "
                             f"{sorted(_ACTIVATIONS) + ['swiglu']} or pass a function.")
        h = act(h)
    h = dropout(h, dropout_rate, key=key, train=train)
    return linear(params["fc2"], h)


def _keys(key, n, train, rate):
    if train and rate and key is None:
        raise ValueError("transformer block: training with dropout needs key=; pass "
                         "key=fnad.random.PRNGKey(...) or train=False.")
    return split_key(key, n) if (train and rate) else [None] * n


def init_transformer_block(key, d_model, n_heads, d_ff=None, *, activation="relu", bias=True,
                           dtype=np.float32):
    """Parameters of a pre-norm transformer block.

    Args:
      key: a `fnad.random.PRNGKey`.
      d_model: model width.
      n_heads: attention heads.
      d_ff: feed-forward hidden size (default 4 * d_model).
      activation: feed-forward activation (see `init_feed_forward`).
      bias: whether linear layers have biases.
      dtype: parameter dtype.

    Returns:
      `{"ln1", "attn", "ln2", "ff"}`.

    Example:
      params = init_transformer_block(fnad.random.PRNGKey(0), 128, 4)
      y = transformer_block(params, x, causal=True)
    """
    ka, kf = split_key(key, 2)
    return {"ln1": init_layer_norm(d_model, dtype=dtype),
            "attn": init_multi_head_attention(ka, d_model, n_heads, bias=bias, dtype=dtype),
            "ln2": init_layer_norm(d_model, dtype=dtype),
            "ff": init_feed_forward(kf, d_model, d_ff, activation=activation, bias=bias,
                                    dtype=dtype)}


@fnad.named_scope("transformer_block")
def transformer_block(params, x, *, mask=None, causal=False, rope=None, activation=None,
                      dropout_rate=0.0, key=None, train=False, kv_cache=None):
    """Pre-norm block: `x + attn(ln1(x))`, then `h + ff(ln2(h))`.

    Args:
      params: from `init_transformer_block`.
      x: array `(..., T, d_model)`.
      mask: attention mask (see `multi_head_attention`), e.g. a padding mask.
      causal: causal self-attention (language models).
      rope: optional `rotary_tables(...)` for queries and keys.
      activation: feed-forward activation (default from the params).
      dropout_rate: dropout on both residual branches and the feed-forward hidden layer.
      key: a `fnad.random.PRNGKey` for dropout (keyword-only).
      train: whether dropout is active.
      kv_cache: optional self-attention cache (see `multi_head_attention`).

    Returns:
      An array shaped like `x`; with `kv_cache`, `(output, new_cache)`.

    Example:
      params = init_transformer_block(key, 128, 4)
      y = transformer_block(params, x, causal=True)
    """
    check_params("transformer_block", params, x, spec=_BLOCK)
    k1, k2, k3 = _keys(key, 3, train, dropout_rate)
    a = multi_head_attention(params["attn"], layer_norm(params["ln1"], x), mask=mask,
                             causal=causal, rope=rope, kv_cache=kv_cache)
    if kv_cache is not None:
        a, kv_cache = a
    x = x + dropout(a, dropout_rate, key=k1, train=train)
    f = feed_forward(params["ff"], layer_norm(params["ln2"], x), activation=activation,
                     dropout_rate=dropout_rate, key=k2, train=train)
    x = x + dropout(f, dropout_rate, key=k3, train=train)
    return (x, kv_cache) if kv_cache is not None else x


def init_decoder_block(key, d_model, n_heads, d_ff=None, *, d_context=None, activation="relu",
                       bias=True, dtype=np.float32):
    """Parameters of a pre-norm encoder-decoder block (self-attention, cross-attention,
    feed-forward).

    Args:
      key: a `fnad.random.PRNGKey`.
      d_model: decoder width.
      n_heads: attention heads.
      d_ff: feed-forward hidden size (default 4 * d_model).
      d_context: encoder output width (default d_model).
      activation: feed-forward activation.
      bias: whether linear layers have biases.
      dtype: parameter dtype.

    Returns:
      `{"ln1", "self_attn", "ln2", "cross_attn", "ln3", "ff"}`.

    Example:
      params = init_decoder_block(fnad.random.PRNGKey(0), 128, 4)
      y = decoder_block(params, x_dec, enc_out, cross_mask=padding_mask(src_ids))
    """
    ks, kc, kf = split_key(key, 3)
    return {"ln1": init_layer_norm(d_model, dtype=dtype),
            "self_attn": init_multi_head_attention(ks, d_model, n_heads, bias=bias, dtype=dtype),
            "ln2": init_layer_norm(d_model, dtype=dtype),
            "cross_attn": init_multi_head_attention(kc, d_model, n_heads, d_context=d_context,
                                                    bias=bias, dtype=dtype),
            "ln3": init_layer_norm(d_model, dtype=dtype),
            "ff": init_feed_forward(kf, d_model, d_ff, activation=activation, bias=bias,
                                    dtype=dtype)}


@fnad.named_scope("decoder_block")
def decoder_block(params, x, context, *, mask=None, cross_mask=None, causal=True, rope=None,
                  cross_rope=None, activation=None, dropout_rate=0.0, key=None, train=False,
                  kv_cache=None):
    """Pre-norm decoder block: masked self-attention, cross-attention into `context`,
    feed-forward, each as a residual branch.

    Args:
      params: from `init_decoder_block`.
      x: decoder stream `(..., T, d_model)`.
      context: encoder output `(..., S, d_context)`.
      mask: extra self-attention mask (bool/float, broadcastable to `(..., H, T, T)`).
      cross_mask: cross-attention mask, e.g. `padding_mask(src_ids)`.
      causal: causal self-attention (default True).
      rope: optional rotary tables for the self-attention.
      cross_rope: optional rotary tables (or a `(rope_q, rope_k)` pair) for cross-attention.
      activation: feed-forward activation.
      dropout_rate, key, train: residual and hidden dropout, as in `transformer_block`.
      kv_cache: optional self-attention cache.

    Returns:
      An array shaped like `x`; with `kv_cache`, `(output, new_cache)`.

    Example:
      params = init_decoder_block(key, 128, 4)
      y = decoder_block(params, x_dec, enc_out, cross_mask=padding_mask(src_ids))
    """
    check_params("decoder_block", params, x, call="decoder_block(params, x, context)",
                 spec=_DECODER_BLOCK)
    k1, k2, k3, k4 = _keys(key, 4, train, dropout_rate)
    a = multi_head_attention(params["self_attn"], layer_norm(params["ln1"], x), mask=mask,
                             causal=causal, rope=rope, kv_cache=kv_cache)
    if kv_cache is not None:
        a, kv_cache = a
    x = x + dropout(a, dropout_rate, key=k1, train=train)
    c = multi_head_attention(params["cross_attn"], layer_norm(params["ln2"], x), context,
                             mask=cross_mask, rope=cross_rope)
    x = x + dropout(c, dropout_rate, key=k2, train=train)
    f = feed_forward(params["ff"], layer_norm(params["ln3"], x), activation=activation,
                     dropout_rate=dropout_rate, key=k3, train=train)
    x = x + dropout(f, dropout_rate, key=k4, train=train)
    return (x, kv_cache) if kv_cache is not None else x
