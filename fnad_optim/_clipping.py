"""Clipping and NaN handling."""

from typing import Any, NamedTuple

import fnad
import fnad.numpy as fnp

from ._shards import agreed_any
from ._base import cast_like, check_nonneg, global_norm, stateless, transform

__all__ = ["clip", "clip_by_global_norm", "zero_nans", "ZeroNansState"]


class ZeroNansState(NamedTuple):
    """Per leaf, whether the last updates held a NaN."""

    found_nan: Any


def clip(max_delta):
    """Clip every update element to `[-max_delta, max_delta]`.

    Args:
      max_delta: a non-negative number or a schedule.

    Returns:
      A `GradientTransformation`.

    Example:
      tx = chain(clip(1.0), sgd(0.1))
      state = tx.init(params)
    """
    check_nonneg("clip", "max_delta", max_delta)

    def fn(updates, params, max_delta):
        return fnad.tree_map(
            lambda u: fnp.clip(u, -cast_like(max_delta, u), cast_like(max_delta, u)), updates)

    return stateless("clip", fn, max_delta=max_delta)


def clip_by_global_norm(max_norm):
    """Scale all updates by `max_norm / global_norm` when the global norm exceeds `max_norm`.

    Args:
      max_norm: a positive number or a schedule.

    Returns:
      A `GradientTransformation`.

    Example:
      opt = chain(clip_by_global_norm(1.0), adamw(3e-4))
      state = opt.init(params)
    """
    check_nonneg("clip_by_global_norm", "max_norm", max_norm)

    def fn(updates, params, max_norm):
        norm = global_norm(updates)
        factor = max_norm / fnp.maximum(norm, max_norm)
        return fnad.tree_map(lambda u: u * cast_like(factor, u), updates)

    return stateless("clip_by_global_norm", fn, max_norm=max_norm)


def zero_nans():
    """Replace NaNs in the updates by zeros; the state records which leaves had any.

    Returns:
      A `GradientTransformation` with a `ZeroNansState` (one bool array per leaf).

    Example:
      tx = chain(zero_nans(), adam(1e-3))
      state = tx.init(params)
    """
    def init(params):
        return ZeroNansState(found_nan=fnad.tree_map(  # on each param's device
            lambda p: fnp.zeros_like(p, shape=(), dtype=bool), params))

    def update(updates, state, params=None):
        # A bool array per leaf, on the leaf's device (no host sync; stageable).
        leaves, treedef = fnad.tree_flatten(updates)
        found = treedef.unflatten(agreed_any([fnp.asarray(fnp.any(fnp.isnan(u)))
                                              for u in leaves]))
        updates = fnad.tree_map(lambda u: fnp.where(fnp.isnan(u), fnp.zeros_like(u), u),
                                updates)
        return updates, ZeroNansState(found_nan=found)

    return transform("zero_nans", init, update, ZeroNansState)
