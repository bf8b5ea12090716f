"""More schedules with optax's names: warmup then constant or exponential decay, warm
restarts (SGDR), piecewise interpolation and the one-cycle policies built on it."""

import math

import fnad.numpy as fnp

from ._schedules import (exponential_decay, join_schedules, linear_schedule,
                         warmup_cosine_decay_schedule)

__all__ = ["warmup_constant_schedule", "warmup_exponential_decay_schedule", "sgdr_schedule",
           "piecewise_interpolate_schedule", "linear_onecycle_schedule",
           "cosine_onecycle_schedule"]


def warmup_constant_schedule(init_value, peak_value, warmup_steps):
    """Linear warmup from `init_value` to `peak_value` over `warmup_steps`, then constant.

    Example:
      sched = warmup_constant_schedule(0.0, 1e-3, 100)
      sched(50)   # 5e-4
    """
    return linear_schedule(init_value, peak_value, warmup_steps)


def warmup_exponential_decay_schedule(init_value, peak_value, warmup_steps, transition_steps,
                                      decay_rate, transition_begin=0, staircase=False,
                                      end_value=None):
    """Linear warmup to `peak_value`, then `exponential_decay(peak_value, ...)` counted from
    the end of the warmup.

    Example:
      sched = warmup_exponential_decay_schedule(0.0, 1e-3, 100, 1000, 0.5)
    """
    return join_schedules([linear_schedule(init_value, peak_value, warmup_steps),
                           exponential_decay(peak_value, transition_steps, decay_rate,
                                             transition_begin, staircase, end_value)],
                          [warmup_steps])


def sgdr_schedule(cosine_kwargs):
    """Cosine decay with warm restarts (Loshchilov and Hutter 2017): one
    `warmup_cosine_decay_schedule(**kwargs)` after the other, each lasting its
    `decay_steps`.

    Args:
      cosine_kwargs: an iterable of dicts of `warmup_cosine_decay_schedule`'s arguments.

    Example:
      cycle = dict(init_value=0.0, peak_value=1e-3, warmup_steps=10, decay_steps=100)
      sched = sgdr_schedule([cycle] * 5)
    """
    schedules, boundaries, step = [], [], 0
    for kwargs in cosine_kwargs:
        if "decay_steps" not in kwargs:
            raise ValueError(f"sgdr_schedule: every cycle needs decay_steps, got {kwargs}.")
        schedules.append(warmup_cosine_decay_schedule(**kwargs))
        step += kwargs["decay_steps"]
        boundaries.append(step)
    if not schedules:
        raise ValueError("sgdr_schedule: give at least one cycle (a dict of "
                         "warmup_cosine_decay_schedule's arguments).")
    return join_schedules(schedules, boundaries[:-1])


def _interpolate(kind, start, end, pct):
    if kind == "linear":
        return (end - start) * pct + start
    return end + (start - end) / 2.0 * (fnp.cos(math.pi * pct) + 1)


def piecewise_interpolate_schedule(interpolate_type, init_value, boundaries_and_scales=None):
    """From boundary to boundary, interpolate (linearly or along a half cosine) between
    `init_value` times the product of the scales reached so far.

    Args:
      interpolate_type: "linear" or "cosine".
      init_value: the value at step 0.
      boundaries_and_scales: a dict `{step: scale}`; at `step` the value is the previous
        one times `scale`.

    Example:
      sched = piecewise_interpolate_schedule("linear", 1.0, {10: 0.5, 20: 0.0})
      sched(5)   # 0.75
    """
    if interpolate_type not in ("linear", "cosine"):
        raise ValueError("piecewise_interpolate_schedule: interpolate_type must be 'linear' or "
                         f"'cosine', got {interpolate_type!r}.")
    items = sorted((boundaries_and_scales or {}).items())
    if any(s < 0 for _, s in items):
        raise ValueError("piecewise_interpolate_schedule: scales must be >= 0, got "
                         f"{dict(items)}.")
    bounds = [0] + [b for b, _ in items]
    values = [init_value]
    for _, s in items:
        values.append(values[-1] * s)

    def schedule(count):
        count = fnp.asarray(count)
        out = fnp.zeros(fnp.shape(count))
        for lo, hi, v0, v1 in zip(bounds, bounds[1:], values, values[1:]):
            inside = fnp.logical_and(lo <= count, count < hi)
            pct = (count - lo) / max(hi - lo, 1)
            out = out + fnp.where(inside, _interpolate(interpolate_type, v0, v1, pct), 0.0)
        return out + fnp.where(bounds[-1] <= count, values[-1], 0.0)

    return schedule


def _check_steps(fname, transition_steps):
    if transition_steps <= 0:
        raise ValueError(f"{fname}: transition_steps must be > 0, got {transition_steps}.")


def linear_onecycle_schedule(transition_steps, peak_value, pct_start=0.3, pct_final=0.85,
                             div_factor=25.0, final_div_factor=1e4):
    """The one-cycle policy (Smith and Topin 2017) with linear pieces: from `peak_value /
    div_factor` up to `peak_value` by `pct_start` of the steps, back down by `pct_final`,
    then to `peak_value / (div_factor * final_div_factor)` at `transition_steps`.

    Example:
      sched = linear_onecycle_schedule(1000, 1e-2)
    """
    _check_steps("linear_onecycle_schedule", transition_steps)
    return piecewise_interpolate_schedule(
        "linear", peak_value / div_factor,
        {int(pct_start * transition_steps): div_factor,
         int(pct_final * transition_steps): 1.0 / div_factor,
         transition_steps: 1.0 / final_div_factor})


def cosine_onecycle_schedule(transition_steps, peak_value, pct_start=0.3, div_factor=25.0,
                             final_div_factor=1e4):
    """The one-cycle policy with cosine pieces: from `peak_value / div_factor` up to
    `peak_value` by `pct_start` of the steps, then down to `peak_value / (div_factor *
    final_div_factor)` at `transition_steps` (torch's OneCycleLR, anneal "cos").

    Example:
      sched = cosine_onecycle_schedule(1000, 1e-2)
    """
    _check_steps("cosine_onecycle_schedule", transition_steps)
    return piecewise_interpolate_schedule(
        "cosine", peak_value / div_factor,
        {int(pct_start * transition_steps): div_factor,
         int(transition_steps): 1.0 / (div_factor * final_div_factor)})
