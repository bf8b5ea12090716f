import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.func import functional_call

import fnad
import fnad.numpy as fnp
import fnad_nn as nn
from fnad.test_util import check_grads
from tests.nn.helpers import assert_close, parity, randn


def qkv(lead=(2, 3), tq=4, tk=5, d=6, dv=7):
    return (randn(*lead, tq, d, seed=1), randn(*lead, tk, d, seed=2),
            randn(*lead, tk, dv, seed=3))


def test_sdpa_torch_plain_and_causal():
    q, k, v = qkv(tk=4)
    for causal in (False, True):
        parity(lambda _, q, k, v: nn.scaled_dot_product_attention(q, k, v, causal=causal),
               lambda _, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
               {}, q, k, v)


def test_sdpa_bool_and_float_masks():
    q, k, v = qkv()
    m = np.random.default_rng(0).random((2, 1, 4, 5)) > 0.3
    m[..., 0] = True  # every row keeps a key
    parity(lambda _, q, k, v: nn.scaled_dot_product_attention(q, k, v, mask=m),
           lambda _, q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=torch.tensor(m)),
           {}, q, k, v)
    bias = randn(4, 5, seed=9)
    parity(lambda _, q, k, v: nn.scaled_dot_product_attention(q, k, v, mask=bias, scale=0.3),
           lambda _, q, k, v: F.scaled_dot_product_attention(
               q, k, v, attn_mask=torch.tensor(bias), scale=0.3), {}, q, k, v)


def test_sdpa_mask_and_causal_combined():
    q, k, v = qkv(tk=4)
    m = np.ones((2, 1, 1, 4), bool)
    m[0, ..., 2:] = False
    both = m & np.tril(np.ones((4, 4), bool))
    parity(lambda _, q, k, v: nn.scaled_dot_product_attention(q, k, v, mask=m, causal=True),
           lambda _, q, k, v: F.scaled_dot_product_attention(q, k, v,
                                                             attn_mask=torch.tensor(both)),
           {}, q, k, v)


def test_fully_masked_rows_give_zero_and_no_nan():
    q, k, v = qkv()
    m = np.ones((4, 5), bool)
    m[1] = False  # query 1 may attend nothing
    out = nn.scaled_dot_product_attention(q, k, v, mask=m)
    assert np.all(out[..., 1, :] == 0) and np.all(np.isfinite(out))
    # the other rows are unaffected
    ref = F.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)),
                                         attn_mask=torch.tensor(m[[0, 0, 2, 3]]))
    assert_close(out[..., [0, 2, 3], :], ref[..., [0, 2, 3], :])

    def loss(q, k, v):
        return fnp.sum(nn.scaled_dot_product_attention(q, k, v, mask=m) ** 2)

    gq, gk, gv = fnad.grad(loss, argnums=(0, 1, 2))(q, k, v)
    assert np.all(np.isfinite(gq)) and np.all(gq[..., 1, :] == 0)
    # masked keys never receive probability: changing a masked key changes nothing
    m2 = np.ones((4, 5), bool)
    m2[:, 3] = False
    k2 = k.copy()
    k2[..., 3, :] += 100
    v2 = v.copy()
    v2[..., 3, :] += 100
    np.testing.assert_array_equal(nn.scaled_dot_product_attention(q, k, v, mask=m2),
                                  nn.scaled_dot_product_attention(q, k2, v2, mask=m2))
    check_grads(lambda q, k, v: nn.scaled_dot_product_attention(q, k, v, mask=m),
                (q[0, 0], k[0, 0], v[0, 0]), order=2)


@pytest.mark.parametrize("kernels", ["default", "numpy"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_fully_masked_row_is_zero_in_every_dtype_and_path(kernels, dtype, kind, monkeypatch):
    """Issue 31: a row of -inf (a float mask) gave NaN in float64 and in the NumPy fallback,
    zeros in the float32 kernel. Now zeros (and zero gradients) everywhere, as torch's SDPA."""
    if kernels == "numpy":
        monkeypatch.setenv("FNAD_CPU_KERNELS", "numpy")
    q, k, v = (a.astype(dtype) for a in qkv(lead=(2,)))
    keep = np.ones((4, 5), bool)
    keep[1] = False
    m = keep if kind == "bool" else np.where(keep, 0, -np.inf).astype(dtype)

    def f(q):
        return nn.scaled_dot_product_attention(q, k, v, mask=m)

    def loss(q):
        return fnp.sum(f(q) ** 2)

    ref = F.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)),
                                         attn_mask=torch.tensor(m)).numpy()
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for out in (f(q), fnad.jit(f)(q), fnad.vmap(f)(q[None])[0]):
        assert out.dtype == dtype and np.all(out[:, 1] == 0)
        np.testing.assert_allclose(out, ref, atol=tol)
    for g in (fnad.grad(loss)(q), fnad.jit(fnad.grad(loss))(q)):
        assert np.all(np.isfinite(g)) and np.all(g[:, 1] == 0)


