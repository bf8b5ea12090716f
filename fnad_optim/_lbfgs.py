"""L-BFGS: the limited-memory quasi-Newton direction (`scale_by_lbfgs`) and the optimizer
that follows it with a line search (`lbfgs`), as optax's.

The inverse Hessian is approximated from the last `memory_size` differences of params and
of updates (gradients), kept stacked along a leading axis of each leaf: the memory is a ring,
written at `(count - 1) % memory_size`, so a staged step indexes it with a traced counter.
"""

from typing import Any, NamedTuple

import fnad
import fnad.numpy as fnp

from ._base import (GradientTransformationExtraArgs, chain, check_nonneg, identity,
                    inc_count, named, transform, zero_count)
from ._linesearch import first_leaf, real_dtype, scalar, slope_of
from ._refuse import refuse_on_rows
from ._transforms import scale, scale_by_learning_rate
from ._zoom import scale_by_zoom_linesearch

__all__ = ["scale_by_lbfgs", "lbfgs", "ScaleByLBFGSState"]


class ScaleByLBFGSState(NamedTuple):
    """The step count, the params and updates of the last step, the ring of the last
    `memory_size` differences of params and of updates (stacked on a leading axis of each
    leaf), and their weights `1 / <diff_updates, diff_params>`."""

    count: Any
    params: Any
    updates: Any
    diff_params_memory: Any
    diff_updates_memory: Any
    weights_memory: Any


def _sub(a, b):
    return fnad.tree_map(lambda x, y: x - y, a, b)


def _axpy(alpha, x, y):
    """`y + alpha * x`, leaf by leaf, in y's dtypes."""
    return fnad.tree_map(lambda xi, yi: yi + fnp.astype(alpha, yi.dtype) * xi, x, y)


def _row(memory, idx):
    return fnad.tree_map(lambda m: m[idx], memory)


def _precondition(updates, diff_params, diff_updates, rhos, identity_scale, memory_idx):
    """The two-loop recursion (Nocedal and Wright, algorithm 7.4): the updates multiplied
    by the approximate inverse Hessian, oldest memory entry first in the second loop."""
    m = rhos.shape[0]
    order = [(memory_idx + k) % m for k in range(m)]
    alphas, vec = [], updates
    for idx in reversed(order):
        alpha = rhos[idx] * slope_of(_row(diff_params, idx), vec)
        vec = _axpy(-alpha, _row(diff_updates, idx), vec)
        alphas.append(alpha)
    vec = fnad.tree_map(lambda v: fnp.astype(identity_scale, v.dtype) * v, vec)
    for idx, alpha in zip(order, reversed(alphas)):
        beta = rhos[idx] * slope_of(_row(diff_updates, idx), vec)
        vec = _axpy(alpha - beta, _row(diff_params, idx), vec)
    return vec


def _squared_norm(tree):
    return sum((fnp.sum(fnp.square(fnp.abs(x))) for x in fnad.tree_leaves(tree)), 0.0)


