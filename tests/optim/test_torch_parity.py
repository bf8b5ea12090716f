"""fnad_optim against torch.optim in float64: same params, same gradient sequence, 200 steps.

At every step the parameters must agree to a relative difference of 1e-12, measured per
leaf as max|ours - torch| / max|torch| (elementwise ratios are meaningless for entries that
cross zero).
"""

import math

import numpy as np
import pytest

import fnad_optim as fo

torch = pytest.importorskip("torch")

STEPS = 200
RTOL = 1e-12
SHAPES = {"w": (3, 4), "b": (4,), "s": ()}


def _warmup_cosine(count):
    return 0.0 if count < 0 else (count / 10 if count < 10
                                  else 0.5 * (1 + math.cos(math.pi * min(count - 10, 90) / 90)))


def _adagrad_decay(count):
    return 1 / (1 + count * 0.01)


# name -> (fnad_optim optimizer, torch optimizer factory, torch LambdaLR factor or None)
CASES = {
    "sgd": (lambda: fo.sgd(0.05), lambda p: torch.optim.SGD(p, lr=0.05), None),
    "sgd_momentum": (lambda: fo.sgd(0.05, momentum=0.9),
                     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9), None),
    "sgd_nesterov": (lambda: fo.sgd(0.05, momentum=0.9, nesterov=True),
                     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True), None),
    "sgd_weight_decay": (lambda: fo.sgd(0.05, momentum=0.8, nesterov=True, weight_decay=1e-2),
                         lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True,
                                                   weight_decay=1e-2), None),
    "adam": (lambda: fo.adam(1e-2), lambda p: torch.optim.Adam(p, lr=1e-2), None),
    "adam_betas_eps": (lambda: fo.adam(3e-2, b1=0.8, b2=0.99, eps=1e-3),
                       lambda p: torch.optim.Adam(p, lr=3e-2, betas=(0.8, 0.99), eps=1e-3),
                       None),
    "adam_l2": (lambda: fo.chain(fo.add_decayed_weights(1e-2), fo.adam(1e-2)),
                lambda p: torch.optim.Adam(p, lr=1e-2, weight_decay=1e-2), None),
    "adam_schedule": (lambda: fo.adam(lambda c: 1e-2 * _warmup_cosine(int(c))),
                      lambda p: torch.optim.Adam(p, lr=1e-2), _warmup_cosine),
    "adamw": (lambda: fo.adamw(1e-2, weight_decay=1e-2),
              lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=1e-2), None),
    "adamw_big_decay": (lambda: fo.adamw(3e-2, b1=0.85, b2=0.95, eps=1e-6, weight_decay=0.3),
                        lambda p: torch.optim.AdamW(p, lr=3e-2, betas=(0.85, 0.95), eps=1e-6,
                                                    weight_decay=0.3), None),
    "rmsprop": (lambda: fo.rmsprop(1e-2, decay=0.99, eps_in_sqrt=False),
                lambda p: torch.optim.RMSprop(p, lr=1e-2), None),
    "rmsprop_centered_momentum": (
        lambda: fo.rmsprop(1e-2, decay=0.9, eps=1e-6, eps_in_sqrt=False, centered=True,
                           momentum=0.9),
        lambda p: torch.optim.RMSprop(p, lr=1e-2, alpha=0.9, eps=1e-6, centered=True,
                                      momentum=0.9), None),
    "rmsprop_weight_decay": (
        lambda: fo.chain(fo.add_decayed_weights(1e-2),
                         fo.rmsprop(1e-2, decay=0.99, eps_in_sqrt=False, momentum=0.5)),
        lambda p: torch.optim.RMSprop(p, lr=1e-2, weight_decay=1e-2, momentum=0.5), None),
    "adagrad": (lambda: fo.adagrad(0.1, initial_accumulator_value=0.0, eps=1e-10,
                                   eps_in_sqrt=False),
                lambda p: torch.optim.Adagrad(p, lr=0.1), None),
    "adagrad_lr_decay": (
        lambda: fo.adagrad(lambda c: 0.1 / (1 + c * 0.01), initial_accumulator_value=0.1,
                           eps=1e-10, eps_in_sqrt=False),
        lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1),
        None),
}


def _gradients(seed):
    rng = np.random.default_rng(seed)
    # Scales vary over the run, so adaptive methods see changing magnitudes.
    scales = np.exp(rng.normal(0.0, 1.0, size=STEPS))
    return [{k: rng.normal(size=s) * c for k, s in SHAPES.items()} for c in scales]


def _rel_diff(ours, ref):
    return np.max(np.abs(ours - ref)) / max(np.max(np.abs(ref)), 1e-300)


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch_every_step(name):
    make_ours, make_torch, lr_lambda = CASES[name]
    rng = np.random.default_rng(0)
    params = {k: rng.normal(size=s) for k, s in SHAPES.items()}
    t_params = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
                for k, v in params.items()}
    t_opt = make_torch(list(t_params.values()))
    sched = torch.optim.lr_scheduler.LambdaLR(t_opt, lr_lambda) if lr_lambda else None

    opt = make_ours()
    state = opt.init(params)
    for step, grads in enumerate(_gradients(1)):
        updates, state = opt.update(grads, state, params)
        params = fo.apply_updates(params, updates)
        for k, p in t_params.items():
            p.grad = torch.tensor(grads[k], dtype=torch.float64)
        t_opt.step()
        if sched is not None:
            sched.step()
        for k, p in t_params.items():
            ref = p.detach().numpy()
            assert params[k].dtype == np.float64
            rel = _rel_diff(params[k], ref)
            assert rel <= RTOL, f"{name}: leaf {k!r} differs by {rel:.3g} at step {step}"


def test_optax_default_eps_placement_differs_from_torch():
    # A control: the parity above is not vacuous. optax's RMSprop puts eps inside the sqrt.
    params = {"w": np.array([1.0, -2.0])}
    grads = {"w": np.array([1e-4, 3e-5])}
    ours, theirs = fo.rmsprop(1e-2, decay=0.99), fo.rmsprop(1e-2, decay=0.99, eps_in_sqrt=False)
    u1, _ = ours.update(grads, ours.init(params))
    u2, _ = theirs.update(grads, theirs.init(params))
    assert _rel_diff(u1["w"], u2["w"]) > 1e-6
