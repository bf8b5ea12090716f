"""Scaled dot-product attention with masks, and multi-head self/cross-attention with optional
rotary embeddings and a key/value cache."""

import math

import numpy as np

import fnad.numpy as fnp
from fnad.extend import Tracer, array_module

from . import _init
from ._fused import affine, attention_softmax, contiguous
from ._positional import rotary_embedding
from ._util import ParamSpec, as_array, check_params, shape_of, split_key

__all__ = ["scaled_dot_product_attention", "causal_mask", "padding_mask",
           "init_multi_head_attention", "multi_head_attention", "init_kv_cache", "context_kv"]


# Bool and causal masks remove positions (probability exactly 0). A row with every position
# masked (or every score -inf, through a float mask) has no distribution to normalise: we
# define its probabilities (and so its attention output and every gradient through it) as 0,
# where a plain -inf softmax would give NaN; a +inf score gives its row NaN. Both as PyTorch's
# scaled_dot_product_attention, in every dtype and path (fnad_nn/_fused.py).


def causal_mask(t_q, t_k=None):
    """Boolean mask `(t_q, t_k)`, True where query i may attend key j: `j <= i + t_k - t_q`
    (aligned at the end, so queries appended to a cache see every earlier key).

    Args:
      t_q: number of queries.
      t_k: number of keys (default t_q).

    Returns:
      A bool array `(t_q, t_k)`.

    Example:
      causal_mask(3)   # lower-triangular
    """
    t_k = t_q if t_k is None else t_k
    return np.tri(t_q, t_k, t_k - t_q, dtype=bool)


def padding_mask(ids, pad_id=0):
    """Key-padding mask `(..., 1, 1, T)` from token ids `(..., T)`: True on real tokens.

    Args:
      ids: integer array `(..., T)`.
      pad_id: the padding token.

    Returns:
      A bool array that broadcasts against attention scores `(..., H, T_q, T)`.

    Example:
      y = multi_head_attention(params, x, mask=padding_mask(src_ids, pad_id=0))
    """
    return (ids != pad_id)[..., None, None, :]


def scaled_dot_product_attention(q, k, v, *, mask=None, causal=False, scale=None):
    """`softmax(q k^T * scale + masks) v` over any leading batch (and head) axes.

    Args:
      q: queries `(..., T_q, D)`.
      k: keys `(..., T_k, D)`.
      v: values `(..., T_k, D_v)`.
      mask: optional mask broadcastable to `(..., T_q, T_k)`: bool (True = may attend; masked
        positions get probability exactly 0) or float (added to the scores).
      causal: also apply `causal_mask(T_q, T_k)`.
      scale: score scale, default `1 / sqrt(D)`.

    Returns:
      `(..., T_q, D_v)`. Rows whose keys are all masked (bool False, or a float mask of
      -inf) produce zeros and zero gradients, in every dtype, eagerly and under jit, grad
      and vmap, as PyTorch's; a row whose scores hold +inf produces NaN, as PyTorch's.

    Example:
      out = scaled_dot_product_attention(q, k, v, causal=True)
    """
    d = shape_of(q)[-1]
    t_q, t_k = shape_of(q)[-2], shape_of(k)[-2]
    if shape_of(k)[-1] != d or shape_of(v)[-2] != t_k:
        raise ValueError(f"scaled_dot_product_attention: q {shape_of(q)}, k {shape_of(k)} and v "
                         f"{shape_of(v)} disagree; need q (..., T_q, D), k (..., T_k, D), "
                         "v (..., T_k, D_v).")
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    scores = fnp.matmul(q, contiguous(fnp.swapaxes(k, -1, -2)))
    keep = None
    xp = array_module(q)  # masks follow the queries' device
    if mask is not None:
        m = as_array(xp, mask)  # a traced mask stays traced: a float mask gets its gradient
        if m.dtype == bool:
            keep = m
        else:
            scores = scores * scale + m
            scale = 1.0
    if causal:
        c = xp.tri(t_q, t_k, t_k - t_q, dtype=bool)  # causal_mask, made on the device
        keep = c if keep is None else keep & c
    # the scale, the mask and the softmax in one primitive, in place on one array
    p = attention_softmax(scores, None if keep is None else ~keep, scale)
    return fnp.matmul(p, v)


