"""The optimizers and transforms fnad_optim shares with optax, run side by side in float64
for 50 steps on random gradient trees, compared after each step to 1e-10; eager and jit."""

import numpy as np
import pytest

import fnad_optim as fo
from tests.optim.optax_steps import modes, run_parity

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

SCHED = "sched"  # marks a learning rate given as a schedule


def _lr(lib, lr):
    return (lambda c: 1e-2 / (1.0 + 0.1 * c)) if lr == SCHED else lr


# name: lambda lib -> transform, built the same way from fnad_optim and from optax
CASES = {
    "nadam": lambda lib: lib.nadam(1e-2),
    "nadamw": lambda lib: lib.nadamw(1e-2, weight_decay=0.1),
    "radam": lambda lib: lib.radam(1e-2),
    "radam_nesterov": lambda lib: lib.radam(1e-2, nesterov=True, threshold=4.5),
    "adamax": lambda lib: lib.adamax(1e-2),
    "adamaxw": lambda lib: lib.adamaxw(_lr(lib, SCHED), weight_decay=0.05),
    "adabelief": lambda lib: lib.adabelief(1e-2),
    "adabelief_nesterov": lambda lib: lib.adabelief(1e-2, nesterov=True),
    "amsgrad": lambda lib: lib.amsgrad(1e-2),
    "amsgrad_nobias": lambda lib: lib.amsgrad(1e-2, bias_correction_mu=False,
                                              bias_correction_nu=False),
    "yogi": lambda lib: lib.yogi(1e-2),
    "novograd": lambda lib: lib.novograd(1e-2, weight_decay=0.01),
    "lars": lambda lib: lib.lars(0.1, weight_decay=1e-3),
    "lars_masked": lambda lib: lib.lars(0.1, weight_decay=1e-3, nesterov=True,
                                        trust_ratio_mask={"w": True, "b": False, "k": True}),
    "sm3": lambda lib: lib.sm3(1e-2),
    "sm3_b2": lambda lib: lib.chain(lib.scale_by_sm3(0.9, 0.9), lib.scale(-1e-2)),
    "fromage": lambda lib: lib.fromage(1e-2),
    "fromage_schedule": lambda lib: lib.fromage(_lr(lib, SCHED)),
    "adadelta": lambda lib: lib.adadelta(1.0, weight_decay=0.01),
    "rprop": lambda lib: lib.rprop(1e-2),
    "sign_sgd": lambda lib: lib.sign_sgd(1e-2),
    "signum": lambda lib: lib.signum(1e-2),
    "adan": lambda lib: lib.adan(1e-2, weight_decay=0.01),
    "optimistic_gradient_descent": lambda lib: lib.optimistic_gradient_descent(1e-2, 0.5, 0.8),
    "optimistic_adam_v2": lambda lib: lib.optimistic_adam_v2(1e-2),
    "optimistic_adam": lambda lib: lib.optimistic_adam(1e-2, 0.5),
    "distance_over_gradients": lambda lib: lib.chain(lib.scale_by_distance_over_gradients(
        param_dtype=np.float64, global_scale=0.5), lib.scale(-1.0)),
    "ema": lambda lib: lib.chain(lib.ema(0.9), lib.scale(-0.1)),
    "ema_no_debias": lambda lib: lib.chain(lib.ema(0.8, debias=False), lib.scale(-0.1)),
    "apply_every": lambda lib: lib.chain(lib.apply_every(3), lib.sgd(0.1)),
    "centralize": lambda lib: lib.chain(lib.centralize(), lib.sgd(0.1)),
    "param_block_norm": lambda lib: lib.chain(lib.scale_by_param_block_norm(),
                                              lib.scale(-0.01)),
    "param_block_rms": lambda lib: lib.chain(lib.scale_by_param_block_rms(), lib.scale(-0.01)),
    "normalize_by_update_norm": lambda lib: lib.chain(lib.normalize_by_update_norm(),
                                                      lib.sgd(0.1)),
    "keep_params_nonnegative": lambda lib: lib.chain(lib.sgd(0.3),
                                                     lib.keep_params_nonnegative()),
}


# under jit in the default run (each name runs eagerly; the others under jit with -m slow)
FAST_JIT = {"nadamw", "radam", "amsgrad", "sm3", "fromage_schedule", "rprop", "apply_every", "adan"}


@pytest.mark.filterwarnings("ignore:`optimistic_adam` is deprecated")
@pytest.mark.parametrize(("name", "jit"), modes(CASES, FAST_JIT))
def test_optimizer_matches_optax(name, jit):
    run_parity(CASES[name](fo), CASES[name](optax), jit=jit)


@pytest.mark.parametrize("variant", ["sps", "sps+"])
def test_polyak_sgd_matches_optax(variant):
    def extra(params, grads):
        return {"value": sum(float(np.sum(p * p)) for p in params.values()) - 3.0}

    run_parity(fo.polyak_sgd(0.5, variant=variant, f_min=-1.0),
               optax.polyak_sgd(0.5, variant=variant, f_min=-1.0), extra=extra)


def test_state_fields_match_optax():
    for name in ["ScaleByAmsgradState", "ScaleByBeliefState", "ScaleByAdaDeltaState",
                 "ScaleByAdanState", "ScaleByNovogradState", "ScaleBySM3State", "EmaState",
                 "ScaleByRpropState", "ApplyEvery",
                 "AddNoiseState", "NonNegativeParamsState", "PartitionState",
                 "ScaleByAdamState"]:
        assert getattr(fo, name)._fields == getattr(optax, name)._fields, name


def test_add_noise_variance_and_key():
    params = {"x": np.zeros(20000)}
    tx = fo.add_noise(0.5, 0.55, key=3)
    state = tx.init(params)
    u1, state = tx.update(params, state)
    u2, state = tx.update(params, state)
    assert abs(np.var(u1["x"]) - 0.5) < 0.03
    assert abs(np.var(u2["x"]) - 0.5 / 2 ** 0.55) < 0.03
    assert int(state.count) == 2 and not np.allclose(u1["x"], u2["x"])
    again, _ = tx.update(params, tx.init(params))
    np.testing.assert_array_equal(again["x"], u1["x"])


def test_polyak_needs_value():
    tx = fo.polyak_sgd()
    p = {"x": np.ones(2)}
    with pytest.raises(ValueError, match="scale_by_polyak: pass the loss"):
        tx.update(p, tx.init(p), p)
