import numpy as np
import pytest
import torch
import torch.nn.functional as F

import fnad
import fnad.numpy as fnp
import fnad_nn as nn
from fnad.test_util import check_grads
from tests.nn.helpers import assert_close, parity, randn


@pytest.mark.parametrize("lead", [(4,), (2, 3), (2, 1, 3)], ids=str)
def test_layer_norm_torch(lead):
    p = {"scale": randn(6, seed=1), "bias": randn(6, seed=2)}
    out = parity(nn.layer_norm, lambda p, x: F.layer_norm(x, (6,), p["scale"], p["bias"]),
                 p, randn(*lead, 6, seed=3, scale=2) + 1)
    assert out.shape == lead + (6,)


def test_layer_norm_no_bias_and_grads():
    p = {"scale": randn(5, seed=1), "bias": None}
    parity(nn.layer_norm, lambda p, x: F.layer_norm(x, (5,), p["scale"], None, eps=1e-5),
           p, randn(3, 5))
    check_grads(nn.layer_norm, ({"scale": randn(4), "bias": randn(4, seed=1)}, randn(2, 4)),
                order=2)


@pytest.mark.parametrize("lead", [(4,), (2, 3)], ids=str)
def test_rms_norm_torch(lead):
    p = {"scale": randn(6, seed=1)}
    parity(lambda p, x: nn.rms_norm(p, x, eps=1e-6),
           lambda p, x: F.rms_norm(x, (6,), p["scale"], eps=1e-6), p, randn(*lead, 6, seed=3))
    check_grads(nn.rms_norm, (p, randn(2, 6)), order=2)


def _bn_params(c):
    return {"scale": randn(c, seed=1), "bias": randn(c, seed=2)}


@pytest.mark.parametrize("shape,axis", [((8, 5), -1), ((4, 6, 5), -1), ((4, 5, 3, 3), 1)],
                         ids=["BC", "BTC", "NCHW"])
def test_batch_norm_train_torch(shape, axis):
    c = 5
    params = _bn_params(c)
    state = {"mean": randn(c, seed=3), "var": np.abs(randn(c, seed=4)) + 0.5}
    x = randn(*shape, seed=5, scale=2) + 1

    def to_torch_layout(x):  # torch wants the channels on axis 1
        return x.transpose(1, 2) if len(shape) == 3 else x

    rm, rv = torch.tensor(state["mean"]), torch.tensor(state["var"])

    def tfn(p, x):
        y = F.batch_norm(to_torch_layout(x), rm, rv, p["scale"], p["bias"], training=True,
                         momentum=0.1, eps=1e-5)
        return to_torch_layout(y)

    y = parity(lambda p, x: nn.batch_norm(p, state, x, axis=axis)[0], tfn, params, x)
    _, new_state = nn.batch_norm(params, state, x, axis=axis)
    assert_close(new_state["mean"], rm)
    assert_close(new_state["var"], rv)
    assert y.shape == shape


def test_batch_norm_eval_uses_running_stats():
    c = 3
    params = _bn_params(c)
    state = {"mean": randn(c, seed=3), "var": np.abs(randn(c, seed=4)) + 0.5}
    x = randn(4, 7, c, seed=6)
    y, s2 = nn.batch_norm(params, state, x, train=False)
    assert s2 is state
    parity(lambda p, x: nn.batch_norm(p, state, x, train=False)[0],
           lambda p, x: F.batch_norm(x.transpose(1, 2), torch.tensor(state["mean"]),
                                     torch.tensor(state["var"]), p["scale"], p["bias"],
                                     training=False).transpose(1, 2), params, x)


def test_batch_norm_two_calls_before_differentiating():
    params, state = nn.init_batch_norm(4, dtype=np.float64)
    params = _bn_params(4)
    x1, x2 = randn(6, 4, seed=1), randn(6, 4, seed=2) * 3

    def loss_one(p, x):
        y, _ = nn.batch_norm(p, state, x)
        return fnp.sum(fnp.tanh(y) * fnp.arange(4.0))

    def loss_both(p):
        y1, s1 = nn.batch_norm(p, state, x1)
        y2, _ = nn.batch_norm(p, s1, x2)
        return fnp.sum(fnp.tanh(y1) * fnp.arange(4.0)) + fnp.sum(fnp.tanh(y2) * fnp.arange(4.0))

    g = fnad.grad(loss_both)(params)
    g1 = fnad.grad(loss_one)(params, x1)
    g2 = fnad.grad(loss_one)(params, x2)
    for k in params:
        np.testing.assert_array_equal(g[k], g1[k] + g2[k])


def test_batch_norm_state_under_grad_is_plain():
    params, state = nn.init_batch_norm(3, dtype=np.float64)
    _, new_state = fnad.grad(lambda p: (fnp.sum(nn.batch_norm(p, state, randn(5, 3))[0] ** 2),
                                        nn.batch_norm(p, state, randn(5, 3))[1]),
                             has_aux=True)(params)
    assert all(isinstance(v, np.ndarray) for v in new_state.values())
    check_grads(lambda p, x: nn.batch_norm(p, state, x)[0], (_bn_params(3), randn(5, 3)),
                order=2)


def test_batch_norm_errors():
    params, state = nn.init_batch_norm(3)
    with pytest.raises(ValueError, match="batch_norm: input of shape"):
        nn.batch_norm(params, state, np.zeros((4, 5)))
    with pytest.raises(ValueError, match="more than one value"):
        nn.batch_norm(params, state, np.zeros((1, 3)))