# ----------------------------------------------------------------------------- multi-head

def init_multi_head_attention(key, d_model, n_heads, *, d_context=None, d_head=None,
                              d_out=None, bias=True, dtype=np.float32, w_init=None):
    """Parameters of multi-head attention; the head count lives in the weights' shapes.

    Defaults reproduce PyTorch's `nn.MultiheadAttention`: query/key/value weights
    Xavier-uniform as one packed `(3E, E)` matrix (separate matrices when `d_context`
    differs), zero biases, output weight `U(-1/sqrt(E), 1/sqrt(E))`, zero output bias.

    Args:
      key: a `fnad.random.PRNGKey`.
      d_model: query input size (E).
      n_heads: number of heads.
      d_context: key/value input size for cross-attention (default d_model).
      d_head: per-head size (default d_model // n_heads).
      d_out: output size (default d_model).
      bias: whether projections have biases.
      dtype: parameter dtype.
      w_init: optional initialiser for the four weights.

    Returns:
      `{"q", "k", "v": {"w": (d_in, H, d_head), "b": (H, d_head)},
        "o": {"w": (H, d_head, d_out), "b": (d_out,)}}` (every "b" None when bias=False).

    Example:
      params = init_multi_head_attention(fnad.random.PRNGKey(0), 128, 4)
      y = multi_head_attention(params, x, causal=True)
    """
    d_context = d_model if d_context is None else d_context
    if d_head is None:
        if d_model % n_heads:
            raise ValueError(f"init_multi_head_attention: d_model={d_model} is not divisible by "
                             f"n_heads={n_heads}; pick another n_heads or pass d_head=.")
        d_head = d_model // n_heads
    d_out = d_model if d_out is None else d_out
    inner = n_heads * d_head
    kq, kk, kv, ko = split_key(key, 4)

    def proj_w(k, d_in, fan_out):
        if w_init is not None:
            return w_init(k, (d_in, inner), dtype).reshape(d_in, n_heads, d_head)
        bound = math.sqrt(6.0 / (d_in + fan_out))
        return _init.uniform(k, (d_in, n_heads, d_head), dtype, low=-bound, high=bound)

    packed = d_context == d_model and inner == d_model
    params = {}
    for name, k, d_in in (("q", kq, d_model), ("k", kk, d_context), ("v", kv, d_context)):
        params[name] = {"w": proj_w(k, d_in, 3 * inner if packed else inner),
                        "b": np.zeros((n_heads, d_head), dtype) if bias else None}
    wo = (w_init(ko, (inner, d_out), dtype) if w_init is not None else
          _init.torch_default_uniform(ko, (inner, d_out), dtype, fan_in=inner))
    params["o"] = {"w": wo.reshape(n_heads, d_head, d_out),
                   "b": np.zeros((d_out,), dtype) if bias else None}
    return params


_MHA_INIT = "init_multi_head_attention"
_MHA = ParamSpec(_MHA_INIT, {"q": None, "k": None, "v": None, "o": None})
_PROJ = {"q": ParamSpec(_MHA_INIT, {"w": 3, "b": 2}, nullable=("b",)),
         "o": ParamSpec(_MHA_INIT, {"w": 3, "b": 1}, nullable=("b",), same=[("b", 0, "w", 2)])}
_PROJ["k"] = _PROJ["v"] = _PROJ["q"]


def _check_mha(fname, params, x, call=None):
    """`params` of multi-head attention checked, with its four projections."""
    check_params(fname, params, x, call=call, spec=_MHA)
    for n in ("q", "k", "v", "o"):
        check_params(fname, params[n], spec=_PROJ[n], path=f"params[{n!r}]")


