"""Positions: sinusoidal encodings, learned positional embeddings, rotary embeddings."""

import numpy as np

import fnad.numpy as fnp

from . import _init
from ._util import ParamSpec, check_params, shape_of

__all__ = ["sinusoidal_positional_encoding", "init_positional_embedding",
           "positional_embedding", "rotary_tables", "rotary_embedding"]


def sinusoidal_positional_encoding(max_len, d_model, *, base=10000.0, dtype=np.float32):
    """The fixed encodings of "Attention Is All You Need":
    `pe[p, 2i] = sin(p / base**(2i/d))`, `pe[p, 2i+1] = cos(p / base**(2i/d))`.

    Args:
      max_len: number of positions.
      d_model: encoding size (odd sizes drop the last cosine).
      base: wavelength base.
      dtype: output dtype.

    Returns:
      A constant array `(max_len, d_model)`; add `pe[:T]` to `(..., T, d_model)` inputs.

    Example:
      pe = sinusoidal_positional_encoding(128, 64)
      x = x + pe[:x.shape[-2]]
    """
    pos = np.arange(max_len, dtype=np.float64)[:, None]
    freq = base ** (-np.arange(0, d_model, 2, dtype=np.float64) / d_model)
    pe = np.zeros((max_len, d_model), np.float64)
    pe[:, 0::2] = np.sin(pos * freq)
    pe[:, 1::2] = np.cos(pos * freq)[:, : d_model // 2]
    return pe.astype(dtype)


def init_positional_embedding(key, max_len, d_model, *, dtype=np.float32, w_init=None):
    """A learned table of `max_len` position vectors (`N(0, 1)` like nn.Embedding by default).

    Args:
      key: a `fnad.random.PRNGKey`.
      max_len: number of positions.
      d_model: vector size.
      dtype: parameter dtype.
      w_init: optional initialiser `init(key, shape, dtype)`.

    Returns:
      `{"w": (max_len, d_model)}`.

    Example:
      params = init_positional_embedding(key, 128, 64, w_init=fnad_nn.init.normal)
    """
    return {"w": (w_init or _init.normal)(key, (max_len, d_model), dtype)}


_POSITIONAL = ParamSpec("init_positional_embedding", {"w": 2})


def positional_embedding(params, x, *, offset=0):
    """`x + w[offset : offset + T]` for `x` of shape `(..., T, d_model)`.

    Args:
      params: `{"w": (max_len, d_model)}`.
      x: array `(..., T, d_model)`.
      offset: position of the first element (for decoding with a cache).

    Returns:
      An array shaped like `x`.

    Example:
      h = positional_embedding(params["pos"], embedding(params["tok"], ids))
    """
    check_params("positional_embedding", params, x, spec=_POSITIONAL)
    t = shape_of(x)[-2]
    max_len = shape_of(params["w"])[0]
    if offset + t > max_len:
        raise ValueError(f"positional_embedding: positions {offset}..{offset + t - 1} exceed the "
                         f"table of {max_len}; initialise with a larger max_len.")
    return x + params["w"][offset:offset + t]


def rotary_tables(max_len, d_head, *, base=10000.0, scale=1.0, dtype=np.float32):
    """Cosine and sine tables for rotary position embeddings (RoPE).

    The angle of position p in frequency pair i is `(p / scale) * base**(-2i / d_head)`;
    `scale > 1` interpolates positions, stretching a model trained on length L to length
    `scale * L`. Pairs are the two halves of the head dimension (GPT-NeoX/LLaMA layout).
    The tables are constants, not parameters: pass them as `rope=` to attention.

    Args:
      max_len: number of positions.
      d_head: per-head dimension (even), not d_model.
      base: frequency base.
      scale: position interpolation factor.
      dtype: table dtype.

    Returns:
      `{"cos": (max_len, d_head), "sin": (max_len, d_head)}`.

    Example:
      rope = rotary_tables(256, 64 // 4)
      y = multi_head_attention(params, x, causal=True, rope=rope)
    """
    if d_head % 2:
        raise ValueError(f"rotary_tables: d_head={d_head} must be even (RoPE rotates pairs); "
                         "use the per-head dimension d_model // n_heads.")
    inv_freq = base ** (-np.arange(0, d_head, 2, dtype=np.float64) / d_head)
    ang = (np.arange(max_len, dtype=np.float64) / scale)[:, None] * inv_freq
    ang = np.concatenate([ang, ang], axis=-1)
    return {"cos": np.cos(ang).astype(dtype), "sin": np.sin(ang).astype(dtype)}


def rotary_embedding(x, tables, *, offset=0):
    """Rotate `x` of shape `(..., T, d_head)` by its positions `offset .. offset + T - 1`:
    `x * cos + rotate_half(x) * sin`, `rotate_half([a, b]) = [-b, a]`.

    Args:
      x: array `(..., T, d_head)` (queries or keys after the head split).
      tables: from `rotary_tables`.
      offset: position of the first element.

    Returns:
      An array shaped like `x`.

    Example:
      q = rotary_embedding(q, rotary_tables(128, q.shape[-1]))
    """
    s = shape_of(x)
    t, d = s[-2], s[-1]
    cos, sin = tables["cos"], tables["sin"]
    if shape_of(cos)[-1] != d:
        raise ValueError(f"rotary_embedding: input has head dimension {d} but the tables were "
                         f"built for {shape_of(cos)[-1]}; call rotary_tables(max_len, {d}).")
    if offset + t > shape_of(cos)[0]:
        raise ValueError(f"rotary_embedding: positions up to {offset + t - 1} exceed the tables' "
                         f"{shape_of(cos)[0]}; build them with a larger max_len.")
    cos, sin = cos[offset:offset + t], sin[offset:offset + t]
    half = d // 2
    rot = fnp.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rot * sin
