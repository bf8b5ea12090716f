import numpy as np
import pytest
import torch
import torch.nn.functional as F

import fnad
import fnad.numpy as fnp
import fnad_nn as nn
from fnad.test_util import check_grads
from tests.nn.helpers import parity, randn

CONV_CASES = [
    # c_in, c_out, k, stride, padding, dilation, groups
    (1, 4, 3, 1, 0, 1, 1),
    (3, 4, 3, 1, 1, 1, 1),
    (4, 6, 3, 2, 1, 1, 2),
    (4, 4, (3, 2), (2, 1), (1, 0), 1, 4),
    (2, 3, 3, 1, 2, 2, 1),
    (3, 2, 1, 1, 0, 1, 1),
]


@pytest.mark.parametrize("case", CONV_CASES, ids=str)
def test_conv2d_torch(case):
    c_in, c_out, k, s, p, d, g = case
    kh, kw = (k, k) if isinstance(k, int) else k
    params = {"w": randn(c_out, c_in // g, kh, kw, seed=1), "b": randn(c_out, seed=2)}
    x = randn(2, c_in, 7, 6, seed=3)
    parity(lambda pr, x: nn.conv2d(pr, x, stride=s, padding=p, dilation=d),
           lambda pr, x: F.conv2d(x, pr["w"], pr["b"], s, p, d, g), params, x)


def test_conv2d_same_padding_no_bias_and_leading_axes():
    params = {"w": randn(3, 2, 3, 3), "b": None}
    x = randn(2, 2, 2, 5, 5)
    y = nn.conv2d(params, x, padding="same")
    assert y.shape == (2, 2, 3, 5, 5)
    np.testing.assert_allclose(y[1], nn.conv2d(params, x[1], padding=1), atol=1e-13)
    parity(lambda pr, x: nn.conv2d(pr, x, padding="same"),
           lambda pr, x: F.conv2d(x, pr["w"], padding="same"), params, x[0])


def test_conv2d_higher_order():
    params = {"w": randn(2, 1, 2, 2), "b": randn(2)}
    check_grads(lambda p, x: nn.conv2d(p, x, stride=2, padding=1), (params, randn(1, 1, 4, 4)),
                order=2)


@pytest.mark.parametrize("padding, dilation", [(1, 1), ((2, 0), (2, 1))], ids=str)
def test_conv2d_stride1_higher_order(padding, dilation):
    # stride 1 runs on the chunked conv_s1 primitives, whose VJPs are one another
    params = {"w": randn(3, 2, 3, 2, seed=4), "b": randn(3, seed=5)}
    check_grads(lambda p, x: nn.conv2d(p, x, padding=padding, dilation=dilation),
                (params, randn(2, 2, 5, 4, seed=6)), order=3)


def test_conv2d_stride1_chunked(monkeypatch):
    # one image per chunk gives the same values and gradients as one chunk
    import fnad_nn._conv_s1 as s1
    params = {"w": randn(4, 3, 3, 3, seed=7), "b": randn(4, seed=8)}
    x = randn(3, 3, 6, 5, seed=9)

    def f(p, x):
        return fnp.sum(nn.conv2d(p, x, padding=1) ** 2)

    ref = fnad.value_and_grad(f, argnums=(0, 1))(params, x)
    monkeypatch.setattr(s1, "_CHUNK_BYTES", 1)
    got = fnad.value_and_grad(f, argnums=(0, 1))(params, x)
    for a, b in zip(fnad.tree_leaves(ref), fnad.tree_leaves(got)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_conv2d_mixed_dtypes_promote():
    # float32 parameters on float64 input: float64 output and gradients, no silent downcast
    params = {"w": randn(3, 2, 3, 3, seed=10).astype(np.float32), "b": randn(3).astype(np.float32)}
    x = randn(2, 2, 5, 5, seed=11)
    ref = {k: v.astype(np.float64) for k, v in params.items()}
    y = nn.conv2d(params, x, padding=1)
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, nn.conv2d(ref, x, padding=1), rtol=1e-12, atol=1e-12)

    def f(p, x):
        return fnp.sum(nn.conv2d(p, x, padding=1) ** 2)

    gx = fnad.grad(f, argnums=1)(params, x)
    assert gx.dtype == np.float64
    np.testing.assert_allclose(gx, fnad.grad(f, argnums=1)(ref, x), rtol=1e-12, atol=1e-12)


def test_conv2d_errors():
    with pytest.raises(ValueError, match="conv2d: input has 3 channels"):
        nn.conv2d({"w": randn(4, 2, 3, 3), "b": None}, randn(1, 3, 5, 5))
    with pytest.raises(ValueError, match="NCHW"):
        nn.conv2d({"w": randn(4, 2, 3, 3), "b": None}, randn(5, 5))


@pytest.mark.parametrize("k,s,p,d", [(2, None, 0, 1), (3, 2, 1, 1), ((3, 2), 1, (1, 0), 1),
                                     (2, 1, 0, 2)], ids=str)
def test_max_pool_torch(k, s, p, d):
    x = randn(2, 3, 7, 6, seed=4)
    parity(lambda _, x: nn.max_pool2d(x, k, s, p, d),
           lambda _, x: F.max_pool2d(x, k, s, p, d), {}, x)


@pytest.mark.parametrize("k,s,p", [(2, None, 0), (3, 2, 1), ((3, 2), 1, (1, 0))], ids=str)
def test_avg_pool_torch(k, s, p):
    x = randn(2, 3, 7, 6, seed=5)
    parity(lambda _, x: nn.avg_pool2d(x, k, s, p),
           lambda _, x: F.avg_pool2d(x, k, s, p), {}, x)


def test_pool_grads_and_shapes():
    x = randn(1, 1, 4, 4)
    check_grads(lambda x: nn.avg_pool2d(x, 2), (x,), order=2)
    check_grads(lambda x: nn.max_pool2d(x, 2), (x,), order=1)
    assert nn.max_pool2d(np.zeros((3, 2, 8, 16, 16), np.float32), 2).shape == (3, 2, 8, 8, 8)


def test_small_cnn_end_to_end_torch():
    p = {"c1": {"w": randn(4, 1, 3, 3, seed=1) * 0.3, "b": randn(4, seed=2) * 0.1},
         "c2": {"w": randn(6, 4, 3, 3, seed=3) * 0.3, "b": randn(6, seed=4) * 0.1},
         "fc": {"w": randn(6 * 2 * 2, 3, seed=5) * 0.3, "b": randn(3, seed=6) * 0.1}}
    x = randn(2, 1, 8, 8, seed=7)
    y = np.array([0, 2])

    def model(p, x):
        h = nn.max_pool2d(nn.relu(nn.conv2d(p["c1"], x, padding=1)), 2)
        h = nn.avg_pool2d(nn.relu(nn.conv2d(p["c2"], h, padding=1)), 2)
        return nn.sparse_softmax_cross_entropy(nn.linear(p["fc"], nn.flatten(h)), y)

    def tmodel(p, x):
        h = F.max_pool2d(F.relu(F.conv2d(x, p["c1"]["w"], p["c1"]["b"], padding=1)), 2)
        h = F.avg_pool2d(F.relu(F.conv2d(h, p["c2"]["w"], p["c2"]["b"], padding=1)), 2)
        logits = F.linear(torch.flatten(h, 1), p["fc"]["w"].T, p["fc"]["b"])
        return F.cross_entropy(logits, torch.tensor(y))

    parity(model, tmodel, p, x)
    g = fnad.grad(lambda p: model(p, x.astype(np.float32)))(
        fnad.tree_map(lambda a: a.astype(np.float32), p))
    assert all(v.dtype == np.float32 for v in fnad.tree_leaves(g))
    assert np.isfinite(float(fnp.sum(g["c1"]["w"])))
