"""Transforms that wrap another: masking, gradient accumulation, the NaN/Inf guard."""

from typing import Any, NamedTuple

import fnad
import fnad.numpy as fnp
from fnad.extend import Tracer, getval

from ._shards import agreed_all
from ._base import (check_structures, cond, div_as, extra_args_caller, inc_count, transform,
                    tree_zeros_like, zero_count)

__all__ = ["masked", "multi_steps", "apply_if_finite", "MaskedState", "MultiStepsState",
           "ApplyIfFiniteState"]


class MaskedState(NamedTuple):
    """The state of the inner transform, over the selected leaves (a list)."""

    inner_state: Any


class MultiStepsState(NamedTuple):
    """Calls since the last inner step, inner steps taken, the inner state, the
    accumulated grads, and what `MultiSteps`' should_skip_update_fn reported (() if none)."""

    mini_step: Any
    gradient_step: Any
    inner_opt_state: Any
    acc_grads: Any
    skip_state: Any = ()


class ApplyIfFiniteState(NamedTuple):
    """Consecutive and total skipped steps, whether the last step was finite, and
    the inner state."""

    notfinite_count: Any
    last_finite: Any
    total_notfinite: Any
    inner_state: Any


# ----------------------------------------------------------------------------- masked


def masked(inner, mask, *, mask_compatible_extra_args=False):
    """Apply `inner` only to the leaves where `mask` is True; the others pass unchanged.

    The inner transform sees (and keeps state for) the selected leaves only, as a list.
    Extra keyword arguments of `update` (e.g. `value=`) are passed on to `inner` if it
    takes them, as optax's.

    Args:
      inner: a `GradientTransformation`.
      mask: a pytree of bools shaped like the params, or a function returning one from the
        params (it is called on the updates in `update`, which have the same structure).
      mask_compatible_extra_args: also reduce to the selected leaves each extra arg that
        has the updates' structure.

    Returns:
      A `GradientTransformationExtraArgs` with a `MaskedState`.

    Example:
      is_matrix = lambda p: fnad.tree_map(lambda x: x.ndim > 1, p)
      tx = masked(add_decayed_weights(1e-2), is_matrix)
    """
    def flags_for(tree, what):
        m = mask(tree) if callable(mask) else mask
        (leaves, m_leaves), treedef = check_structures("masked", tree, m, names=(what, "mask"))
        return leaves, [bool(b) for b in m_leaves], treedef

    def init(params):
        leaves, flags, _ = flags_for(params, "params")
        return MaskedState(inner.init([x for x, f in zip(leaves, flags) if f]))

    call_inner = extra_args_caller(inner)

    def select_extra(extra_args, treedef, flags):
        if not mask_compatible_extra_args:
            return extra_args
        out = {}
        for k, v in extra_args.items():
            v_leaves, v_def = fnad.tree_flatten(v)
            out[k] = [x for x, f in zip(v_leaves, flags) if f] if v_def == treedef else v
        return out

    def update(updates, state, params=None, **extra_args):
        leaves, flags, treedef = flags_for(updates, "updates")
        chosen = [u for u, f in zip(leaves, flags) if f]
        p_chosen = None
        if params is not None:
            _, p_leaves = check_structures("masked", updates, params,
                                           names=("updates", "params"))[0]
            p_chosen = [p for p, f in zip(p_leaves, flags) if f]
        new, inner_state = call_inner(chosen, state.inner_state, p_chosen,
                                      select_extra(extra_args, treedef, flags))
        it = iter(new)
        out = [next(it) if f else u for u, f in zip(leaves, flags)]
        return treedef.unflatten(out), MaskedState(inner_state)

    return transform("masked", init, update, MaskedState, extra=True)


# ----------------------------------------------------------------------------- accumulation


def _every_k(every_k_schedule, gradient_step):
    k = every_k_schedule(gradient_step) if callable(every_k_schedule) else every_k_schedule
    if isinstance(k, Tracer):  # a traced schedule value: checked when it is concrete
        return k
    if int(k) != k or int(k) < 1:
        raise ValueError(f"multi_steps: every_k_schedule must give a whole number >= 1, got {k}.")
    return int(k)


