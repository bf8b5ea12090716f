"""Schedules against their closed forms, on Python ints, int32 counters and count arrays."""

import math

import numpy as np
import pytest

import fnad_optim as fo

COUNTS = list(range(0, 260, 7)) + [0, 1, 9, 10, 11, 99, 100, 101, 250, 10_000]


def _nanogpt_lr(it, learning_rate=6e-4, min_lr=6e-5, warmup_iters=20, lr_decay_iters=200):
    # nanoGPT's get_lr, with linear warmup from 0.
    if it < warmup_iters:
        return learning_rate * it / warmup_iters
    if it > lr_decay_iters:
        return min_lr
    ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * ratio))
    return min_lr + coeff * (learning_rate - min_lr)


def _exp_closed(c, begin=5, T=10, rate=0.5, staircase=False, end=None):
    if c <= begin:
        v = 1.5
    else:
        p = (c - begin) / T
        v = 1.5 * rate ** (math.floor(p) if staircase else p)
    return v if end is None else (max(v, end) if rate < 1 else min(v, end))


CASES = {
    "constant": (fo.constant_schedule(0.3), lambda c: 0.3),
    "linear": (fo.linear_schedule(1.0, 0.1, 50),
               lambda c: 1.0 + (0.1 - 1.0) * min(c, 50) / 50),
    "linear_begin": (fo.linear_schedule(0.0, 2.0, 40, transition_begin=30),
                     lambda c: 2.0 * min(max(c - 30, 0), 40) / 40),
    "polynomial": (fo.polynomial_schedule(1.0, 0.2, 2, 100, transition_begin=10),
                   lambda c: 0.8 * (1 - min(max(c - 10, 0), 100) / 100) ** 2 + 0.2),
    "cosine": (fo.cosine_decay_schedule(2.0, 100),
               lambda c: 2.0 * 0.5 * (1 + math.cos(math.pi * min(c, 100) / 100))),
    "cosine_alpha_exponent": (
        fo.cosine_decay_schedule(2.0, 100, alpha=0.1, exponent=2.0),
        lambda c: 2.0 * (0.9 * (0.5 * (1 + math.cos(math.pi * min(c, 100) / 100))) ** 2 + 0.1)),
    "exponential": (fo.exponential_decay(1.5, 10, 0.5, transition_begin=5), _exp_closed),
    "exponential_staircase": (
        fo.exponential_decay(1.5, 10, 0.5, transition_begin=5, staircase=True),
        lambda c: _exp_closed(c, staircase=True)),
    "exponential_end": (fo.exponential_decay(1.5, 10, 0.5, transition_begin=5, end_value=0.1),
                        lambda c: _exp_closed(c, end=0.1)),
    "exponential_growth_end": (
        fo.exponential_decay(1.5, 10, 2.0, transition_begin=5, end_value=20.0),
        lambda c: _exp_closed(c, rate=2.0, end=20.0)),
    "warmup_cosine_nanogpt": (fo.warmup_cosine_decay_schedule(0.0, 6e-4, 20, 200, 6e-5),
                              _nanogpt_lr),
    "warmup_cosine_from_nonzero": (
        fo.warmup_cosine_decay_schedule(1e-4, 1e-3, 10, 110, 1e-5, exponent=1.5),
        lambda c: (1e-4 + (1e-3 - 1e-4) * c / 10 if c < 10 else
                   (1e-3 - 1e-5) * (0.5 * (1 + math.cos(math.pi * min(c - 10, 100) / 100)))
                   ** 1.5 + 1e-5)),
    "piecewise": (fo.piecewise_constant_schedule(0.1, {100: 0.5, 30: 0.1}),
                  lambda c: 0.1 * (0.1 if c >= 30 else 1) * (0.5 if c >= 100 else 1)),
    "join": (fo.join_schedules([fo.constant_schedule(1.0), fo.linear_schedule(1.0, 0.0, 50),
                                fo.constant_schedule(0.25)], [10, 100]),
             lambda c: 1.0 if c < 10 else (1.0 - min(c - 10, 50) / 50 if c < 100 else 0.25)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_closed_form(name):
    sched, closed = CASES[name]
    for c in COUNTS:
        want = closed(c)
        for count in (c, np.asarray(c, np.int32)):
            got = float(sched(count))
            assert got == pytest.approx(want, rel=1e-12, abs=1e-15), (name, c)


@pytest.mark.parametrize("name", list(CASES))
def test_vectorised_over_counts(name):
    sched, _ = CASES[name]
    counts = np.arange(0, 300)
    many = np.asarray(sched(counts)) * np.ones(counts.shape)
    one_by_one = np.array([float(sched(int(c))) for c in counts])
    np.testing.assert_allclose(many, one_by_one, rtol=1e-14, atol=0)


def test_warmup_cosine_endpoints():
    sched = fo.warmup_cosine_decay_schedule(0.0, 1.0, 10, 100, end_value=0.1)
    assert float(sched(0)) == 0.0
    assert float(sched(10)) == pytest.approx(1.0)
    assert float(sched(100)) == pytest.approx(0.1)
    assert float(sched(1000)) == pytest.approx(0.1)


@pytest.mark.parametrize("make, match", [
    (lambda: fo.cosine_decay_schedule(1.0, 0), "cosine_decay_schedule: decay_steps"),
    (lambda: fo.exponential_decay(1.0, 0, 0.5), "exponential_decay: transition_steps"),
    (lambda: fo.exponential_decay(1.0, 10, -0.5), "exponential_decay: decay_rate"),
    (lambda: fo.warmup_cosine_decay_schedule(0.0, 1.0, 10, 10), "warmup_cosine_decay_schedule"),
    (lambda: fo.join_schedules([fo.constant_schedule(1.0)], [10]), "join_schedules"),
    (lambda: fo.join_schedules([fo.constant_schedule(1.0)] * 3, [10, 5]), "join_schedules"),
    (lambda: fo.piecewise_constant_schedule(1.0, {10: -1.0}), "piecewise_constant_schedule"),
])
def test_bad_schedule_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()
