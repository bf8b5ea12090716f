import numpy as np
import pytest
import torch
import torch.nn.functional as F

import fnad
import fnad.numpy as fnp
import fnad_nn as nn
from fnad.test_util import check_grads
from tests.nn.helpers import assert_close, parity, randn

RED = ["mean", "sum", "none"]


def _labels(shape, c, seed=0):
    return np.random.default_rng(seed).integers(0, c, size=shape)


@pytest.mark.parametrize("reduction", RED)
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_sparse_xent_torch(reduction, smoothing):
    z = randn(4, 6, 5, seed=1, scale=3)
    y = _labels((4, 6), 5)
    parity(lambda p, z: nn.sparse_softmax_cross_entropy(z, y, label_smoothing=smoothing,
                                                        reduction=reduction),
           lambda p, z: F.cross_entropy(z.reshape(-1, 5), torch.tensor(y.reshape(-1)),
                                        label_smoothing=smoothing,
                                        reduction=reduction).reshape(
               (4, 6) if reduction == "none" else ()),
           {}, z)


@pytest.mark.parametrize("reduction", RED)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_sparse_xent_ignore_index(reduction, smoothing):
    z = randn(10, 7, seed=2, scale=2)
    y = _labels((10,), 7, seed=3)
    y[[1, 4, 5]] = -100
    parity(lambda p, z: nn.sparse_softmax_cross_entropy(z, y, ignore_index=-100,
                                                        label_smoothing=smoothing,
                                                        reduction=reduction),
           lambda p, z: F.cross_entropy(z, torch.tensor(y), ignore_index=-100,
                                        label_smoothing=smoothing, reduction=reduction),
           {}, z)


def test_sparse_xent_mask():
    z = randn(3, 5, 4, seed=4)
    y = _labels((3, 5), 4, seed=5)
    mask = (np.random.default_rng(6).random((3, 5)) > 0.4)
    parity(lambda p, z: nn.sparse_softmax_cross_entropy(z, y, mask=mask),
           lambda p, z: (F.cross_entropy(z.reshape(-1, 4), torch.tensor(y.reshape(-1)),
                                         reduction="none") * torch.tensor(mask.reshape(-1))
                         ).sum() / mask.sum(),
           {}, z)


def test_sparse_xent_all_ignored_is_zero():
    z = randn(3, 4)
    y = np.full((3,), -100)
    loss, g = fnad.value_and_grad(
        lambda z: nn.sparse_softmax_cross_entropy(z, y, ignore_index=-100))(z)
    assert loss == 0 and np.all(g == 0)


def test_sparse_xent_bad_labels():
    with pytest.raises(ValueError, match="sparse_softmax_cross_entropy"):
        nn.sparse_softmax_cross_entropy(randn(2, 3), np.array([0, 3]))
    with pytest.raises(TypeError, match="integers"):
        nn.sparse_softmax_cross_entropy(randn(2, 3), np.array([0.0, 1.0]))


def test_sparse_xent_stable_and_second_order():
    z = np.array([[1000.0, -1000.0, 0.0], [-500.0, 500.0, 0.0]])
    y = np.array([0, 2])
    loss = nn.sparse_softmax_cross_entropy(z, y, reduction="none")
    np.testing.assert_allclose(loss, [0.0, 500.0])
    check_grads(lambda z: nn.sparse_softmax_cross_entropy(z, np.array([0, 2, 1]),
                                                          label_smoothing=0.1),
                (randn(3, 4, seed=7),), order=2)


@pytest.mark.parametrize("reduction", RED)
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_softmax_xent_probabilities(reduction, smoothing):
    z = randn(6, 5, seed=8, scale=2)
    t = nn.softmax(randn(6, 5, seed=9))
    parity(lambda p, z, t: nn.softmax_cross_entropy(z, t, label_smoothing=smoothing,
                                                    reduction=reduction),
           lambda p, z, t: F.cross_entropy(z, t, label_smoothing=smoothing, reduction=reduction),
           {}, z, t)


def test_softmax_xent_one_hot_matches_sparse():
    z = randn(2, 3, 5, seed=10)
    y = _labels((2, 3), 5)
    a = nn.softmax_cross_entropy(z, nn.one_hot(y, 5, dtype=np.float64))
    b = nn.sparse_softmax_cross_entropy(z, y)
    assert_close(a, np.asarray(b))
    check_grads(lambda z, t: nn.softmax_cross_entropy(z, t), (z, nn.softmax(randn(2, 3, 5))),
                order=2)


@pytest.mark.parametrize("reduction", RED)
def test_cross_entropy_on_probabilities(reduction):
    p = nn.softmax(randn(5, 4, seed=11))
    y = _labels((5,), 4)
    parity(lambda _, p: nn.cross_entropy(p, y, reduction=reduction),
           lambda _, p: F.nll_loss(torch.log(p), torch.tensor(y), reduction=reduction), {}, p)
    t = nn.softmax(randn(5, 4, seed=12))
    parity(lambda _, p, t: nn.cross_entropy(p, t, reduction=reduction),
           lambda _, p, t: _reduce_t(-(t * torch.log(p)).sum(-1), reduction), {}, p, t)


def _reduce_t(x, reduction):
    return {"mean": x.mean(), "sum": x.sum(), "none": x}[reduction]


@pytest.mark.parametrize("reduction", RED)
def test_nll(reduction):
    lp = nn.log_softmax(randn(3, 4, 6, seed=13))
    y = _labels((3, 4), 6)
    y[0, 1] = -100
    parity(lambda _, lp: nn.nll_loss(lp, y, ignore_index=-100, reduction=reduction),
           lambda _, lp: F.nll_loss(lp.reshape(-1, 6), torch.tensor(y.reshape(-1)),
                                    ignore_index=-100, reduction=reduction).reshape(
               (3, 4) if reduction == "none" else ()), {}, lp)


@pytest.mark.parametrize("reduction", RED)
def test_mse(reduction):
    parity(lambda _, a, b: nn.mse_loss(a, b, reduction=reduction),
           lambda _, a, b: F.mse_loss(a, b, reduction=reduction), {},
           randn(3, 4, seed=14), randn(3, 4, seed=15))


@pytest.mark.parametrize("reduction", RED)
@pytest.mark.parametrize("pos_weight", [None, "vec"])
def test_bce_with_logits(reduction, pos_weight):
    z = randn(4, 3, seed=16, scale=5)
    t = np.random.default_rng(17).random((4, 3))
    pw = None if pos_weight is None else np.array([0.5, 2.0, 3.0])
    parity(lambda _, z, t: nn.binary_cross_entropy_with_logits(z, t, pos_weight=pw,
                                                               reduction=reduction),
           lambda _, z, t: F.binary_cross_entropy_with_logits(
               z, t, pos_weight=None if pw is None else torch.tensor(pw), reduction=reduction),
           {}, z, t)


def test_bce_extreme_logits():
    z = np.array([-1000.0, 1000.0, 0.0])
    t = np.array([1.0, 0.0, 0.5])
    np.testing.assert_allclose(nn.binary_cross_entropy_with_logits(z, t, reduction="none"),
                               [1000.0, 1000.0, np.log(2)])


def test_bad_reduction():
    with pytest.raises(ValueError, match="mse_loss: reduction"):
        nn.mse_loss(randn(2), randn(2), reduction="avg")


def test_float32_loss():
    z = randn(4, 3).astype(np.float32)
    loss, g = fnad.value_and_grad(lambda z: nn.sparse_softmax_cross_entropy(
        z, np.array([0, 1, 2, 0])))(z)
    assert g.dtype == np.float32
    assert fnp.asarray(loss).dtype == np.float32