def multi_steps(opt, every_k_schedule, use_grad_mean=True):
    """Gradient accumulation: run `opt` once every k calls, on the mean (or sum) of the grads.

    On the other calls the updates are zeros and `opt`'s state is left alone, so applying
    them is a no-op. `state.mini_step == 0` after a call means `opt` has just stepped. The
    counters are int32 arrays and the choice is a `cond` on them, so a step can be staged.

    Args:
      opt: the inner `GradientTransformation`.
      every_k_schedule: k, or a function of the number of inner steps taken returning k.
      use_grad_mean: average the accumulated grads (else sum them).

    Returns:
      A `GradientTransformationExtraArgs` with a `MultiStepsState` (extra args of `update`
      go to `opt`'s update when it steps, if it takes them).

    Example:
      opt = multi_steps(adam(1e-3), every_k_schedule=4)
      state = opt.init(params)
    """
    _every_k(every_k_schedule, 0)
    call_inner = extra_args_caller(opt)

    def init(params):
        return MultiStepsState(mini_step=zero_count(params), gradient_step=zero_count(params),
                               inner_opt_state=opt.init(params),
                               acc_grads=tree_zeros_like(params))

    def update(updates, state, params=None, **extra_args):
        n = inc_count(state.mini_step)  # calls accumulated, this one included
        if use_grad_mean:
            step = lambda a, g: a + div_as(g - a, n)
        else:
            step = lambda a, g: a + g
        (acc_leaves, g_leaves), treedef = check_structures(
            "multi_steps", state.acc_grads, updates, names=("state.acc_grads", "updates"))
        acc = treedef.unflatten([step(a, g) for a, g in zip(acc_leaves, g_leaves)])

        def accumulate():
            return tree_zeros_like(updates), state._replace(mini_step=n, acc_grads=acc)

        def emit():
            new_updates, inner_state = call_inner(acc, state.inner_opt_state, params,
                                                  extra_args)
            return new_updates, MultiStepsState(mini_step=fnp.zeros_like(n),
                                                gradient_step=inc_count(state.gradient_step),
                                                inner_opt_state=inner_state,
                                                acc_grads=tree_zeros_like(acc))

        return cond(n < _every_k(every_k_schedule, state.gradient_step), accumulate, emit)

    return transform("multi_steps", init, update, MultiStepsState, extra=True)


# ----------------------------------------------------------------------------- NaN/Inf guard


def all_finite(tree):
    """Whether no leaf of `tree` holds a NaN or an Inf.

    Args:
      tree: a pytree of arrays (traced values are looked through; no derivative).

    Returns:
      A Python bool.

    Example:
      if not all_finite(grads):
          print("skipping a step")
    """
    return all(bool(fnp.isfinite(getval(x)).all()) for x in fnad.tree_leaves(tree))


def _all_finite_array(tree):
    """`all_finite` as a bool array of shape (), computed with fnad.numpy (stageable)."""
    flags = [fnp.all(fnp.isfinite(x)) for x in fnad.tree_leaves(tree)]
    return fnp.asarray(fnp.all(fnp.stack(flags)) if flags else True)


def apply_if_finite(inner, max_consecutive_errors=None):
    """Skip steps whose updates hold a NaN or an Inf, and count them.

    A skipped step returns zero updates and leaves `inner`'s state unchanged. The state
    counts consecutive (`notfinite_count`) and total (`total_notfinite`) skips, for logging.
    After more than `max_consecutive_errors` consecutive skips the update is applied anyway
    (None: never). The counts are int32 arrays and the choice is a `cond` on them, so a step
    can be staged. With several processes (mpiexec) the finite check is agreed (one psum of
    an int32): a NaN on any process skips the step on all of them, so call `update` on every
    process (inside or outside `data_parallel`, sharded or not).

    Args:
      inner: the `GradientTransformation` to guard (e.g. a whole optimizer).
      max_consecutive_errors: optional limit, as above.

    Returns:
      A `GradientTransformationExtraArgs` with an `ApplyIfFiniteState` (extra args of
      `update` go to `inner`, if it takes them).

    Example:
      opt = apply_if_finite(adamw(1e-3), max_consecutive_errors=5)
      print(int(opt_state.total_notfinite), "steps skipped")
    """
    call_inner = extra_args_caller(inner)

    def init(params):
        return ApplyIfFiniteState(notfinite_count=zero_count(params),
                                  last_finite=zero_count(params) == 0,
                                  total_notfinite=zero_count(params),
                                  inner_state=inner.init(params))

    def update(updates, state, params=None, **extra_args):
        finite = agreed_all(_all_finite_array(updates))  # the same on every process
        notfinite = fnp.where(finite, fnp.zeros_like(state.notfinite_count),
                              inc_count(state.notfinite_count))
        total = fnp.where(finite, state.total_notfinite, inc_count(state.total_notfinite))
        apply = finite
        if max_consecutive_errors is not None:
            apply = finite | (notfinite > max_consecutive_errors)
        updates, inner_state = cond(
            apply, lambda: call_inner(updates, state.inner_state, params, extra_args),
            lambda: (tree_zeros_like(updates), state.inner_state))
        return updates, ApplyIfFiniteState(notfinite_count=notfinite, last_finite=finite,
                                           total_notfinite=total, inner_state=inner_state)

    return transform("apply_if_finite", init, update, ApplyIfFiniteState, extra=True)
