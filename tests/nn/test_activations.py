import numpy as np
import pytest
import torch
import torch.nn.functional as F

import fnad
import fnad_nn as nn
from fnad.test_util import check_grads
from tests.nn.helpers import assert_close, parity, randn

CASES = [
    ("relu", nn.relu, F.relu),
    ("leaky_relu", lambda x: nn.leaky_relu(x, 0.2), lambda x: F.leaky_relu(x, 0.2)),
    ("gelu", nn.gelu, F.gelu),
    ("gelu_tanh", lambda x: nn.gelu(x, approximate=True), lambda x: F.gelu(x, approximate="tanh")),
    ("silu", nn.silu, F.silu),
    ("sigmoid", nn.sigmoid, torch.sigmoid),
    ("tanh", nn.tanh, torch.tanh),
    ("softplus", nn.softplus, F.softplus),
    ("softplus_beta", lambda x: nn.softplus(x, beta=2.0, threshold=5.0),
     lambda x: F.softplus(x, beta=2.0, threshold=5.0)),
    ("softmax", nn.softmax, lambda x: torch.softmax(x, -1)),
    ("softmax_axis0", lambda x: nn.softmax(x, axis=0), lambda x: torch.softmax(x, 0)),
    ("log_softmax", nn.log_softmax, lambda x: torch.log_softmax(x, -1)),
]


@pytest.mark.parametrize("name,f,tf", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4)], ids=str)
def test_torch_parity(name, f, tf, shape):
    x = randn(*shape, seed=1, scale=3.0)
    parity(lambda p, x: f(x), lambda p, x: tf(x), {}, x)


@pytest.mark.parametrize("name,f,tf", CASES, ids=[c[0] for c in CASES])
def test_check_grads(name, f, tf):
    x = randn(2, 3, seed=2) + 0.1  # away from relu's kink
    check_grads(f, (x,), order=2)


def test_extreme_values_are_finite():
    x = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    for f in (nn.sigmoid, nn.softplus, nn.silu, nn.log_softmax, nn.softmax, nn.gelu):
        y = f(x)
        assert np.all(np.isfinite(y)), f
    assert_close(nn.softplus(x), F.softplus(torch.tensor(x)))
    assert_close(nn.log_softmax(x), torch.log_softmax(torch.tensor(x), -1))


def test_gelu_exact_precise():
    x = np.linspace(-10, 10, 2001)
    assert_close(nn.gelu(x), F.gelu(torch.tensor(x)), tol=1e-14)
    g = fnad.grad(lambda x: fnad.numpy.sum(nn.gelu(x)))(x)
    t = torch.tensor(x, requires_grad=True)
    F.gelu(t).sum().backward()
    assert_close(g, t.grad, tol=1e-13)


def test_one_hot():
    y = nn.one_hot(np.array([[0, 2], [1, -100]]), 3)
    assert y.dtype == np.float32 and y.shape == (2, 2, 3)
    np.testing.assert_array_equal(y[0], [[1, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(y[1, 1], [0, 0, 0])
    ref = F.one_hot(torch.tensor([0, 2, 1]), 3).numpy()
    np.testing.assert_array_equal(nn.one_hot(np.array([0, 2, 1]), 3, dtype=np.int64), ref)


def test_float32_preserved():
    x = np.ones((2, 3), np.float32)
    for f in (nn.relu, nn.gelu, nn.silu, nn.sigmoid, nn.softplus, nn.softmax, nn.log_softmax,
              lambda x: nn.gelu(x, approximate=True), nn.leaky_relu):
        assert f(x).dtype == np.float32, f


def test_gelu_float32_accuracy():
    x = np.random.default_rng(0).standard_normal(10000).astype(np.float32) * 5
    ref = F.gelu(torch.tensor(x.astype(np.float64))).numpy()
    y = nn.gelu(x)
    assert y.dtype == np.float32
    assert np.max(np.abs(y - ref) / np.maximum(np.abs(ref), 1e-2)) < 1e-5
    # the float32 derivative runs on its own blocked path
    g = fnad.grad(lambda x: fnad.numpy.sum(nn.gelu(x)))(x)
    t = torch.tensor(x.astype(np.float64), requires_grad=True)
    F.gelu(t).sum().backward()
    assert g.dtype == np.float32
    assert np.max(np.abs(g - t.grad.numpy()) / np.maximum(np.abs(t.grad.numpy()), 1e-2)) < 1e-5
    check_grads(nn.gelu, (randn(3, 4, seed=3),), order=3)


def test_activations_are_the_primitives_of_fnad_scipy_special():
    # one home per op: fnad_nn defines no second sigmoid, softmax, log_softmax or erf
    import fnad.scipy.special as fsp
    from fnad.extend import PRIMITIVES
    names = [p.name for p in PRIMITIVES]
    assert "sigmoid" not in names
    assert all(names.count(n) == 1 for n in ("expit", "softmax", "log_softmax", "erf"))
    x = np.array([[0.5, -1.0, 2.0]])
    np.testing.assert_array_equal(nn.sigmoid(x), fsp.expit(x))
    np.testing.assert_array_equal(nn.softmax(x), fsp.softmax(x, axis=-1))
    np.testing.assert_array_equal(nn.log_softmax(x), fsp.log_softmax(x, axis=-1))


ELEMENTWISE = [c for c in CASES if not c[0].startswith(("softmax", "log_softmax"))]


@pytest.mark.parametrize("name,f,tf", ELEMENTWISE, ids=[c[0] for c in ELEMENTWISE])
@pytest.mark.parametrize("x", [np.float32(0.7), np.array(0.7, np.float32), np.float64(0.7)],
                         ids=["f32scalar", "f32array0d", "f64scalar"])
def test_zero_d_input_keeps_shape_in_every_path(name, f, tf, x):
    """A 0-d input gives a 0-d output eagerly, under jit, grad and vmap (issue 31: the fused
    float32 GELU kernel made np.float32(1.0) into shape (1,), so grad failed)."""
    assert np.shape(f(x)) == ()
    assert np.shape(fnad.jit(f)(x)) == ()
    g = fnad.grad(f)(x)
    assert np.shape(g) == ()
    want = torch.func.grad(tf)(torch.tensor(float(x), dtype=torch.float64)).item()
    assert abs(float(g) - want) < 1e-5
    assert fnad.vmap(f)(np.array([x, x])).shape == (2,)
