"""Clipping by whole leaves or per example, and steps taken on a condition, with optax's
names: `adaptive_grad_clip`, `per_example_global_norm_clip`, `per_example_layer_norm_clip`,
`conditionally_mask`, `conditionally_transform`, and the skip tests `skip_not_finite` and
`skip_large_updates` (for `multi_steps`-style `should_skip_update_fn`s)."""

from typing import Any, NamedTuple

import fnad
import fnad.numpy as fnp

from ._base import (EmptyState, check_nonneg, cond, extra_args_caller, inc_count,
                    require_params, transform, tree_map_checked, tree_zeros_like, zero_count)

__all__ = ["ConditionallyMaskState", "ConditionallyTransformState", "adaptive_grad_clip",
           "per_example_global_norm_clip", "per_example_layer_norm_clip",
           "conditionally_mask", "conditionally_transform", "skip_not_finite",
           "skip_large_updates"]


class ConditionallyMaskState(NamedTuple):
    """Calls so far and the inner state."""

    step: Any
    inner_state: Any


class ConditionallyTransformState(NamedTuple):
    """The inner state and calls so far."""

    inner_state: Any
    step: Any


def _unitwise_norm(x, axis=None):
    sq = x * x
    if axis is not None:
        n = fnp.sum(sq, axis=axis, keepdims=True)
    elif fnp.ndim(fnp.squeeze(x)) <= 1:
        n = fnp.sum(sq, keepdims=True)
    elif x.ndim in (2, 3):
        n = fnp.sum(sq, axis=0, keepdims=True)
    elif x.ndim in (4, 5):
        n = fnp.sum(sq, axis=tuple(range(x.ndim - 1)), keepdims=True)
    else:
        raise ValueError(f"adaptive_grad_clip: a leaf of shape {x.shape} has no default unit; "
                         "pass axis= (the axes of one unit's norm).")
    return fnp.broadcast_to(fnp.sqrt(n), x.shape)


def adaptive_grad_clip(clipping, eps=1e-3, axis=None):
    """Adaptive gradient clipping (Brock et al. 2021): clip each unit (output row) of each
    leaf to `clipping * max(||param unit||, eps)`.

    Returns:
      A `GradientTransformation`; `update` needs the params.

    Example:
      tx = chain(adaptive_grad_clip(0.01), sgd(0.1))
    """
    check_nonneg("adaptive_grad_clip", "clipping", clipping)

    def clip(g, p):
        g_norm, p_norm = _unitwise_norm(g, axis), _unitwise_norm(p, axis)
        max_norm = clipping * fnp.maximum(p_norm, eps)
        clipped = g * (max_norm / fnp.maximum(g_norm, 1e-6))
        return fnp.where(g_norm < max_norm, g, clipped)

    def update(updates, state, params=None):
        require_params("adaptive_grad_clip", params)
        return tree_map_checked("adaptive_grad_clip", clip, updates, params,
                                names=("updates", "params")), state

    return transform("adaptive_grad_clip", lambda params: EmptyState(), update, EmptyState)


def _check_batch(fname, grads):
    leaves = fnad.tree_leaves(grads)
    sizes = {fnp.shape(g)[0] if fnp.ndim(g) else None for g in leaves}
    if not leaves or None in sizes or len(sizes) != 1:
        raise ValueError(f"{fname}: every leaf of grads needs the same batch axis first (the "
                         f"per-example gradients), got shapes "
                         f"{[fnp.shape(g) for g in leaves]}.")


def per_example_global_norm_clip(grads, l2_norm_clip):
    """Clip each example's gradient (axis 0 of every leaf) to global norm `l2_norm_clip` and
    sum over the examples, as in DP-SGD.

    Returns:
      The summed clipped gradients and the number of examples clipped.

    Example:
      summed, n_clipped = per_example_global_norm_clip(per_example_grads, 1.0)
    """
    _check_batch("per_example_global_norm_clip", grads)
    leaves = fnad.tree_leaves(grads)
    sq = sum(fnp.sum(fnp.reshape(g * g, (g.shape[0], -1)), axis=1) for g in leaves)
    norms = fnp.sqrt(sq)
    mult = fnp.nan_to_num(fnp.minimum(l2_norm_clip / norms, 1.0), nan=1.0)
    summed = fnad.tree_map(lambda g: fnp.tensordot(mult, g, axes=1), grads)
    return summed, fnp.sum(mult < 1.0)


