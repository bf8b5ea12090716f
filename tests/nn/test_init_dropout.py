import math

import numpy as np
import pytest
import torch

import fnad
import fnad.random as random
import fnad_nn as nn
from fnad_nn import init


def key(seed=0):
    return random.PRNGKey(seed)


BIG = (400, 300)


def test_fans_match_torch():
    assert init.fans((4, 3)) == (4, 3)
    w = torch.empty(8, 2, 3, 3)
    fi, fo = torch.nn.init._calculate_fan_in_and_fan_out(w)
    assert init.fans((8, 2, 3, 3), in_axis=1, out_axis=0) == (fi, fo)
    for nl in ("linear", "sigmoid", "tanh", "relu", "selu"):
        assert init.calculate_gain(nl) == pytest.approx(torch.nn.init.calculate_gain(nl))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(
        torch.nn.init.calculate_gain("leaky_relu", 0.2))


@pytest.mark.parametrize("name,kw,bound", [
    ("kaiming_uniform", {"nonlinearity": "relu"}, math.sqrt(2) * math.sqrt(3 / 400)),
    ("xavier_uniform", {}, math.sqrt(6 / 700)),
    ("he_uniform", {"a": math.sqrt(5)}, 1 / math.sqrt(400)),
])
def test_uniform_bounds(name, kw, bound):
    w = getattr(init, name)(key(), BIG, np.float64, **kw)
    assert w.shape == BIG and w.dtype == np.float64
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound


@pytest.mark.parametrize("name,std", [("kaiming_normal", math.sqrt(2 / 400)),
                                      ("xavier_normal", math.sqrt(2 / 700)),
                                      ("glorot_normal", math.sqrt(2 / 700))])
def test_normal_std(name, std):
    kw = {"nonlinearity": "relu"} if "kaiming" in name else {}
    w = getattr(init, name)(key(1), BIG, np.float64, **kw)
    assert abs(w.std() - std) < 0.02 * std and abs(w.mean()) < 0.02 * std


def test_simple_initialisers():
    assert np.all(init.zeros(key(), (2, 3)) == 0) and init.ones(key(), 3).dtype == np.float32
    t = init.truncated_normal(key(2), (10000,), np.float64, std=0.5, a=-0.4, b=0.8)
    assert t.min() >= -0.4 and t.max() <= 0.8
    n = init.normal(key(3), (20000,), np.float64, mean=1.0, std=2.0)
    assert abs(n.mean() - 1) < 0.05 and abs(n.std() - 2) < 0.05
    np.testing.assert_array_equal(init.normal(key(3), (5,)), init.normal(key(3), (5,)))


def test_torch_default_layer_inits():
    p = nn.init_linear(key(), 300, 200, dtype=np.float64)
    b = 1 / math.sqrt(300)
    assert p["w"].shape == (300, 200) and np.abs(p["w"]).max() <= b
    assert np.abs(p["w"]).max() > 0.99 * b and np.abs(p["b"]).max() <= b
    c = nn.init_conv2d(key(), 4, 16, 3, groups=2)
    assert c["w"].shape == (16, 2, 3, 3) and np.abs(c["w"]).max() <= 1 / math.sqrt(18)
    e = nn.init_embedding(key(), 1000, 64)
    assert abs(e["w"].std() - 1) < 0.05
    lstm = nn.init_lstm(key(), 10, 50, num_layers=2)
    assert all(np.abs(v).max() <= 1 / math.sqrt(50) for layer in lstm for v in layer.values())
    mha = nn.init_multi_head_attention(key(), 64, 4)
    assert np.abs(mha["q"]["w"]).max() <= math.sqrt(6 / (64 + 192))
    assert np.all(mha["q"]["b"] == 0) and np.all(mha["o"]["b"] == 0)
    assert np.abs(mha["o"]["w"]).max() <= 1 / math.sqrt(64)
    # parameter counts agree with torch's modules
    count = lambda t: sum(x.size for x in fnad.tree_leaves(t))
    assert count(mha) == sum(p.numel() for p in torch.nn.MultiheadAttention(64, 4).parameters())
    assert count(lstm) == sum(p.numel() for p in torch.nn.LSTM(10, 50, 2).parameters())
    assert count(nn.init_gru(key(), 10, 20)) == sum(
        p.numel() for p in torch.nn.GRU(10, 20).parameters())


def test_dropout():
    x = np.ones((200, 500))
    y = nn.dropout(x, 0.3, key=key(5))
    assert abs(y.mean() - 1) < 0.02
    assert abs((y == 0).mean() - 0.3) < 0.01
    np.testing.assert_array_equal(y, nn.dropout(x, 0.3, key=key(5)))
    assert not np.array_equal(y, nn.dropout(x, 0.3, key=key(6)))
    assert nn.dropout(x, 0.3, key=key(5), train=False) is x
    assert nn.dropout(x, 0.0, key=key(5)) is x
    g = fnad.grad(lambda x: fnad.numpy.sum(nn.dropout(x, 0.3, key=key(5))))(x)
    np.testing.assert_array_equal(g, y)  # mask / (1 - rate)
    assert nn.dropout(x.astype(np.float32), 0.5, key=key(1)).dtype == np.float32
    with pytest.raises(ValueError, match="dropout: training needs a key"):
        nn.dropout(x, 0.1)
    with pytest.raises(ValueError, match="rate"):
        nn.dropout(x, 1.0, key=key())
