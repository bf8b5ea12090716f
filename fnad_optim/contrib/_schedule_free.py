"""Schedule-free learning (Defazio et al. 2024), as optax.contrib's: the base optimizer's
steps move a sequence z; the params are an interpolation of z and its running average x,
and `schedule_free_eval_params` recovers x for evaluation."""

from typing import Any, NamedTuple

import fnad
import fnad.numpy as fnp

from .._alias import sgd
from .._base import (GradientTransformationExtraArgs, chain, check_state, inc_count,
                     require_params, with_extra_args_support, zero_count)
from .._linesearch import first_leaf, scalar
from .._schedules import constant_schedule, join_schedules, linear_schedule
from .._transforms import add_decayed_weights, scale_by_learning_rate, scale_by_rms
from ._common import lowest_float_dtype

__all__ = ["schedule_free", "schedule_free_sgd", "schedule_free_adamw",
           "schedule_free_eval_params", "ScheduleFreeState"]


class ScheduleFreeState(NamedTuple):
    """b1, the sum of the averaging weights, the step count (from 1), the largest learning
    rate seen, the base optimizer's state and the sequence z."""

    b1: Any
    weight_sum: Any
    step_count: Any
    max_lr: Any
    base_optimizer_state: Any
    z: Any


def schedule_free_eval_params(state, params):
    """The params to evaluate a schedule-free model at (the average x), from its state.

    Args:
      state: a `ScheduleFreeState`.
      params: the params being trained.

    Returns:
      A pytree like `params`.

    Example:
      eval_params = schedule_free_eval_params(opt_state, params)
    """
    b1, z = getattr(state, "b1", None), getattr(state, "z", None)
    if b1 is None or z is None:
        raise ValueError("schedule_free_eval_params: state must be a ScheduleFreeState (the "
                         f"state of schedule_free...), got a {type(state).__name__}.")
    return fnad.tree_map(lambda y, zi: (y - (1.0 - b1) * zi) / b1, params, z)


def schedule_free(base_optimizer, learning_rate, b1=0.9, weight_lr_power=2.0,
                  state_dtype=None):
    """Make `base_optimizer` (without momentum) schedule-free, as optax.contrib's.

    Args:
      base_optimizer: a `GradientTransformation` (its momentum off: b1=0 for Adam).
      learning_rate: its learning rate (a number or a schedule, warmup without decay).
      b1: the interpolation between z and x (> 0).
      weight_lr_power: the averaging weight of a step is `max_lr ** weight_lr_power`.
      state_dtype: the dtype of z (default: the params').

    Returns:
      A `GradientTransformationExtraArgs` with a `ScheduleFreeState`.

    Example:
      opt = schedule_free(adam(1e-3, b1=0.0), 1e-3, b1=0.9)
    """
    if not b1 > 0:
        raise ValueError(f"schedule_free: b1 must be > 0, got {b1}.")
    base = with_extra_args_support(base_optimizer)

    def init(params):
        dtype = lowest_float_dtype(params)
        z = fnad.tree_map(lambda p: fnp.array(p, dtype=state_dtype, copy=True), params)
        like = first_leaf(params)
        return ScheduleFreeState(
            b1=scalar(b1, dtype, like), weight_sum=scalar(0.0, dtype, like),
            step_count=inc_count(zero_count(params)), max_lr=scalar(0.0, dtype, like),
            base_optimizer_state=base.init(params), z=z)

    def update(updates, state, params=None, **extra_args):
        if type(state) is not ScheduleFreeState:
            check_state("schedule_free", state, ScheduleFreeState)
        require_params("schedule_free", params)
        lr = learning_rate
        if callable(lr):
            lr = fnp.asarray(lr(state.step_count), dtype=state.max_lr.dtype)
        max_lr = fnp.maximum(state.max_lr, lr)
        weight = max_lr ** weight_lr_power
        total = state.weight_sum + weight
        ck = weight / fnp.where(total == 0, 1.0, total)  # 0 / 0: 0, as optax's nan_to_num
        ck = fnp.where(fnp.isnan(weight) | fnp.isnan(total), fnp.nan, ck)
        base_updates, base_state = base.update(updates, state.base_optimizer_state, params,
                                               **extra_args)
        z = fnad.tree_map(lambda zi, u: fnp.astype(zi + u, zi.dtype), state.z, base_updates)
        prev_x = fnad.tree_map(lambda y, zi: (y - (1.0 - b1) * zi) / b1, params, state.z)
        x = fnad.tree_map(lambda xi, zi: (1.0 - ck) * xi + ck * zi, prev_x, z)
        new = fnad.tree_map(lambda xi, zi: b1 * xi + (1.0 - b1) * zi, x, z)
        out = fnad.tree_map(lambda n, p: fnp.astype(n - p, fnp.result_type(p)), new, params)
        return out, ScheduleFreeState(state.b1, total, inc_count(state.step_count), max_lr,
                                      base_state, z)

    return GradientTransformationExtraArgs(init, update)


