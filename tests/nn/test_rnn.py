import numpy as np
import pytest
import torch
from torch.func import functional_call

import fnad
import fnad_nn as nn
from fnad.test_util import check_grads
from tests.nn.helpers import parity, randn

GATES = {"rnn": 1, "lstm": 4, "gru": 3}


def cell_params(d_in, h, gates, seed=0):
    return {"w_ih": randn(d_in, gates * h, seed=seed) * 0.5,
            "w_hh": randn(h, gates * h, seed=seed + 1) * 0.5,
            "b_ih": randn(gates * h, seed=seed + 2) * 0.1,
            "b_hh": randn(gates * h, seed=seed + 3) * 0.1}


def torch_sd(params):
    sd = {}
    for layer, p in enumerate(params):
        sd[f"weight_ih_l{layer}"] = p["w_ih"].T
        sd[f"weight_hh_l{layer}"] = p["w_hh"].T
        sd[f"bias_ih_l{layer}"] = p["b_ih"]
        sd[f"bias_hh_l{layer}"] = p["b_hh"]
    return sd


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
@pytest.mark.parametrize("layers", [1, 2])
def test_over_time_torch(kind, layers):
    d_in, h, b, t = 3, 4, 2, 5
    params = [cell_params(d_in if i == 0 else h, h, GATES[kind], seed=10 * i)
              for i in range(layers)]
    mod = {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[kind](
        d_in, h, layers, batch_first=True, dtype=torch.float64)
    fn = {"rnn": nn.rnn, "lstm": nn.lstm, "gru": nn.gru}[kind]
    x = randn(b, t, d_in, seed=7)
    h0 = randn(layers, b, h, seed=8)
    state = (h0, randn(layers, b, h, seed=9)) if kind == "lstm" else h0

    def tfn(p, x, s):
        return functional_call(mod, torch_sd(p), (x, s))

    out = parity(fn, tfn, params, x, state)
    assert out[0].shape == (b, t, h)
    # zero initial state by default
    parity(lambda p, x: fn(p, x), lambda p, x: functional_call(mod, torch_sd(p), (x,)),
           params, x)


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_cells_torch(kind):
    d_in, h = 3, 4
    p = cell_params(d_in, h, GATES[kind])
    mod = {"rnn": torch.nn.RNNCell, "lstm": torch.nn.LSTMCell, "gru": torch.nn.GRUCell}[kind](
        d_in, h, dtype=torch.float64)
    sd = lambda p: {"weight_ih": p["w_ih"].T, "weight_hh": p["w_hh"].T,
                    "bias_ih": p["b_ih"], "bias_hh": p["b_hh"]}
    x, h0 = randn(2, d_in, seed=1), randn(2, h, seed=2)
    if kind == "lstm":
        c0 = randn(2, h, seed=3)
        parity(lambda p, x, s: nn.lstm_cell(p, x, s),
               lambda p, x, s: functional_call(mod, sd(p), (x, s)), p, x, (h0, c0))
    else:
        fn = nn.rnn_cell if kind == "rnn" else nn.gru_cell
        parity(fn, lambda p, x, s: functional_call(mod, sd(p), (x, s)), p, x, h0)
    cf = {"rnn": nn.rnn_cell, "gru": nn.gru_cell, "lstm": nn.lstm_cell}[kind]
    small = cell_params(2, 3, GATES[kind])
    s0 = (randn(3, seed=4), randn(3, seed=5)) if kind == "lstm" else randn(3, seed=4)
    check_grads(cf, (small, randn(2, seed=6), s0), order=1)


def test_leading_axes_and_init():
    k = fnad.random.PRNGKey(0)
    p = nn.init_lstm(k, 3, 5, num_layers=2)
    hs, (h, c) = nn.lstm(p, np.ones((2, 3, 4, 3), np.float32))
    assert hs.shape == (2, 3, 4, 5) and h.shape == (2, 2, 3, 5) and hs.dtype == np.float32
    hs1, _ = nn.lstm(p, np.ones((4, 3), np.float32))
    assert hs1.shape == (4, 5)
    sp = nn.init_stacked_rnn(k, 3, 6, 3)
    top, finals = nn.stacked_rnn(sp, np.ones((2, 4, 3), np.float32))
    assert top.shape == (2, 4, 6) and finals.shape == (3, 2, 6)
    np.testing.assert_array_equal(finals[-1], top[:, -1])
    with pytest.raises(TypeError, match="list of per-layer"):
        nn.rnn(sp[0], np.ones((2, 4, 3)))


def test_rnn_over_time_check_grads():
    params = [cell_params(2, 3, 3)]
    check_grads(lambda p, x: nn.gru(p, x)[0], (params, randn(2, 3, 2)), order=1)


def test_bridge():
    k = fnad.random.PRNGKey(0)
    h = randn(2, 4, 6)
    bp = nn.init_bridge(k, 6, 5, 2, 3, dtype=np.float64)
    out = nn.bridge(bp, h)
    assert out.shape == (3, 4, 5)
    # the top decoder layers start from the top encoder layers
    np.testing.assert_allclose(out[2], np.tanh(h[1] @ bp["w"][2] + bp["b"][2]))
    np.testing.assert_allclose(out[1], np.tanh(h[0] @ bp["w"][1] + bp["b"][1]))
    np.testing.assert_allclose(out[0], np.tanh(h[0] @ bp["w"][0] + bp["b"][0]))
    check_grads(nn.bridge, (bp, h), order=1)
    cp = nn.init_bridge(k, 6, 6, 3, 2, mode="copy")
    np.testing.assert_array_equal(nn.bridge(cp, randn(3, 4, 6), dec_layers=2),
                                  randn(3, 4, 6)[1:])
    with pytest.raises(ValueError, match="copy"):
        nn.init_bridge(k, 6, 5, 2, 2, mode="copy")
