"""fnad.example_libraries (JAX's stax and optimizers): JAX's parameters for the same key,
JAX's updates, and optimizer states that pass through jit and fori_loop."""

import numpy as np
import pytest

import fnad
import fnad.random as jr
from fnad.example_libraries import optimizers as fo
from fnad.example_libraries import stax as fs

# JAX compares in its default float32 mode here (see tests/conftest.py)
pytestmark = pytest.mark.usefixtures("jax_x32")


def _net(S):
    return S.serial(S.Dense(8), S.Relu, S.FanOut(2),
                    S.parallel(S.Dense(3), S.serial(S.Dense(3), S.Softplus)), S.FanInSum,
                    S.Tanh, S.Dense(4), S.LogSoftmax)


X = np.random.RandomState(0).randn(4, 5).astype(np.float32)


def test_stax_matches_jax():
    jax = pytest.importorskip("jax")
    from jax.example_libraries import stax as js
    with jax.threefry_partitionable(False):
        init, apply = _net(js)
        shape, params = init(jax.random.PRNGKey(0), (-1, 5))
    f_init, f_apply = _net(fs)
    f_shape, f_params = f_init(jr.PRNGKey(0), (-1, 5))
    assert f_shape == shape == (-1, 4)
    assert fnad.tree_structure(f_params) == fnad.tree_structure(
        jax.tree_util.tree_map(np.asarray, params))
    for a, b in zip(jax.tree_util.tree_leaves(params), fnad.tree_leaves(f_params)):
        np.testing.assert_allclose(b, a, atol=1e-6)
    np.testing.assert_allclose(f_apply(f_params, X), apply(params, X), atol=1e-5)


@pytest.mark.parametrize("name, args", [("sgd", (0.1,)), ("momentum", (0.1, 0.9)),
                                        ("nesterov", (0.1, 0.9)), ("adagrad", (0.1,)),
                                        ("rmsprop", (0.1,)), ("adam", (0.1,))])
def test_optimizers_match_jax(name, args):
    jax = pytest.importorskip("jax")
    from jax.example_libraries import optimizers as jo
    params = {"w": np.ones((2, 3), np.float32), "b": [np.zeros(3, np.float32)]}
    j_init, j_update, j_get = getattr(jo, name)(*args)
    f_init, f_update, f_get = getattr(fo, name)(*args)
    j_state, f_state = j_init(params), f_init(params)
    for i in range(3):
        g = fnad.tree_map(lambda p: p * 0.5 + i - 1.0, params)
        j_state, f_state = j_update(i, g, j_state), f_update(i, g, f_state)
    for a, b in zip(jax.tree_util.tree_leaves(j_get(j_state)), fnad.tree_leaves(f_get(f_state))):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_training_through_jit_and_fori_loop():
    init, apply = fs.serial(fs.Dense(3), fs.LogSoftmax)
    _, params = init(jr.PRNGKey(1), (-1, 5))
    opt_init, opt_update, get_params = fo.momentum(fo.exponential_decay(0.1, 10, 0.5), 0.9)
    y = np.eye(3, dtype=np.float32)[[0, 1, 2, 0]]

    def loss(p):
        return -fnad.numpy.mean(fnad.numpy.sum(apply(p, X) * y, axis=1))

    step = fnad.jit(lambda i, s: opt_update(i, fnad.grad(loss)(get_params(s)), s))
    state = opt_init(params)
    before = loss(get_params(state))
    state = fnad.lax.fori_loop(0, 20, step, state)
    assert loss(get_params(state)) < before
    with pytest.raises(TypeError, match="structure differs"):
        opt_update(0, [1.0], state)