def _warmup_constant(peak_value, warmup_steps):
    return join_schedules([linear_schedule(0.0, peak_value, warmup_steps),
                           constant_schedule(peak_value)], [warmup_steps])


def schedule_free_sgd(learning_rate=1.0, warmup_steps=None, b1=0.9, weight_decay=None,
                      weight_lr_power=2.0, state_dtype=None):
    """Schedule-free SGD, as optax.contrib's.

    Args:
      learning_rate: the SGD learning rate.
      warmup_steps: the length of a linear warmup from 0, or None.
      b1: the interpolation parameter (> 0).
      weight_decay: L2 decay added to the gradient (times the learning rate), or None.
      weight_lr_power: see `schedule_free`.
      state_dtype: the dtype of z.

    Returns:
      A `GradientTransformationExtraArgs` with a `ScheduleFreeState`.

    Example:
      opt = schedule_free_sgd(0.1, warmup_steps=10)
      eval_params = schedule_free_eval_params(opt_state, params)
    """
    if warmup_steps is not None:
        learning_rate = _warmup_constant(learning_rate, warmup_steps)
    opt = sgd(learning_rate)
    if weight_decay is not None:
        opt = chain(add_decayed_weights(weight_decay), opt)
    return schedule_free(opt, learning_rate=learning_rate, b1=b1,
                         weight_lr_power=weight_lr_power, state_dtype=state_dtype)


def schedule_free_adamw(learning_rate=0.0025, warmup_steps=None, b1=0.9, b2=0.999, eps=1e-8,
                        weight_decay=0.0, weight_lr_power=2.0, state_dtype=None):
    """Schedule-free AdamW, as optax.contrib's (Adam without momentum: a bias-corrected
    RMS scaling).

    Args:
      learning_rate: the AdamW learning rate.
      warmup_steps: the length of a linear warmup from 0, or None.
      b1: the interpolation parameter (> 0).
      b2: the decay of the second moment.
      eps: added to the denominator, outside the square root.
      weight_decay: decoupled weight decay.
      weight_lr_power: see `schedule_free`.
      state_dtype: the dtype of z.

    Returns:
      A `GradientTransformationExtraArgs` with a `ScheduleFreeState`.

    Example:
      opt = schedule_free_adamw(1e-3, warmup_steps=100, weight_decay=1e-4)
      eval_params = schedule_free_eval_params(opt_state, params)
    """
    if warmup_steps is not None:
        learning_rate = _warmup_constant(learning_rate, warmup_steps)
    opt = chain(scale_by_rms(decay=b2, eps=eps, eps_in_sqrt=False, bias_correction=True),
                add_decayed_weights(weight_decay), scale_by_learning_rate(learning_rate))
    return schedule_free(opt, learning_rate=learning_rate, b1=b1,
                         weight_lr_power=weight_lr_power, state_dtype=state_dtype)
