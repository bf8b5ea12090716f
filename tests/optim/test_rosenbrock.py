"""Every optimizer reduces the Rosenbrock function from a fixed start."""

import numpy as np
import pytest

import fnad
import fnad_optim as fo

START = {"xy": np.array([-1.2, 1.0])}
STEPS = 2000


def rosenbrock(params):
    x, y = params["xy"][0], params["xy"][1]
    return (1 - x) ** 2 + 100 * (y - x * x) ** 2


OPTIMIZERS = {
    "sgd": fo.sgd(1e-3),
    "sgd_momentum": fo.sgd(1e-4, momentum=0.9),
    "sgd_nesterov_wd": fo.sgd(1e-4, momentum=0.9, nesterov=True, weight_decay=1e-4),
    "adam": fo.adam(2e-2),
    "adamw": fo.adamw(2e-2, weight_decay=1e-4),
    "rmsprop": fo.rmsprop(1e-3),
    "rmsprop_torch_centered": fo.rmsprop(1e-3, decay=0.99, eps_in_sqrt=False, centered=True,
                                         momentum=0.5),
    "adagrad": fo.adagrad(0.1),
    "lion": fo.lion(3e-3, weight_decay=0.0),
    "lamb": fo.lamb(2e-2),
    "adam_warmup_cosine_clipped": fo.chain(
        fo.clip_by_global_norm(10.0),
        fo.adam(fo.warmup_cosine_decay_schedule(0.0, 5e-2, 50, STEPS, 1e-3))),
    "multi_steps_adam": fo.multi_steps(fo.adam(5e-2), every_k_schedule=2),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_reduces_rosenbrock(name):
    opt = OPTIMIZERS[name]
    params = START
    state = opt.init(params)
    start = float(rosenbrock(params))
    loss_and_grad = fnad.value_and_grad(rosenbrock)
    for _ in range(STEPS):
        _, grads = loss_and_grad(params)
        updates, state = opt.update(grads, state, params)
        params = fo.apply_updates(params, updates)
    end = float(rosenbrock(params))
    assert np.isfinite(end)
    assert end < 0.05 * start, f"{name}: {start:.3g} -> {end:.3g}"
