"""jax.nn's further activations and jax.nn.initializers in fnad_nn, against jax.nn (an
optional oracle) and under grad, vmap and jit."""

import numpy as np
import pytest

import fnad
import fnad.random as jr
import fnad_nn as nn
from fnad.test_util import check_grads

# JAX compares in its default float32 mode here (see tests/conftest.py)
pytestmark = pytest.mark.usefixtures("jax_x32")

ACTS = ["elu", "selu", "celu", "relu6", "hard_tanh", "hard_sigmoid", "hard_silu",
        "hard_swish", "log_sigmoid", "swish", "soft_sign", "mish", "squareplus", "sparse_plus",
        "sparse_sigmoid", "standardize", "glu", "logsumexp", "identity", "silu", "relu",
        "sigmoid", "softmax", "log_softmax"]
SMOOTH = ["elu", "selu", "celu", "log_sigmoid", "swish", "soft_sign", "mish", "squareplus",
          "standardize", "glu", "logsumexp"]


def _x(dtype=np.float64):
    return np.linspace(-3.3, 3.1, 24).reshape(4, 6).astype(dtype)


@pytest.mark.parametrize("name", ACTS)
def test_matches_jax_nn(name):
    jax = pytest.importorskip("jax")
    x = _x(np.float32)
    want = np.asarray(getattr(jax.nn, name)(x))
    got = getattr(nn, name)(x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


def test_keyword_forms_match_jax():
    jax = pytest.importorskip("jax")
    x = _x(np.float32)
    mask = np.arange(6) % 3 != 1
    pairs = [(nn.elu(x, alpha=0.5), jax.nn.elu(x, alpha=0.5)),
             (nn.celu(x, alpha=2.0), jax.nn.celu(x, alpha=2.0)),
             (nn.glu(x, axis=0), jax.nn.glu(x, axis=0)),
             (nn.standardize(x, axis=0), jax.nn.standardize(x, axis=0)),
             (nn.standardize(x, where=mask), jax.nn.standardize(x, where=mask)),
             (nn.standardize(x, algorithm="stable"), jax.nn.standardize(x, algorithm="stable")),
             (nn.logsumexp(x, axis=1, keepdims=True), jax.nn.logsumexp(x, axis=1, keepdims=True)),
             (nn.one_hot(np.array([0, 2]), 3, axis=0), jax.nn.one_hot(np.array([0, 2]), 3, axis=0)),
             (nn.gelu(x, approximate=True), jax.nn.gelu(x, approximate=True))]
    for got, want in pairs:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", SMOOTH)
def test_grads(name):
    f = getattr(nn, name)
    check_grads(lambda x: f(x), (_x() + 0.05,), order=2)


@pytest.mark.parametrize("name", ["elu", "selu", "glu", "standardize", "relu6", "mish"])
def test_vmap_and_jit(name):
    f = getattr(nn, name)
    x = np.stack([_x(), -_x()])
    np.testing.assert_allclose(fnad.vmap(f)(x), np.stack([f(x[0]), f(x[1])]), rtol=1e-12)
    np.testing.assert_allclose(fnad.jit(f)(x), f(x), rtol=1e-12)


def test_bad_arguments():
    with pytest.raises(ValueError, match="glu: axis -1 .* odd size 5"):
        nn.glu(np.ones((2, 5)))
    with pytest.raises(ValueError, match="algorithm"):
        nn.standardize(np.ones(3), algorithm="slow")


# ----------------------------------------------------------------------------- initializers

INITS = [("glorot_normal", (5, 3)), ("glorot_uniform", (5, 3)), ("he_normal", (3, 3, 4, 8)),
         ("he_uniform", (6, 4)), ("lecun_normal", (6, 4)), ("lecun_uniform", (6, 4)),
         ("xavier_normal", (4, 2)), ("kaiming_uniform", (4, 2)), ("orthogonal", (5, 3)),
         ("orthogonal", (3, 5)), ("normal", (7,)), ("uniform", (7,)),
         ("truncated_normal", (7,))]


@pytest.mark.parametrize("name, shape", INITS, ids=[f"{n}{s}" for n, s in INITS])
def test_initializers_match_jax_bits(name, shape):
    jax = pytest.importorskip("jax")
    with jax.threefry_partitionable(False):  # fnad's threefry is JAX's original scheme
        want = np.asarray(getattr(jax.nn.initializers, name)()(jax.random.PRNGKey(3), shape))
    got = getattr(nn.initializers, name)()(jr.PRNGKey(3), shape)
    assert got.dtype == want.dtype == np.float32 and got.shape == shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_variance_scaling_forms():
    jax = pytest.importorskip("jax")
    cases = [(0.5, "fan_out", "normal", {}), (2.0, "fan_geo_avg", "uniform", {}),
             (1.0, "fan_in", "truncated_normal", {"in_axis": 0, "out_axis": 1}),
             (1.0, "fan_avg", "normal", {"batch_axis": 0})]
    for scale, mode, dist, kw in cases:
        with jax.threefry_partitionable(False):
            want = jax.nn.initializers.variance_scaling(scale, mode, dist, **kw)(
                jax.random.PRNGKey(1), (2, 3, 4), np.float64 if False else np.float32)
        got = nn.initializers.variance_scaling(scale, mode, dist, **kw)(jr.PRNGKey(1), (2, 3, 4))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_initializer_values_and_errors():
    key = jr.PRNGKey(0)
    assert nn.initializers.zeros(key, (2, 3)).sum() == 0
    assert nn.initializers.ones(key, (2,), np.float64).dtype == np.float64
    np.testing.assert_array_equal(nn.initializers.constant(0.5)(key, (2,)), [0.5, 0.5])
    q = nn.initializers.orthogonal(scale=2.0)(key, (6, 4), np.float64)
    np.testing.assert_allclose(q.T @ q, 4 * np.eye(4), atol=1e-12)
    w = nn.initializers.he_normal()(key, (400, 300))
    assert abs(w.std() - np.sqrt(2 / 400)) < 0.02 * np.sqrt(2 / 400)
    with pytest.raises(ValueError, match="in_axis"):
        nn.initializers.glorot_normal()(key, (5,))
    with pytest.raises(ValueError, match="mode"):
        nn.initializers.variance_scaling(1.0, "fan_max", "normal")