def per_example_layer_norm_clip(grads, global_l2_norm_clip, uniform=True):
    """Clip each leaf's per-example gradients to its share of `global_l2_norm_clip`
    (equal shares, or by leaf size with `uniform=False`), and sum over the examples.

    Returns:
      A pair of pytrees: the summed clipped gradients, and per leaf the examples clipped.

    Example:
      summed, n_clipped = per_example_layer_norm_clip(per_example_grads, 1.0)
    """
    _check_batch("per_example_layer_norm_clip", grads)
    leaves, treedef = fnad.tree_flatten(grads)
    total = sum(g[0].size for g in leaves)
    out = [per_example_global_norm_clip(
        g, global_l2_norm_clip * ((1.0 / len(leaves)) if uniform else g[0].size / total) ** 0.5)
        for g in leaves]
    return treedef.unflatten([o[0] for o in out]), treedef.unflatten([o[1] for o in out])


def conditionally_transform(inner, should_transform_fn, forward_extra_args=False):
    """Run `inner` where `should_transform_fn(step)` holds; pass the updates unchanged (and
    keep the inner state) elsewhere.

    Returns:
      A `GradientTransformationExtraArgs` with a `ConditionallyTransformState` (extra args
      go to `inner` if it takes them, and to `should_transform_fn` with
      `forward_extra_args=True`).

    Example:
      tx = conditionally_transform(clip(0.1), lambda step: step < 100)
    """
    call_inner = extra_args_caller(inner)

    def init(params):
        return ConditionallyTransformState(inner.init(params), zero_count(params))

    def update(updates, state, params=None, **extra_args):
        kw = extra_args if forward_extra_args else {}
        updates, inner_state = cond(
            should_transform_fn(state.step, **kw),
            lambda: call_inner(updates, state.inner_state, params, extra_args),
            lambda: (updates, state.inner_state))
        return updates, ConditionallyTransformState(inner_state, inc_count(state.step))

    return transform("conditionally_transform", init, update, ConditionallyTransformState,
                     extra=True)


def conditionally_mask(inner, should_transform_fn, forward_extra_args=False):
    """Run `inner` where `should_transform_fn(step)` holds; zero updates (and keep the inner
    state) elsewhere.

    Returns:
      A `GradientTransformationExtraArgs` with a `ConditionallyMaskState` (extra args go
      to `inner` as in `conditionally_transform`).

    Example:
      opt = conditionally_mask(adam(1e-3), lambda step: step % 2 == 0)
    """
    call_inner = extra_args_caller(inner)

    def init(params):
        return ConditionallyMaskState(zero_count(params), inner.init(params))

    def update(updates, state, params=None, **extra_args):
        kw = extra_args if forward_extra_args else {}
        updates, inner_state = cond(
            should_transform_fn(state.step, **kw),
            lambda: call_inner(updates, state.inner_state, params, extra_args),
            lambda: (tree_zeros_like(updates), state.inner_state))
        return updates, ConditionallyMaskState(inc_count(state.step), inner_state)

    return transform("conditionally_mask", init, update, ConditionallyMaskState, extra=True)


def skip_not_finite(updates, gradient_step, params):
    """A `should_skip_update_fn`: skip when any update is NaN or infinite.

    Returns:
      `(should_skip, {"should_skip": ..., "num_not_finite": ...})`.

    Example:
      skip, info = skip_not_finite(grads, step, params)
    """
    bad = [fnp.sum(~fnp.isfinite(u)) for u in fnad.tree_leaves(updates)]
    num = fnp.sum(fnp.stack(bad)) if bad else fnp.asarray(0)
    skip = num > 0
    return skip, {"should_skip": skip, "num_not_finite": num}


def skip_large_updates(updates, gradient_step, params, max_squared_norm):
    """A `should_skip_update_fn`: skip when the squared global norm of the updates reaches
    `max_squared_norm` (or is NaN). It reads every leaf whole, so it decides on the whole
    tree: do not use it inside `shard_optimizer_state`.

    Returns:
      `(should_skip, {"should_skip": ..., "norm_squared": ...})`.

    Example:
      skip, info = skip_large_updates(grads, step, params, max_squared_norm=100.0)
    """
    sq = [fnp.sum(u * u) for u in fnad.tree_leaves(updates)]
    norm_sq = fnp.sum(fnp.stack(sq)) if sq else fnp.asarray(0.0)
    skip = ~(norm_sq < max_squared_norm)
    return skip, {"should_skip": skip, "norm_squared": norm_sq}
