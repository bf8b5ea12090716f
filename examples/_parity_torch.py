"""The PyTorch side of parity_gpt.py: the GPT and the encoder-decoder of fnad_nn.models,
written with torch ops in the same layout as the fnad params (torch is the oracle; fnad
never imports it). Imported only when a parity run starts, so that parity_gpt.py --help
and its data check need no PyTorch."""

import math

import numpy as np
import torch
import torch.nn.functional as F

import fnad_nn as nn


def _t_norm(kind, p, x, eps):
    if kind == "layer":
        return F.layer_norm(x, x.shape[-1:], p["scale"], p.get("bias"), eps)
    return x * (1.0 / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)) * p["scale"]


def _t_heads(p, x):
    y = torch.einsum("btd,dhe->bhte", x, p["w"])
    return y + p["b"][:, None, :] if p.get("b") is not None else y


def _t_rope(x, tables, offset):
    t, half = x.shape[-2], x.shape[-1] // 2
    cos, sin = tables["cos"][offset:offset + t], tables["sin"][offset:offset + t]
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin


def _t_mha(p, x, ctx=None, *, keep=None, causal=False, rope_q=None, rope_k=None):
    src = x if ctx is None else ctx
    q, k, v = _t_heads(p["q"], x), _t_heads(p["k"], src), _t_heads(p["v"], src)
    if rope_q is not None:
        q = _t_rope(q, rope_q, 0)
    if rope_k is not None:
        k = _t_rope(k, rope_k, 0)
    s = q @ k.transpose(-1, -2) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        tri = torch.ones(s.shape[-2:], dtype=torch.bool).tril()
        keep = tri if keep is None else keep & tri
    if keep is not None:
        s = s.masked_fill(~keep, float("-inf"))
    o = torch.softmax(s, -1) @ v
    y = torch.einsum("bhte,hed->btd", o, p["o"]["w"])
    return y + p["o"]["b"] if p["o"].get("b") is not None else y


_T_ACT = {"relu": F.relu, "gelu": F.gelu, "silu": F.silu,
          "gelu_tanh": lambda x: F.gelu(x, approximate="tanh")}


def _t_linear(p, x):
    return x @ p["w"] + p["b"] if p.get("b") is not None else x @ p["w"]


def _t_ff(p, x, act):
    h = _t_linear(p["fc1"], x)
    h = F.silu(_t_linear(p["gate"], x)) * h if act == "swiglu" else _T_ACT[act](h)
    return _t_linear(p["fc2"], h)


def _t_tables(c, d_model):
    rope = nn.rotary_tables(c.max_len, d_model // c.n_heads, base=c.rope_base,
                            scale=c.rope_scale, dtype=np.float64)
    return ({k: torch.tensor(v) for k, v in rope.items()},
            torch.tensor(nn.sinusoidal_positional_encoding(c.max_len, d_model, dtype=np.float64)))


def torch_gpt(tp, c, x):
    """The same GPT as `fnad_nn.models.gpt`, in torch (dropout off)."""
    t = x.shape[1]
    rope, sin = _t_tables(c, c.d_model)
    h = tp["tok"]["w"][x]
    if c.positions == "learned":
        h = h + tp["pos"]["w"][:t]
    elif c.positions == "sinusoidal":
        h = h + sin[:t]
    r = rope if c.positions == "rotary" else None
    for p in tp["blocks"]:
        h = h + _t_mha(p["attn"], _t_norm(c.norm, p["norm1"], h, c.norm_eps), causal=True,
                       rope_q=r, rope_k=r)
        h = h + _t_ff(p["ff"], _t_norm(c.norm, p["norm2"], h, c.norm_eps), c.activation)
    h = _t_norm(c.norm, tp["norm"], h, c.norm_eps)
    return h @ tp["tok"]["w"].T if c.tie_embeddings else _t_linear(tp["head"], h)


def _t_embed(tp, c, ids, side):
    tok = tp["tok"] if c.shared_tok else tp[side + "_tok"]
    h = tok["w"][ids] * (math.sqrt(c.d_model) if c.shared_tok else 1.0)
    if c.positions == "learned":
        h = h + tp[side + "_pos"]["w"][:ids.shape[1]]
    elif c.positions == "sinusoidal":
        h = h + _t_tables(c, c.d_model)[1][:ids.shape[1]]
    return h


def torch_seq2seq(tp, c, src, tgt_in):
    """The same encoder-decoder as `fnad_nn.models.seq2seq`, in torch (dropout off)."""
    rope = _t_tables(c, c.d_model)[0]
    on = {k: rope if getattr(c, k) else None
          for k in ("rope_encoder", "rope_decoder", "rope_cross_q", "rope_cross_k")}
    keep = (src != c.pad_id)[:, None, None, :]
    h = _t_embed(tp, c, src, "src")
    for p in tp["enc"]:
        a = _t_norm(c.norm, p["norm1"], h, c.norm_eps)
        h = h + _t_mha(p["attn"], a, keep=keep, rope_q=on["rope_encoder"],
                       rope_k=on["rope_encoder"])
        h = h + _t_ff(p["ff"], _t_norm(c.norm, p["norm2"], h, c.norm_eps), c.activation)
    mem = _t_norm(c.norm, tp["enc_norm"], h, c.norm_eps)
    h = _t_embed(tp, c, tgt_in, "tgt")
    for p in tp["dec"]:
        a = _t_norm(c.norm, p["norm1"], h, c.norm_eps)
        h = h + _t_mha(p["self_attn"], a, causal=True, rope_q=on["rope_decoder"],
                       rope_k=on["rope_decoder"])
        a = _t_norm(c.norm, p["norm2"], h, c.norm_eps)
        h = h + _t_mha(p["cross_attn"], a, mem, keep=keep, rope_q=on["rope_cross_q"],
                       rope_k=on["rope_cross_k"])
        h = h + _t_ff(p["ff"], _t_norm(c.norm, p["norm3"], h, c.norm_eps), c.activation)
    h = _t_norm(c.norm, tp["dec_norm"], h, c.norm_eps)
    if c.shared_tok:
        return h @ tp["tok"]["w"].T + tp["out_b"]
    return _t_linear(tp["head"], h)
