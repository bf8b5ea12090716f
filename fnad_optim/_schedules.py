"""Schedules: functions `count -> value` of the number of steps taken so far.

Each works on a Python int, an int array of shape () (an optimizer's counter) or an int
array of any shape (to plot or test a whole schedule at once).
"""

import math

import fnad.numpy as fnp

__all__ = ["constant_schedule", "linear_schedule", "polynomial_schedule",
           "cosine_decay_schedule", "exponential_decay", "warmup_cosine_decay_schedule",
           "piecewise_constant_schedule", "join_schedules"]


def _check_positive(fname, name, v):
    if not v > 0:
        raise ValueError(f"{fname}: {name} must be > 0, got {v}.")


def constant_schedule(value):
    """The schedule that is `value` at every step.

    Args:
      value: the value.

    Returns:
      A function `count -> value`.

    Example:
      sched = constant_schedule(1e-3)
      sched(10)   # 1e-3
    """
    return lambda count: fnp.full_like(fnp.asarray(count, dtype=float), value)


def polynomial_schedule(init_value, end_value, power, transition_steps, transition_begin=0):
    """From `init_value` to `end_value` along `(1 - t / transition_steps) ** power`.

    Holds `init_value` for `transition_begin` steps, then moves over `transition_steps`
    steps and stays at `end_value`.

    Args:
      init_value, end_value: the values at the start and the end of the transition.
      power: the exponent of the polynomial (1 is linear).
      transition_steps: the length of the transition (<= 0 gives a constant schedule).
      transition_begin: steps to wait before the transition starts.

    Returns:
      A schedule.

    Example:
      sched = polynomial_schedule(1.0, 0.0, power=2, transition_steps=100)
      sched(50)   # 0.25
    """
    if transition_steps <= 0:
        return constant_schedule(init_value)
    if transition_begin < 0:
        raise ValueError(f"polynomial_schedule: transition_begin must be >= 0, got "
                         f"{transition_begin}.")

    def schedule(count):
        t = fnp.clip(fnp.asarray(count) - transition_begin, 0, transition_steps)
        frac = 1 - t / transition_steps
        return (init_value - end_value) * frac**power + end_value

    return schedule


def linear_schedule(init_value, end_value, transition_steps, transition_begin=0):
    """From `init_value` to `end_value` linearly over `transition_steps` steps.

    Args:
      init_value, end_value: the values at the start and the end of the transition.
      transition_steps: the length of the transition.
      transition_begin: steps to hold `init_value` before the transition starts.

    Returns:
      A schedule.

    Example:
      warmup = linear_schedule(0.0, 1e-3, transition_steps=100)
      warmup(50)   # 5e-4
    """
    return polynomial_schedule(init_value, end_value, 1, transition_steps, transition_begin)


def cosine_decay_schedule(init_value, decay_steps, alpha=0.0, exponent=1.0):
    """Cosine decay from `init_value` to `alpha * init_value` over `decay_steps` steps.

    `value = init_value * ((1 - alpha) * (0.5 * (1 + cos(pi * t / decay_steps))) ** exponent
    + alpha)` with `t = min(count, decay_steps)`.

    Args:
      init_value: the value at step 0.
      decay_steps: the length of the decay (> 0).
      alpha: the final value as a fraction of `init_value`.
      exponent: the power the cosine factor is raised to.

    Returns:
      A schedule.

    Example:
      sched = cosine_decay_schedule(1.0, decay_steps=100)
      sched(50)   # 0.5
    """
    _check_positive("cosine_decay_schedule", "decay_steps", decay_steps)

    def schedule(count):
        t = fnp.minimum(fnp.asarray(count), decay_steps)
        cosine = 0.5 * (1 + fnp.cos(math.pi * t / decay_steps))
        return init_value * ((1 - alpha) * cosine**exponent + alpha)

    return schedule


