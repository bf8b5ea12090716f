"""Prodigy (Mishchenko and Defazio 2023): AdamW whose learning rate estimates itself, as
optax.contrib's."""

from typing import Any, NamedTuple

import fnad
import fnad.numpy as fnp

from .._base import (GradientTransformationExtraArgs, check_state, hyper, inc_count,
                     require_params, zero_count)
from .._linesearch import first_leaf, scalar, slope_of
from ._common import lowest_float_dtype

__all__ = ["prodigy", "ProdigyState"]


class ProdigyState(NamedTuple):
    """Adam's moments of the scaled gradients, the weighted gradient sum, the initial
    params, the learning-rate estimate, the weighted numerator and the step count."""

    exp_avg: Any
    exp_avg_sq: Any
    grad_sum: Any
    params0: Any
    estim_lr: Any
    numerator_weighted: Any
    count: Any


def _map(f, *trees):
    return fnad.tree_map(f, *trees)


def prodigy(learning_rate=1.0, betas=(0.9, 0.999), beta3=None, eps=1e-8, estim_lr0=1e-6,
            estim_lr_coef=1.0, weight_decay=0.0, safeguard_warmup=False):
    """Prodigy, as optax.contrib's: AdamW with a learning rate `estim_lr` estimated from the
    distance travelled, times `learning_rate` (a schedule around 1.0).

    Args:
      learning_rate: the multiplier of the estimated rate (a number or a schedule).
      betas: Adam's (b1, b2).
      beta3: the decay of the estimate's sums (default sqrt(b2)).
      eps: Adam's epsilon.
      estim_lr0: the initial (under-)estimate.
      estim_lr_coef: a factor on the estimates.
      weight_decay: AdamW's decoupled weight decay.
      safeguard_warmup: leave the learning rate out of the estimate's denominator.

    Returns:
      A `GradientTransformationExtraArgs` with a `ProdigyState`.

    Example:
      opt = prodigy(linear_schedule(1.0, 0.0, 1000))
      updates, state = opt.update(grads, state, params)
    """
    beta1, beta2 = betas
    if beta3 is None:
        beta3 = beta2 ** 0.5

    def init(params):
        dtype = lowest_float_dtype(params)
        zeros = _map(fnp.zeros_like, params)
        like = first_leaf(params)
        return ProdigyState(zeros, zeros, zeros, params, scalar(estim_lr0, dtype, like),
                            scalar(0.0, dtype, like), zero_count(params))

    def update(updates, state, params=None, **extra_args):
        if type(state) is not ProdigyState:
            check_state("prodigy", state, ProdigyState)
        require_params("prodigy", params)
        count = inc_count(state.count)
        sched = hyper(learning_rate, state.count)
        estim_lr = state.estim_lr
        bc = ((1 - beta2 ** count) ** 0.5) / (1 - beta1 ** count)
        dlr = fnp.astype(estim_lr * sched * bc, estim_lr.dtype)
        dg = _map(lambda g: estim_lr * g, updates)
        numerator_acum = slope_of(updates, _map(lambda p0, p: p0 - p, state.params0, params))
        exp_avg = _map(lambda ea, d: beta1 * ea + (1 - beta1) * d, state.exp_avg, dg)
        exp_avg_sq = _map(lambda es, d: beta2 * es + (1 - beta2) * d * d, state.exp_avg_sq, dg)
        rate = estim_lr if safeguard_warmup else dlr
        grad_sum = _map(lambda s, d: beta3 * s + rate * d / estim_lr0, state.grad_sum, dg)
        numerator = beta3 * state.numerator_weighted
        numerator = numerator + (estim_lr / estim_lr0) * dlr * numerator_acum
        denominator = sum(fnp.sum(fnp.abs(s)) for s in fnad.tree_leaves(grad_sum))
        estim_lr = fnp.maximum(state.estim_lr, estim_lr_coef * numerator / denominator)
        out = _map(lambda ea, es, p: -weight_decay * dlr * p
                   - dlr * ea / (fnp.sqrt(es) + estim_lr * eps), exp_avg, exp_avg_sq, params)
        return out, ProdigyState(exp_avg, exp_avg_sq, grad_sum, state.params0,
                                 fnp.astype(estim_lr, state.estim_lr.dtype),
                                 fnp.astype(numerator, state.numerator_weighted.dtype), count)

    return GradientTransformationExtraArgs(init, update)
