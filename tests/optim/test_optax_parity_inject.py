"""inject_hyperparams against optax: hyperparameters in the state, schedules evaluated into
it, a learning rate changed between steps; float64, 50 steps, eager and jit."""

import numpy as np
import pytest

import fnad
import fnad_optim as fo
from tests.optim.optax_steps import modes, run_parity

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

CASES = {
    "adam": lambda lib: lib.inject_hyperparams(lib.adam)(learning_rate=1e-2, b1=0.8),
    "adamw_schedule": lambda lib: lib.inject_hyperparams(lib.adamw)(
        learning_rate=lib.cosine_decay_schedule(1e-2, 40), weight_decay=0.1),
    "sgd_static": lambda lib: lib.inject_hyperparams(lib.sgd, static_args="nesterov")(
        0.1, momentum=0.9, nesterov=True),
    "stateful": lambda lib: lib.inject_stateful_hyperparams(lib.rmsprop)(
        learning_rate=lambda c: 1e-2 / (1 + c), decay=0.8),
}


# under jit in the default run (each name runs eagerly; the others under jit with -m slow)
FAST_JIT = {"adamw_schedule", "sgd_static"}


@pytest.mark.filterwarnings("ignore:inject_stateful_hyperparams is deprecated")
@pytest.mark.parametrize(("name", "jit"), modes(CASES, FAST_JIT))
def test_inject_matches_optax(name, jit):
    s1, s2 = run_parity(CASES[name](fo), CASES[name](optax), jit=jit)
    assert type(s1)._fields == type(s2)._fields
    assert set(s1.hyperparams) >= set(s2.hyperparams)  # fnad's sgd adds weight_decay
    for k in s2.hyperparams:
        np.testing.assert_allclose(np.asarray(s1.hyperparams[k]),
                                   np.asarray(s2.hyperparams[k]), rtol=1e-12)
        assert np.asarray(s1.hyperparams[k]).dtype == np.asarray(s2.hyperparams[k]).dtype


def test_changing_the_learning_rate_between_steps():
    params = {"x": np.array([1.0, -2.0])}
    ours = fo.inject_hyperparams(fo.sgd)(learning_rate=0.1, momentum=0.9)
    theirs = optax.inject_hyperparams(optax.sgd)(learning_rate=0.1, momentum=0.9)
    s1, s2 = ours.init(params), theirs.init(params)
    step = fnad.jit(ours.update)
    for i in range(6):
        if i == 3:
            s1.hyperparams["learning_rate"] = np.asarray(0.01)
            s2.hyperparams["learning_rate"] = jax.numpy.asarray(0.01)
        g = {"x": params["x"] * (i + 1)}
        u1, s1 = step(g, s1, params)
        u2, s2 = theirs.update(g, s2, params)
        np.testing.assert_allclose(u1["x"], np.asarray(u2["x"]), rtol=1e-12)
    assert float(s1.hyperparams["learning_rate"]) == 0.01


def test_static_args_must_be_parameters():
    with pytest.raises(ValueError, match="inject_hyperparams: static_args"):
        fo.inject_hyperparams(fo.sgd, static_args=("nope",))