@pytest.mark.parametrize("kernels", ["default", "numpy"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_attention_softmax_rows_of_inf(kernels, dtype, monkeypatch):
    """-inf rows give zeros, +inf rows NaN (torch._safe_softmax's answers), quietly, and a
    one-key row of -inf is zero too."""
    from fnad_nn._fused import attention_softmax
    if kernels == "numpy":
        monkeypatch.setenv("FNAD_CPU_KERNELS", "numpy")
    inf = np.inf
    s = np.array([[inf, 0, 1], [-inf, -inf, -inf], [1, 2, 3], [inf, inf, 0], [-inf, 0, 1]],
                 dtype)
    want = torch._safe_softmax(torch.tensor(s), -1).numpy()
    np.testing.assert_allclose(attention_softmax(s, None, 1.0), want, rtol=1e-6)
    np.testing.assert_array_equal(attention_softmax(np.full((5, 1), -inf, dtype), None, 1.0),
                                  np.zeros((5, 1), dtype))


def test_causal_mask_alignment():
    np.testing.assert_array_equal(nn.causal_mask(2, 4), [[1, 1, 1, 0], [1, 1, 1, 1]])
    assert nn.padding_mask(np.array([[5, 0]])).shape == (1, 1, 1, 2)


# ----------------------------------------------------------------------------- multi-head

def mha_params(e, h, d_ctx=None, seed=0):
    d_ctx = e if d_ctx is None else d_ctx
    dh = e // h
    return {"q": {"w": randn(e, h, dh, seed=seed), "b": randn(h, dh, seed=seed + 1)},
            "k": {"w": randn(d_ctx, h, dh, seed=seed + 2), "b": randn(h, dh, seed=seed + 3)},
            "v": {"w": randn(d_ctx, h, dh, seed=seed + 4), "b": randn(h, dh, seed=seed + 5)},
            "o": {"w": randn(h, dh, e, seed=seed + 6) * 0.3, "b": randn(e, seed=seed + 7)}}


def torch_mha(p, e, h, d_ctx=None):
    """Map fnad MHA params onto torch.nn.MultiheadAttention's parameter names."""
    d_ctx = e if d_ctx is None else d_ctx
    m = torch.nn.MultiheadAttention(e, h, batch_first=True, kdim=d_ctx, vdim=d_ctx,
                                    dtype=torch.float64)
    w = {n: p[n]["w"].reshape(p[n]["w"].shape[0], -1).T for n in "qkv"}
    sd = {"in_proj_bias": torch.cat([p[n]["b"].reshape(-1) for n in "qkv"]),
          "out_proj.weight": p["o"]["w"].reshape(-1, e).T, "out_proj.bias": p["o"]["b"]}
    if d_ctx == e:
        sd["in_proj_weight"] = torch.cat([w["q"], w["k"], w["v"]])
    else:
        sd.update({"q_proj_weight": w["q"], "k_proj_weight": w["k"], "v_proj_weight": w["v"]})
    return m, sd


@pytest.mark.parametrize("causal", [False, True])
def test_mha_self_attention_torch(causal):
    e, h = 8, 2
    p = mha_params(e, h)
    x = randn(3, 5, e, seed=10)
    pad = np.ones((3, 5), bool)
    pad[1, 3:] = False

    def tfn(p, x):
        m, sd = torch_mha(p, e, h)
        return functional_call(m, sd, (x, x, x), dict(
            key_padding_mask=torch.tensor(~pad), need_weights=False,
            attn_mask=torch.tensor(~np.tril(np.ones((5, 5), bool))) if causal else None))[0]

    out = parity(lambda p, x: nn.multi_head_attention(p, x, mask=pad[:, None, None, :],
                                                      causal=causal), tfn, p, x)
    assert out.shape == (3, 5, e)


def test_mha_cross_attention_torch():
    e, h, dc = 8, 4, 6
    p = mha_params(e, h, dc)
    x, ctx = randn(2, 3, e, seed=11), randn(2, 7, dc, seed=12)
    src = np.array([[1, 2, 3, 0, 0, 0, 0], [4, 5, 6, 7, 8, 9, 1]])

    def tfn(p, x, c):
        m, sd = torch_mha(p, e, h, dc)
        return functional_call(m, sd, (x, c, c), dict(
            key_padding_mask=torch.tensor(src == 0), need_weights=False))[0]

    parity(lambda p, x, c: nn.multi_head_attention(p, x, c, mask=nn.padding_mask(src)),
           tfn, p, x, ctx)


def test_mha_leading_axes_and_grads():
    p = mha_params(4, 2)
    x = randn(2, 2, 3, 4)
    y = nn.multi_head_attention(p, x, causal=True)
    assert y.shape == (2, 2, 3, 4)
    assert_close(y[1, 0], nn.multi_head_attention(p, x[1, 0], causal=True), tol=1e-13)
    small = mha_params(4, 2)
    check_grads(lambda p, x: nn.multi_head_attention(p, x, causal=True), (small, randn(3, 4)),
                order=1)


# ----------------------------------------------------------------------------- positions

def rope_ref(x, base=10000.0, scale=1.0, offset=0):
    t, d = x.shape[-2:]
    out = np.empty_like(x)
    half = d // 2
    for p in range(t):
        for i in range(half):
            a = (p + offset) / scale * base ** (-2 * i / d)
            x1, x2 = x[..., p, i], x[..., p, i + half]
            out[..., p, i] = x1 * np.cos(a) - x2 * np.sin(a)
            out[..., p, i + half] = x1 * np.sin(a) + x2 * np.cos(a)
    return out


@pytest.mark.parametrize("scale,offset", [(1.0, 0), (4.0, 3)])
def test_rotary_matches_reference(scale, offset):
    x = randn(2, 5, 8)
    tab = nn.rotary_tables(16, 8, scale=scale, dtype=np.float64)
    assert_close(nn.rotary_embedding(x, tab, offset=offset), rope_ref(x, scale=scale,
                                                                      offset=offset), 1e-13)
    check_grads(lambda x: nn.rotary_embedding(x, tab), (x,), order=2)


def test_rotary_relative_positions():
    tab = nn.rotary_tables(32, 4, dtype=np.float64)
    q, k = randn(1, 4), randn(1, 4, seed=1)

    def score(i, j):
        a = nn.rotary_embedding(q, tab, offset=i)
        b = nn.rotary_embedding(k, tab, offset=j)
        return float((a @ b.T)[0, 0])
    assert score(3, 1) == pytest.approx(score(10, 8), abs=1e-12)
    with pytest.raises(ValueError, match="even"):
        nn.rotary_tables(8, 5)


def test_mha_with_rope_torch():
    e, h = 8, 2
    p = mha_params(e, h)
    x = randn(2, 5, e, seed=3)
    tab = nn.rotary_tables(10, e // h, dtype=np.float64)
    cos, sin = torch.tensor(tab["cos"][:5]), torch.tensor(tab["sin"][:5])

    def rot(t):
        a, b = t[..., :2], t[..., 2:]
        return t * cos + torch.cat([-b, a], -1) * sin

    def tfn(p, x):
        def proj(n):
            w = p[n]["w"].reshape(e, e)
            return (x @ w + p[n]["b"].reshape(-1)).reshape(2, 5, h, e // h).transpose(1, 2)
        o = F.scaled_dot_product_attention(rot(proj("q")), rot(proj("k")), proj("v"),
                                           is_causal=True)
        return o.transpose(1, 2).reshape(2, 5, e) @ p["o"]["w"].reshape(e, e) + p["o"]["b"]

    parity(lambda p, x: nn.multi_head_attention(p, x, causal=True, rope=tab), tfn, p, x)


def test_kv_cache_incremental_equals_full():
    e, h = 8, 2
    p = mha_params(e, h)
    x = randn(2, 6, e, seed=4)
    tab = nn.rotary_tables(16, 4, dtype=np.float64)
    full = nn.multi_head_attention(p, x, causal=True, rope=tab)
    cache = nn.init_kv_cache((2,), h, e // h, dtype=np.float64)
    y1, cache = nn.multi_head_attention(p, x[:, :4], causal=True, rope=tab, kv_cache=cache)
    outs = [y1]
    for t in (4, 5):
        y, cache = nn.multi_head_attention(p, x[:, t:t + 1], causal=True, rope=tab,
                                           kv_cache=cache)
        outs.append(y)
    assert cache["k"].shape == (2, h, 6, 4)
    assert_close(np.concatenate(outs, axis=1), full, tol=1e-12)


def test_sinusoidal_encoding():
    pe = nn.sinusoidal_positional_encoding(50, 6, dtype=np.float64)
    p, i = 7, 2
    assert pe[p, 2 * i] == pytest.approx(np.sin(p / 10000 ** (2 * i / 6)))
    assert pe[p, 2 * i + 1] == pytest.approx(np.cos(p / 10000 ** (2 * i / 6)))
    assert nn.sinusoidal_positional_encoding(4, 5).shape == (4, 5)


def test_learned_positional_embedding():
    params = nn.init_positional_embedding(fnad.random.PRNGKey(0), 10, 4, dtype=np.float64)
    x = randn(2, 3, 4)
    y = nn.positional_embedding(params, x, offset=2)
    assert_close(y, x + params["w"][2:5], tol=1e-15)
    g = fnad.grad(lambda p: fnp.sum(nn.positional_embedding(p, x)))(params)
    np.testing.assert_array_equal(g["w"][:3], 2.0)
    np.testing.assert_array_equal(g["w"][3:], 0.0)
    with pytest.raises(ValueError, match="exceed"):
        nn.positional_embedding(params, x, offset=8)


def test_cross_attention_with_precomputed_context_kv_and_query_offset():
    e, h = 8, 2
    p = nn.init_multi_head_attention(fnad.random.PRNGKey(3), e, h, d_context=6, dtype=np.float64)
    x, ctx = randn(2, 5, e), randn(2, 7, 6)
    tab = nn.rotary_tables(16, e // h, dtype=np.float64)
    mask = nn.padding_mask(np.array([[1] * 7, [1] * 4 + [0] * 3]))
    full = nn.multi_head_attention(p, x, ctx, mask=mask, rope=(tab, tab))
    kv = nn.context_kv(p, ctx, rope=tab)
    assert kv["k"].shape == (2, h, 7, e // h)
    assert_close(nn.multi_head_attention(p, x, context_kv=kv, mask=mask, rope=(tab, None)),
                 full, tol=1e-14)
    # one query at a time, at its own position: the same rows
    for t in range(5):
        y = nn.multi_head_attention(p, x[:, t:t + 1], context_kv=kv, mask=mask,
                                    rope=(tab, None), offset=t)
        assert_close(y, full[:, t:t + 1], tol=1e-13)
    check_grads(lambda p, x: nn.multi_head_attention(p, x, ctx, mask=mask, rope=(tab, tab),
                                                     offset=3), (p, x), order=1)
    with pytest.raises(ValueError, match="context_kv"):
        nn.multi_head_attention(p, x, ctx, kv_cache=nn.init_kv_cache((2,), h, e // h))


def test_preallocated_kv_cache_matches_concatenating_cache():
    e, h = 8, 2
    p = nn.init_multi_head_attention(fnad.random.PRNGKey(4), e, h, dtype=np.float64)
    x = randn(2, 6, e)
    tab = nn.rotary_tables(16, e // h, dtype=np.float64)
    full = nn.multi_head_attention(p, x, causal=True, rope=tab)
    cache = nn.init_kv_cache((2,), h, e // h, dtype=np.float64, max_len=7)
    assert cache["k"].shape == (2, h, 7, e // h) and cache["length"] == 0
    outs = []
    for t0, t1 in ((0, 3), (3, 4), (4, 6)):
        y, cache = nn.multi_head_attention(p, x[:, t0:t1], causal=True, rope=tab, kv_cache=cache)
        outs.append(y)
    assert cache["length"] == 6
    assert_close(np.concatenate(outs, axis=1), full, tol=1e-12)
    with pytest.raises(ValueError, match="max_len"):
        nn.multi_head_attention(p, x[:, :2], causal=True, kv_cache=cache)
    fresh = nn.init_kv_cache((2,), h, e // h, dtype=np.float64, max_len=7)
    with pytest.raises(TypeError, match="differentiated"):
        fnad.grad(lambda x: fnp.sum(nn.multi_head_attention(p, x, kv_cache=fresh)[0]))(x)