def init_kv_cache(batch_shape, n_heads, d_head, *, dtype=np.float32, max_len=None, xp=np):
    """An empty key/value cache for incremental decoding with `multi_head_attention`.

    By default each step appends by concatenation (a copy of the cache per step, and
    differentiable). With `max_len`, the buffers are allocated once and each step writes
    its keys/values in place (inference only: the buffers of earlier caches are reused, so
    keep only the newest cache).

    Args:
      batch_shape: leading batch axes, e.g. `(B,)`.
      n_heads, d_head: as in the attention parameters.
      dtype: cache dtype.
      max_len: preallocate room for this many positions.
      xp: the array module of the buffers (numpy or cupy).

    Returns:
      `{"k": (*batch_shape, H, 0, d_head), "v": ...}`; with `max_len`,
      `{"k": (*batch_shape, H, max_len, d_head), "v": ..., "length": 0}`.

    Example:
      cache = init_kv_cache((B,), 4, 32)
      y, cache = multi_head_attention(params, x_step, causal=True, kv_cache=cache)
    """
    shape = tuple(batch_shape) + (n_heads, 0 if max_len is None else max_len, d_head)
    cache = {"k": xp.zeros(shape, dtype), "v": xp.zeros(shape, dtype)}
    return cache if max_len is None else dict(cache, length=0)


def _cache_length(cache):
    return cache["length"] if "length" in cache else shape_of(cache["k"])[-2]


def _append(cache, k, v):
    """Keys/values so far and the new cache: concatenated, or written into preallocated
    buffers."""
    if "length" not in cache:
        k = fnp.concatenate([cache["k"], k], axis=-2)
        v = fnp.concatenate([cache["v"], v], axis=-2)
        return k, v, {"k": k, "v": v}
    n, t = cache["length"], shape_of(k)[-2]
    bk, bv = cache["k"], cache["v"]
    if n + t > shape_of(bk)[-2]:
        raise ValueError(f"multi_head_attention: the cache holds {shape_of(bk)[-2]} positions, "
                         f"{n + t} are needed; init_kv_cache(..., max_len=) with more room.")
    if isinstance(k, Tracer) or isinstance(v, Tracer):
        raise TypeError("multi_head_attention: a preallocated kv_cache (max_len=) is written in "
                        "place and cannot be differentiated, batched or staged (jit); use "
                        "init_kv_cache without max_len there.")
    bk[..., n:n + t, :] = k
    bv[..., n:n + t, :] = v
    return bk[..., :n + t, :], bv[..., :n + t, :], {"k": bk, "v": bv, "length": n + t}


def _split_heads(p, x):
    """Project `x (..., T, d_in)` with `p["w"] (d_in, H, Dh)` to `(..., H, T, Dh)`."""
    w = p["w"]
    d_in, h, dh = shape_of(w)
    s = shape_of(x)
    if s[-1] != d_in:
        raise ValueError(f"multi_head_attention: input of shape {s} does not match a projection "
                         f"from {d_in} features; check d_model/d_context of the parameters.")
    x2, w2 = fnp.reshape(x, (-1, d_in)), fnp.reshape(w, (d_in, h * dh))
    b = p["b"]
    y = affine(x2, w2, fnp.reshape(b, (h * dh,))) if b is not None else fnp.matmul(x2, w2)
    y = fnp.reshape(y, s[:-1] + (h, dh))
    return fnp.swapaxes(y, -2, -3)


def _merge_heads(p, o):
    """`o (..., H, T, Dh)` through `p["w"] (H, Dh, d_out)` to `(..., T, d_out)`."""
    w = p["w"]
    h, dh, d_out = shape_of(w)
    o = fnp.swapaxes(o, -2, -3)
    s = shape_of(o)
    o2, w2 = fnp.reshape(o, (-1, h * dh)), fnp.reshape(w, (h * dh, d_out))
    y = affine(o2, w2, p["b"]) if p["b"] is not None else fnp.matmul(o2, w2)
    return fnp.reshape(y, s[:-2] + (d_out,))