def exponential_decay(init_value, transition_steps, decay_rate, transition_begin=0,
                      staircase=False, end_value=None):
    """`init_value * decay_rate ** ((count - transition_begin) / transition_steps)`.

    Holds `init_value` until `transition_begin`; with `staircase` the exponent is floored;
    `end_value` bounds the result (from below if `decay_rate < 1`, else from above).

    Args:
      init_value: the starting value.
      transition_steps: steps per factor of `decay_rate` (> 0).
      decay_rate: the factor per `transition_steps` steps.
      transition_begin: steps to wait before decaying.
      staircase: decay in whole steps of `transition_steps`.
      end_value: optional bound.

    Returns:
      A schedule.

    Example:
      sched = exponential_decay(1.0, transition_steps=10, decay_rate=0.5)
      sched(20)   # 0.25
    """
    _check_positive("exponential_decay", "transition_steps", transition_steps)
    if decay_rate <= 0:
        raise ValueError(f"exponential_decay: decay_rate must be > 0, got {decay_rate}.")

    def schedule(count):
        p = fnp.maximum(fnp.asarray(count) - transition_begin, 0) / transition_steps
        if staircase:
            p = fnp.floor(p)
        value = init_value * fnp.asarray(decay_rate, dtype=float) ** p
        if end_value is not None:
            bound = fnp.maximum if decay_rate < 1 else fnp.minimum
            value = bound(value, end_value)
        return value

    return schedule


def warmup_cosine_decay_schedule(init_value, peak_value, warmup_steps, decay_steps,
                                 end_value=0.0, exponent=1.0):
    """Linear warmup from `init_value` to `peak_value`, then cosine decay to `end_value`.

    This is the schedule nanoGPT uses; `decay_steps` counts the warmup steps too, so the
    value reaches `end_value` at step `decay_steps` and stays there.

    Args:
      init_value: the value at step 0.
      peak_value: the value at the end of the warmup.
      warmup_steps: the length of the warmup.
      decay_steps: the total length of warmup and decay (> warmup_steps).
      end_value: the final value.
      exponent: the power the cosine factor is raised to.

    Returns:
      A schedule.

    Example:
      sched = warmup_cosine_decay_schedule(0.0, 6e-4, 100, 5000, end_value=6e-5)
      sched(100)   # 6e-4
    """
    if not decay_steps > warmup_steps >= 0:
        raise ValueError("warmup_cosine_decay_schedule: need decay_steps > warmup_steps >= 0, "
                         f"got warmup_steps={warmup_steps}, decay_steps={decay_steps}.")
    span = decay_steps - warmup_steps

    def cosine(count):
        t = fnp.minimum(fnp.asarray(count), span)
        c = 0.5 * (1 + fnp.cos(math.pi * t / span))
        return (peak_value - end_value) * c**exponent + end_value

    if warmup_steps == 0:
        return cosine
    warmup = linear_schedule(init_value, peak_value, warmup_steps)
    return join_schedules([warmup, cosine], [warmup_steps])


def piecewise_constant_schedule(init_value, boundaries_and_scales=None):
    """`init_value` times the scales of every boundary reached so far.

    Args:
      init_value: the value before the first boundary.
      boundaries_and_scales: a dict `{step: scale}`; from `step` on, the value is
        multiplied by `scale`.

    Returns:
      A schedule.

    Example:
      sched = piecewise_constant_schedule(0.1, {100: 0.1, 200: 0.1})
      sched(150)   # 0.01
    """
    items = sorted((boundaries_and_scales or {}).items())
    for b, s in items:
        if b < 0 or s < 0:
            raise ValueError("piecewise_constant_schedule: boundaries and scales must be >= 0, "
                             f"got {b}: {s}.")

    def schedule(count):
        count = fnp.asarray(count)
        value = fnp.full_like(count, init_value, dtype=float)
        for b, s in items:
            value = fnp.where(count < b, value, value * s)
        return value

    return schedule


def join_schedules(schedules, boundaries):
    """Run `schedules[i]` between `boundaries[i - 1]` and `boundaries[i]`.

    Each schedule after the first is called with the count since its boundary.

    Args:
      schedules: a sequence of schedules.
      boundaries: an increasing sequence of steps, one fewer than the schedules.

    Returns:
      A schedule.

    Example:
      sched = join_schedules([constant_schedule(1.0), linear_schedule(1.0, 0.0, 10)], [5])
      sched(10)   # 0.5
    """
    schedules, boundaries = list(schedules), list(boundaries)
    if len(schedules) != len(boundaries) + 1:
        raise ValueError(f"join_schedules: got {len(schedules)} schedules and "
                         f"{len(boundaries)} boundaries; give one boundary fewer than "
                         "schedules.")
    if any(b1 >= b2 for b1, b2 in zip(boundaries, boundaries[1:])):
        raise ValueError(f"join_schedules: boundaries must increase, got {boundaries}.")

    def schedule(count):
        count = fnp.asarray(count)
        value = fnp.asarray(schedules[0](count), dtype=float)
        for b, sched in zip(boundaries, schedules[1:]):
            value = fnp.where(count < b, value, sched(count - b))
        return value

    return schedule