def scale_by_lbfgs(memory_size=10, scale_init_precond=True):
    """Multiply the updates by L-BFGS's approximation of the inverse Hessian, as optax's.

    The memory is updated first, from the params and updates of this step and the last,
    then the updates are preconditioned: chained before a line search, the memory sees
    only accepted steps. The first step is scaled by `min(1, 1 / |updates|)`.

    Args:
      memory_size: the number of past differences kept.
      scale_init_precond: start the recursion from `<dw, du> / <du, du>` times the identity
        (of the last differences) instead of the identity.

    Returns:
      A `GradientTransformation` with a `ScaleByLBFGSState`.

    Example:
      tx = chain(scale_by_lbfgs(), scale(-1.0),
                 scale_by_zoom_linesearch(20, initial_guess_strategy="one"))
    """
    fname = "scale_by_lbfgs"
    if not isinstance(memory_size, int) or memory_size < 1:
        raise ValueError(f"{fname}: memory_size must be an int >= 1, got {memory_size!r}.")
    why = (f"{fname} takes dot products of whole trees in its two-loop recursion, so it may "
           "not run on one process's rows of each leaf")

    def init(params):
        refuse_on_rows(why)
        stacked = fnad.tree_map(
            lambda x: fnp.zeros_like(x, shape=(memory_size,) + fnp.shape(x)), params)
        zeros = fnad.tree_map(fnp.zeros_like, params)
        return ScaleByLBFGSState(
            count=zero_count(params), params=zeros, updates=zeros,
            diff_params_memory=stacked, diff_updates_memory=stacked,
            weights_memory=scalar(0.0, real_dtype(params), first_leaf(params),
                                  (memory_size,)))

    def update(updates, state, params=None):
        refuse_on_rows(why)
        if params is None:
            raise ValueError(f"{fname}: L-BFGS needs the params; call update(updates, "
                             "state, params).")
        count = state.count
        memory_idx, prev_idx = count % memory_size, (count - 1) % memory_size
        started = count > 0
        diff_params, diff_updates = _sub(params, state.params), _sub(updates, state.updates)
        curvature = slope_of(diff_updates, diff_params)
        nonzero = curvature != 0.0
        weight = fnp.where(nonzero, 1.0 / fnp.where(nonzero, curvature, 1.0), 0.0)
        diff_params, diff_updates = (
            fnad.tree_map(lambda x: fnp.where(started, x, fnp.zeros_like(x)), t)
            for t in (diff_params, diff_updates))
        weight = fnp.where(started, weight, 0.0)
        put = lambda mem, x: fnp.at(mem)[prev_idx].set(x)
        dp_mem = fnad.tree_map(put, state.diff_params_memory, diff_params)
        du_mem = fnad.tree_map(put, state.diff_updates_memory, diff_updates)
        w_mem = put(state.weights_memory, fnp.astype(weight, state.weights_memory.dtype))
        gamma = 1.0
        if scale_init_precond:
            num, den = slope_of(diff_updates, diff_params), _squared_norm(diff_updates)
            gamma = fnp.where(den > 0.0, num / fnp.where(den > 0.0, den, 1.0), 1.0)
            norm = fnp.sqrt(_squared_norm(fnad.stop_gradient(updates)))
            capped = fnp.minimum(1.0, 1.0 / fnp.where(norm > 0.0, norm, 1.0))
            gamma = fnp.where(started, gamma, capped)
        direction = _precondition(updates, dp_mem, du_mem, w_mem, gamma, memory_idx)
        return direction, ScaleByLBFGSState(inc_count(count), params, updates, dp_mem,
                                             du_mem, w_mem)

    return transform(fname, init, update, ScaleByLBFGSState)


class _Default(GradientTransformationExtraArgs):
    """lbfgs's default line search, shown in its signature as the call that made it."""

    __slots__ = ()

    def __repr__(self):
        return "scale_by_zoom_linesearch(max_linesearch_steps=20, initial_guess_strategy='one')"


_DEFAULT_LINESEARCH = _Default(*scale_by_zoom_linesearch(max_linesearch_steps=20,
                                                         initial_guess_strategy="one"))


def lbfgs(learning_rate=None, memory_size=10, scale_init_precond=True,
          linesearch=_DEFAULT_LINESEARCH):
    """L-BFGS with a line search (by default the zoom search, 20 trials, starting from 1),
    as optax's: `chain(scale_by_lbfgs(...), scale(-1) or the learning rate, linesearch)`.

    `update` takes the keyword arguments `value`, `grad` and `value_fn` (and the keyword
    arguments of `value_fn`); `value_and_grad_from_state(f)` reuses the line search's last
    evaluation for the next step. For full-batch (deterministic) objectives.

    Args:
      learning_rate: None (the line search sets the step) or a fixed number or schedule.
      memory_size: the number of past differences kept.
      scale_init_precond: see `scale_by_lbfgs`.
      linesearch: a line search (`scale_by_zoom_linesearch`,
        `scale_by_backtracking_linesearch`) or None.

    Returns:
      A `GradientTransformationExtraArgs`.

    Example:
      opt, value_and_grad = lbfgs(), value_and_grad_from_state(f)
      v, g = value_and_grad(params, state=state)
      updates, state = opt.update(g, state, params, value=v, grad=g, value_fn=f)
    """
    check_nonneg("lbfgs", "learning_rate", learning_rate)
    step = scale(-1.0) if learning_rate is None else scale_by_learning_rate(learning_rate)
    return named("lbfgs", chain(scale_by_lbfgs(memory_size, scale_init_precond), step,
                                identity() if linesearch is None else linesearch))
