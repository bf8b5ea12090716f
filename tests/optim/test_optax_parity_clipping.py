"""Adafactor, whole-leaf and per-example clipping and the conditional wrappers against
optax in float64 (50 steps, compared after each to 1e-10)."""

import numpy as np
import pytest

import fnad
import fnad_optim as fo
from tests.optim.optax_steps import modes, run_parity

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

# leaves with factored (both large axes >= 4) and unfactored moments
SHAPES = {"w": (6, 4), "t": (3, 5, 4), "b": (4,), "s": ()}


def _decay64(i, exponent):
    return 1.0 - (i + np.float64(1.0)) ** np.float64(-exponent)  # float64 in jax too


# optax computes adafactor's default decay `1 - (t + 1) ** -0.8` in float32, and XLA's float32
# power differs from NumPy's by one ulp at some counts (t = 3, ...): the named adafactor is
# compared to float32 rounding; its factored scaling with a float64 decay to 1e-10 above.
LOOSE = {"adafactor", "adafactor_momentum_wd", "adafactor_unfactored"}


CASES = {
    "adafactor": lambda lib: lib.adafactor(1e-2, min_dim_size_to_factor=4),
    "adafactor_momentum_wd": lambda lib: lib.adafactor(
        1e-2, min_dim_size_to_factor=4, momentum=0.9, dtype_momentum=np.float64,
        weight_decay_rate=1e-3, clipping_threshold=0.5),
    "adafactor_unfactored": lambda lib: lib.adafactor(1e-2, factored=False,
                                                      multiply_by_parameter_scale=False),
    "factored_rms_f64_decay": lambda lib: lib.chain(lib.scale_by_factored_rms(
        min_dim_size_to_factor=4, decay_rate_fn=_decay64), lib.scale(-1e-2)),
    "clip_by_block_rms": lambda lib: lib.chain(lib.clip_by_block_rms(0.3), lib.sgd(0.1)),
    "adaptive_grad_clip": lambda lib: lib.chain(lib.adaptive_grad_clip(0.05), lib.sgd(0.1)),
    "conditionally_mask": lambda lib: lib.conditionally_mask(
        lib.adam(1e-2), lambda step: step % 3 != 1),
    "conditionally_transform": lambda lib: lib.chain(lib.conditionally_transform(
        lib.clip(0.1), lambda step: step < 20), lib.sgd(0.1)),
}


# under jit in the default run (each name runs eagerly; the others under jit with -m slow)
FAST_JIT = {"adafactor_momentum_wd", "conditionally_mask"}


@pytest.mark.parametrize(("name", "jit"), modes(CASES, FAST_JIT))
def test_matches_optax(name, jit):
    tol = {"rtol": 1e-6, "atol": 1e-9} if name in LOOSE else {}
    run_parity(CASES[name](fo), CASES[name](optax), jit=jit, shapes=SHAPES, **tol)


def test_factored_state_layout():
    params = {"w": np.zeros((6, 4)), "b": np.zeros(4)}
    ours = fo.scale_by_factored_rms(min_dim_size_to_factor=4).init(params)
    theirs = optax.scale_by_factored_rms(min_dim_size_to_factor=4).init(params)
    assert type(ours)._fields == type(theirs)._fields
    for a, b in zip(fnad.tree_leaves(ours), jax.tree.leaves(theirs)):
        assert np.shape(a) == np.shape(b)


@pytest.mark.parametrize("uniform", [True, False])
def test_per_example_clips_match_optax(uniform):
    rng = np.random.default_rng(1)
    grads = {"w": rng.normal(size=(5, 3, 2)), "b": 0.1 * rng.normal(size=(5, 2))}
    for ours, theirs in [
        (fo.per_example_global_norm_clip(grads, 1.5),
         optax.per_example_global_norm_clip(grads, 1.5)),
        (fo.per_example_layer_norm_clip(grads, 1.5, uniform),
         optax.per_example_layer_norm_clip(grads, 1.5, uniform))]:
        for a, b in zip(fnad.tree_leaves(ours), jax.tree.leaves(theirs)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)


def test_skip_functions_match_optax():
    g = {"a": np.array([1.0, np.inf]), "b": np.array([np.nan, 2.0, 3.0])}
    for ours, theirs in [(fo.skip_not_finite(g, 0, None), optax.skip_not_finite(g, 0, None)),
                         (fo.skip_large_updates({"a": np.ones(3)}, 0, None, 2.5),
                          optax.skip_large_updates({"a": np.ones(3)}, 0, None, 2.5))]:
        assert bool(ours[0]) == bool(theirs[0])
        for k in theirs[1]:
            np.testing.assert_allclose(np.asarray(ours[1][k]), np.asarray(theirs[1][k]))


def test_errors_name_the_function():
    with pytest.raises(ValueError, match="per_example_global_norm_clip: every leaf"):
        fo.per_example_global_norm_clip({"a": np.ones(3), "b": np.ones((2, 3))}, 1.0)
    with pytest.raises(ValueError, match="scale_by_factored_rms: this transform needs"):
        tx = fo.adafactor(1e-2)
        p = {"w": np.ones((2, 2))}
        tx.update(p, tx.init(p))


@pytest.mark.parametrize("make", [
    lambda: fo.adafactor(1e-2), lambda: fo.sm3(1e-2), lambda: fo.novograd(1e-2),
    lambda: fo.chain(fo.adaptive_grad_clip(0.1), fo.sgd(0.1)),
    lambda: fo.noisy_sgd(0.1, key=0)], ids=["adafactor", "sm3", "novograd", "agc", "noise"])
def test_sharding_refuses_transforms_that_read_whole_leaves(make):
    with pytest.raises(ValueError, match=r"shard_optimizer_state: \w+ cannot be sharded"):
        fo.shard_optimizer_state(make()).init({"w": np.ones((4, 3))})


def test_sharding_accepts_coordinatewise_transforms():
    params = {"w": np.ones((4, 3))}
    for opt in [fo.adan(1e-2), fo.amsgrad(1e-2), fo.lars(0.1), fo.rprop(1e-2)]:
        tx = fo.shard_optimizer_state(opt)
        u, _ = tx.update(params, tx.init(params), params)
        want, _ = opt.update(params, opt.init(params), params)
        np.testing.assert_array_equal(u["w"], want["w"])


def _nan_every_fifth(rng, params, step):
    g = {k: np.asarray(0.5 * v + rng.normal(size=np.shape(v))) for k, v in params.items()}
    if step % 5 == 2:
        g["w"] = g["w"].copy()
        g["w"][0, 0] = np.nan
    return g


@pytest.mark.parametrize("mean", [True, False])
def test_multisteps_matches_optax(mean):
    def build(lib):
        return lib.MultiSteps(lib.adam(1e-2), lambda step: 2 + step % 3, use_grad_mean=mean,
                              should_skip_update_fn=lib.skip_not_finite,
                              accumulator_dtype=np.float64)

    ours, theirs = build(fo), build(optax)
    s1, s2 = run_parity(ours.gradient_transformation(), theirs.gradient_transformation(),
                        shapes=SHAPES, grads_fn=_nan_every_fifth, steps=30)
    assert type(s1)._fields == type(s2)._fields
    assert bool(ours.has_updated(s1)) == bool(theirs.has_updated(s2))
    assert int(s1.gradient_step) == int(s2.gradient_step)
    assert int(s1.skip_state["num_not_finite"]) == int(s2.skip_state["num_not_finite"])
