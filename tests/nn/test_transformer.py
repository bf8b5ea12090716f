import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.func import functional_call

import fnad
import fnad.random as random
import fnad_nn as nn
from fnad.test_util import check_grads
from tests.nn.helpers import parity, randn
from tests.nn.test_attention import mha_params, torch_mha


def lin(d_in, d_out, seed):
    return {"w": randn(d_in, d_out, seed=seed) * 0.5, "b": randn(d_out, seed=seed + 1) * 0.1}


def ff_params(d, d_ff, gated=False, seed=0):
    p = {"fc1": lin(d, d_ff, seed), "fc2": lin(d_ff, d, seed + 2)}
    if gated:
        p["gate"] = lin(d, d_ff, seed + 4)
    return p


def t_lin(p, x):
    return F.linear(x, p["w"].T, p["b"])


def t_ff(p, x, act):
    if act == "swiglu":
        return t_lin(p["fc2"], F.silu(t_lin(p["gate"], x)) * t_lin(p["fc1"], x))
    f = {"relu": F.relu, "gelu": F.gelu,
         "gelu_tanh": lambda z: F.gelu(z, approximate="tanh")}[act]
    return t_lin(p["fc2"], f(t_lin(p["fc1"], x)))


@pytest.mark.parametrize("act", ["relu", "gelu", "gelu_tanh", "swiglu"])
def test_feed_forward_torch(act):
    p = ff_params(6, 10, gated=act == "swiglu")
    out = parity(lambda p, x: nn.feed_forward(p, x, activation=act),
                 lambda p, x: t_ff(p, x, act), p, randn(2, 3, 6, seed=5))
    assert out.shape == (2, 3, 6)


def test_feed_forward_checks():
    p = ff_params(3, 4, gated=True)
    check_grads(nn.feed_forward, (p, randn(2, 3)), order=2)
    with pytest.raises(ValueError, match="lack"):
        nn.feed_forward(ff_params(3, 4), randn(2, 3), activation="swiglu")
    k = random.PRNGKey(0)
    assert nn.init_feed_forward(k, 8, activation="swiglu")["gate"]["w"].shape == (8, 32)
    y = nn.feed_forward(p, randn(4, 3), dropout_rate=0.5, key=k, train=True)
    assert y.shape == (4, 3)


def ln(d, seed):
    return {"scale": 1 + 0.1 * randn(d, seed=seed), "bias": 0.1 * randn(d, seed=seed + 1)}


def t_ln(p, x):
    return F.layer_norm(x, x.shape[-1:], p["scale"], p["bias"])


def t_attn(p, x, c, e, h, mask=None, causal=False):
    m, sd = torch_mha(p, e, h, None if c is None else c.shape[-1])
    c = x if c is None else c
    t = x.shape[-2]
    am = torch.tensor(~np.tril(np.ones((t, t), bool))) if causal else None
    return functional_call(m, sd, (x, c, c), dict(key_padding_mask=mask, attn_mask=am,
                                                  need_weights=False))[0]


def block_params(e, h, seed=0):
    return {"ln1": ln(e, seed), "attn": mha_params(e, h, seed=seed + 10), "ln2": ln(e, seed + 2),
            "ff": ff_params(e, 2 * e, seed=seed + 30)}


@pytest.mark.parametrize("causal", [False, True])
def test_transformer_block_torch(causal):
    e, h = 8, 2
    p = block_params(e, h)
    x = randn(2, 5, e, seed=3)
    pad = np.ones((2, 5), bool)
    pad[0, 4:] = False

    def tfn(p, x):
        x = x + t_attn(p["attn"], t_ln(p["ln1"], x), None, e, h, torch.tensor(~pad), causal)
        return x + t_ff(p["ff"], t_ln(p["ln2"], x), "gelu")

    parity(lambda p, x: nn.transformer_block(p, x, mask=nn.padding_mask(pad.astype(int), 0),
                                             causal=causal, activation="gelu"), tfn, p, x)


def test_decoder_block_torch():
    e, h, dc = 8, 2, 6
    p = {"ln1": ln(e, 0), "self_attn": mha_params(e, h, seed=10), "ln2": ln(e, 2),
         "cross_attn": mha_params(e, h, dc, seed=20), "ln3": ln(e, 4),
         "ff": ff_params(e, 16, seed=30)}
    x, ctx = randn(2, 4, e, seed=1), randn(2, 6, dc, seed=2)
    src = np.array([[3, 4, 5, 0, 0, 0], [1, 2, 3, 4, 5, 6]])

    def tfn(p, x, c):
        x = x + t_attn(p["self_attn"], t_ln(p["ln1"], x), None, e, h, causal=True)
        x = x + t_attn(p["cross_attn"], t_ln(p["ln2"], x), c, e, h, torch.tensor(src == 0))
        return x + t_ff(p["ff"], t_ln(p["ln3"], x), "relu")

    out = parity(lambda p, x, c: nn.decoder_block(p, x, c, cross_mask=nn.padding_mask(src)),
                 tfn, p, x, ctx)
    assert out.shape == x.shape


def test_blocks_init_shapes_dropout_and_cache():
    k = random.PRNGKey(1)
    p = nn.init_transformer_block(k, 16, 4, activation="swiglu")
    x = np.ones((3, 2, 5, 16), np.float32)
    y = nn.transformer_block(p, x, causal=True)
    assert y.shape == x.shape and y.dtype == np.float32
    y1 = nn.transformer_block(p, x, dropout_rate=0.1, key=k, train=True)
    y2 = nn.transformer_block(p, x, dropout_rate=0.1, key=k, train=True)
    np.testing.assert_array_equal(y1, y2)
    with pytest.raises(ValueError, match="needs key"):
        nn.transformer_block(p, x, dropout_rate=0.1, train=True)
    p64 = fnad.tree_map(lambda a: a.astype(np.float64), p)
    xs = randn(2, 4, 16)
    full = nn.transformer_block(p64, xs, causal=True)
    cache = nn.init_kv_cache((2,), 4, 4, dtype=np.float64)
    a, cache = nn.transformer_block(p64, xs[:, :3], causal=True, kv_cache=cache)
    b, cache = nn.transformer_block(p64, xs[:, 3:], causal=True, kv_cache=cache)
    np.testing.assert_allclose(np.concatenate([a, b], 1), full, atol=1e-12)
    d = nn.init_decoder_block(k, 16, 4, d_context=8)
    assert nn.decoder_block(d, x, np.ones((3, 2, 7, 8), np.float32)).shape == x.shape
