"""Optimizer updates read no concrete value of a traced input: counters are int32 arrays
and choices are selects, so a whole training step can be staged (jit). Checked by running
updates on tracers whose bool/int/float/index conversions raise, against eager runs."""

import numpy as np
import pytest

import fnad
import fnad_optim as fo
from fnad._ad.reverse import RevTrace
from fnad._core.tracer import getval
from tests.core.avalcheck import no_concrete_reads

def _params(dtype):
    rng = np.random.default_rng(0)
    return {"w": rng.normal(size=(3, 2)).astype(dtype), "b": rng.normal(size=2).astype(dtype)}


def _grads(step, dtype):
    rng = np.random.default_rng(step + 1)
    g = {"w": rng.normal(size=(3, 2)).astype(dtype), "b": rng.normal(size=2).astype(dtype)}
    if step in (2, 3):  # two non-finite steps in a row, for apply_if_finite
        g["b"][0] = np.nan
    return g


OPTIMIZERS = {
    "adam": lambda: fo.adam(1e-2),
    "adam_nesterov": lambda: fo.chain(fo.scale_by_adam(nesterov=True),
                                      fo.scale_by_learning_rate(1e-2)),
    "adamw_schedule": lambda: fo.adamw(fo.warmup_cosine_decay_schedule(0.0, 1e-2, 2, 6)),
    "rmsprop_bias": lambda: fo.chain(fo.scale_by_rms(bias_correction=True),
                                     fo.scale_by_learning_rate(1e-2)),
    "stddev_bias": lambda: fo.chain(fo.scale_by_stddev(eps=1e-4, bias_correction=True),
                                    fo.scale_by_learning_rate(1e-2)),
    "lion": lambda: fo.lion(1e-3),
    "adagrad": lambda: fo.adagrad(1e-2),
    "lamb": lambda: fo.lamb(1e-2),
    "multi_steps_mean": lambda: fo.multi_steps(fo.adam(1e-2), 3),
    "multi_steps_sum": lambda: fo.multi_steps(fo.sgd(1e-2, momentum=0.9), 2,
                                              use_grad_mean=False),
    "apply_if_finite": lambda: fo.apply_if_finite(fo.adam(1e-2), max_consecutive_errors=1),
    "zero_nans": lambda: fo.chain(fo.zero_nans(), fo.sgd(1e-2)),
    "schedule_sgd": lambda: fo.sgd(fo.piecewise_constant_schedule(1e-2, {2: 0.5})),
}


def _steps(opt, dtype, traced):
    params = _params(dtype)
    state = opt.init(params)
    outs = []
    for step in range(6):
        grads = _grads(step, dtype)
        if traced:  # every array of grads and state becomes a tracer holding it
            trace = RevTrace()
            grads, state = fnad.tree_map(trace.new_input, (grads, state))
            with no_concrete_reads():
                updates, state = opt.update(grads, state, params)
            updates, state = fnad.tree_map(getval, (updates, state))
        else:
            updates, state = opt.update(grads, state, params)
        outs.append((updates, state))
        params = fo.apply_updates(params, fnad.tree_map(np.nan_to_num, updates))
    return outs


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_update_on_tracers_reads_no_concrete_value(name, dtype):
    eager = _steps(OPTIMIZERS[name](), dtype, traced=False)
    staged = _steps(OPTIMIZERS[name](), dtype, traced=True)
    for (u1, s1), (u2, s2) in zip(eager, staged):
        for a, b in zip(fnad.tree_leaves((u1, s1)), fnad.tree_leaves((u2, s2))):
            a, b = np.asarray(a), np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b)


def test_counters_saturate_at_int32_max():
    from fnad_optim._base import inc_count
    top = np.asarray(2**31 - 1, np.int32)
    assert inc_count(top) == top and inc_count(top).dtype == np.int32
    assert inc_count(np.asarray(4, np.int32)) == 5
