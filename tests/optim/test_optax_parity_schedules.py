"""fnad_optim's schedules against optax's at counts 0..199 (float64 counts and int32)."""

import numpy as np
import pytest

import fnad
import fnad_optim.schedules as fs

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

CYCLE = dict(init_value=0.1, peak_value=1.0, warmup_steps=10, decay_steps=50, end_value=0.01)
CASES = {
    "constant": ("constant_schedule", (0.3,), {}),
    "linear": ("linear_schedule", (1.0, 0.1, 120, 20), {}),
    "polynomial": ("polynomial_schedule", (1.0, 0.1, 2.5, 120, 20), {}),
    "cosine_decay": ("cosine_decay_schedule", (1.0, 150, 0.1, 1.5), {}),
    "exponential": ("exponential_decay", (1.0, 30, 0.5, 10, False, 0.05), {}),
    "exponential_staircase": ("exponential_decay", (1.0, 30, 0.5, 10, True), {}),
    "exponential_growth": ("exponential_decay", (1.0, 30, 1.5, 0, False, 3.0), {}),
    "warmup_cosine": ("warmup_cosine_decay_schedule", (0.0, 1.0, 20, 150, 0.05, 2.0), {}),
    "piecewise_constant": ("piecewise_constant_schedule", (0.5, {30: 0.5, 90: 0.1}), {}),
    "warmup_constant": ("warmup_constant_schedule", (0.1, 1.0, 40), {}),
    "warmup_exponential": ("warmup_exponential_decay_schedule",
                           (0.0, 1.0, 20, 30, 0.5, 10, False, 0.05), {}),
    "warmup_exponential_staircase": ("warmup_exponential_decay_schedule",
                                     (0.0, 1.0, 20, 30, 0.5, 0, True), {}),
    "sgdr": ("sgdr_schedule", ([CYCLE, dict(CYCLE, peak_value=0.5), CYCLE],), {}),
    "piecewise_linear": ("piecewise_interpolate_schedule",
                         ("linear", 1.0, {20: 2.0, 20.5: 1.0, 60: 0.1, 150: 0.0}), {}),
    "piecewise_cosine": ("piecewise_interpolate_schedule",
                         ("cosine", 1.0, {25: 3.0, 100: 0.01}), {}),
    "linear_onecycle": ("linear_onecycle_schedule", (180, 1.0), {}),
    "cosine_onecycle": ("cosine_onecycle_schedule", (180, 1.0),
                        {"pct_start": 0.25, "div_factor": 10.0}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_schedule_matches_optax_at_200_counts(case):
    name, args, kwargs = CASES[case]
    ours, theirs = getattr(fs, name)(*args, **kwargs), getattr(optax, name)(*args, **kwargs)
    counts = np.arange(200)
    want = np.asarray(jax.jit(jax.vmap(theirs))(counts.astype(np.float64)))
    got_each = np.array([float(ours(np.int32(c))) for c in counts])
    np.testing.assert_allclose(got_each, want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(ours(counts)), want, rtol=1e-12, atol=1e-15)
    jitted = fnad.jit(lambda c: ours(c))
    np.testing.assert_allclose([float(jitted(np.int32(c))) for c in (0, 57, 199)],
                               want[[0, 57, 199]], rtol=1e-12, atol=1e-15)


def test_schedule_errors():
    with pytest.raises(ValueError, match="piecewise_interpolate_schedule"):
        fs.piecewise_interpolate_schedule("quadratic", 1.0)
    with pytest.raises(ValueError, match="cosine_onecycle_schedule"):
        fs.cosine_onecycle_schedule(0, 1.0)
    with pytest.raises(ValueError, match="sgdr_schedule"):
        fs.sgdr_schedule([])