def _rope_pair(rope):
    if rope is None:
        return None, None
    if isinstance(rope, (tuple, list)):
        return rope[0], rope[1]
    return rope, rope


def context_kv(params, context, *, rope=None):
    """Keys and values of `context` for cross-attention, projected (and rotated) once, to pass
    as `multi_head_attention(..., context_kv=...)` at every decoding step.

    Args:
      params: from `init_multi_head_attention`.
      context: keys'/values' input `(..., S, d_context)`, e.g. an encoder output.
      rope: optional rotary tables for the keys (positions 0 .. S-1).

    Returns:
      `{"k": (..., H, S, Dh), "v": (..., H, S, Dh)}`.

    Example:
      kv = context_kv(cross_params, enc_out)
      y = multi_head_attention(cross_params, x_step, context_kv=kv, mask=padding_mask(src))
    """
    _check_mha("context_kv", params, context, call="context_kv(params, context)")
    k, v = _project_kv(params, context, rope, 0)
    return {"k": k, "v": v}


def _project_kv(params, src, rope_k, offset):
    k = _split_heads(params["k"], src)
    if rope_k is not None:
        k = rotary_embedding(k, rope_k, offset=offset)
    return k, _split_heads(params["v"], src)


def multi_head_attention(params, x, context=None, *, mask=None, causal=False, rope=None,
                         kv_cache=None, context_kv=None, offset=None):
    """Multi-head attention: self-attention over `x`, or cross-attention from `x` to
    `context`.

    Args:
      params: from `init_multi_head_attention`.
      x: queries' input `(..., T, d_model)`.
      context: keys'/values' input `(..., S, d_context)`; None for self-attention.
      mask: optional mask broadcastable to `(..., H, T, S)` (bool: True = may attend, e.g.
        `padding_mask(ids)`; float: added to the scores).
      causal: apply a causal mask (aligned at the end when a cache holds earlier keys).
      rope: optional `rotary_tables(...)` applied to queries and keys by their positions, or a
        pair `(rope_q, rope_k)` (either may be None). Context keys count from position 0.
      kv_cache: optional cache from `init_kv_cache` holding earlier keys/values
        `(..., H, T0, Dh)` (self-attention only); new keys are appended (or written into
        its preallocated buffers) and positions start at T0.
      context_kv: cross-attention keys/values precomputed by `context_kv(params, context,
        rope=rope_k)`, used instead of `context` (decoding projects the context once).
      offset: position of the first query (default: the cache length, else 0).

    Returns:
      `(..., T, d_out)`; with `kv_cache`, the pair `(output, new_cache)`.

    Example:
      y = multi_head_attention(params, x, causal=True)
      y = multi_head_attention(cross_params, x_dec, enc_out, mask=padding_mask(src_ids))
    """
    _check_mha("multi_head_attention", params, x)
    cross = context is not None or context_kv is not None
    if kv_cache is not None and cross:
        raise ValueError("multi_head_attention: kv_cache is for self-attention; for "
                         "cross-attention pass context_kv=context_kv(params, context).")
    if offset is None:
        offset = 0 if kv_cache is None else _cache_length(kv_cache)
    rope_q, rope_k = _rope_pair(rope)
    q = _split_heads(params["q"], x)
    if rope_q is not None:
        q = rotary_embedding(q, rope_q, offset=offset)
    if context_kv is not None:
        k, v = context_kv["k"], context_kv["v"]
    else:  # context keys count from 0; self-attention keys share the queries' positions
        k, v = _project_kv(params, x if context is None else context, rope_k,
                           offset if context is None else 0)
    if kv_cache is not None:
        k, v, kv_cache = _append(kv_cache, k, v)
    o = scaled_dot_product_attention(q, k, v, mask=mask, causal=causal)
    y = _merge_heads(params["o"], o)
    return (y, kv_cache) if kv_cache is not None else y
