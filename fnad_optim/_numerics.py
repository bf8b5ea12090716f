"""optax's small numeric helpers and utilities: safe norms and counters, moment updates,
`scale_gradient`, incremental and periodic target updates, `flatten`, the aliases of the
state classes of stateless transforms, and the type names."""

from typing import Any, Callable, NamedTuple, Protocol

import numpy as np

import fnad
import fnad.numpy as fnp

from ._base import EmptyState, GradientTransformation, ScheduleState, inc_count
from ._transforms import ScaleByAdagradState, ScaleByStddevState
from ._tree_utils import (tree_bias_correction, tree_update_infinity_moment,
                          tree_update_moment, tree_update_moment_per_elem_norm)

__all__ = ["safe_norm", "safe_root_mean_squares", "safe_increment", "safe_int32_increment",
           "bias_correction", "update_moment", "update_infinity_moment",
           "update_moment_per_elem_norm", "init_empty_state", "scale_gradient",
           "incremental_update", "periodic_update", "flatten", "AdaptiveGradClipState",
           "AddDecayedWeightsState", "ClipByGlobalNormState", "ClipState", "ScaleState",
           "ScaleByTrustRatioState", "ScaleByScheduleState", "ScaleByRssState",
           "ScaleByRStdDevState", "OptState", "Params", "Updates",
           "Schedule", "ScalarOrSchedule", "MaskOrFn", "TransformInitFn",
           "TransformUpdateFn", "ShouldSkipUpdateFunction", "StatefulSchedule"]

# the states of optax's stateless transforms, all the empty state here as there
AdaptiveGradClipState = AddDecayedWeightsState = ClipByGlobalNormState = EmptyState
ClipState = ScaleState = ScaleByTrustRatioState = EmptyState
ScaleByScheduleState = ScheduleState  # (count,)
ScaleByRssState = ScaleByAdagradState  # optax's names; these also keep the step count
ScaleByRStdDevState = ScaleByStddevState

# type names, for annotations
OptState = Params = Updates = Any
Schedule = Callable[[Any], Any]
ScalarOrSchedule = Any  # a number or a Schedule
MaskOrFn = Any  # None, a pytree of bools, or a function of the params returning one
TransformInitFn = Callable[[Any], Any]
TransformUpdateFn = Callable[..., Any]
ShouldSkipUpdateFunction = Callable[..., Any]  # (updates, gradient_step, params) -> (skip, info)


class StatefulSchedule(Protocol):
    """A schedule with a state: `init() -> state`, `update(state, **extra_args) -> state`,
    `__call__(state, **extra_args) -> value` (see `WrappedSchedule`)."""

    def init(self) -> Any: ...

    def update(self, state: Any, **extra_args: Any) -> Any: ...

    def __call__(self, state: Any, **extra_args: Any) -> Any: ...


def safe_norm(x, min_norm, ord=None, axis=None, keepdims=False):
    """`max(norm(x), min_norm)` whose gradient is finite (zero) where the norm is below
    `min_norm`, even at `x = 0`.

    Example:
      n = safe_norm(g, 1e-6)
    """
    norm = fnp.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    small = norm <= min_norm
    safe_x = fnp.where(small if keepdims or axis is None else fnp.expand_dims(small, axis),
                       fnp.ones_like(x), x)
    return fnp.where(small, min_norm, fnp.linalg.norm(safe_x, ord=ord, axis=axis,
                                                      keepdims=keepdims))


def safe_root_mean_squares(x, min_rms):
    """`max(rms(x), min_rms)` with a finite gradient where the RMS is below `min_rms`.

    Example:
      r = safe_root_mean_squares(p, 1e-3)
    """
    rms = fnp.sqrt(fnp.mean(x * x))
    small = rms <= min_rms
    safe_x = fnp.where(small, fnp.ones_like(x), x)
    return fnp.where(small, min_rms, fnp.sqrt(fnp.mean(safe_x * safe_x)))


def safe_increment(count):
    """`count + 1`, saturating at the largest value of its dtype.

    Example:
      count = safe_increment(count)
    """
    count = fnp.asarray(count)
    dtype = np.dtype(fnp.result_type(count))
    top = np.iinfo(dtype).max if dtype.kind in "iu" else np.finfo(dtype).max
    return fnp.where(count < top, count + 1, fnp.full_like(count, top))


def safe_int32_increment(count):
    """`count + 1` as an int32, saturating at 2**31 - 1. Example: `safe_int32_increment(c)`."""
    return inc_count(count)


def bias_correction(moment, decay, count):
    """optax's name of `tree_utils.tree_bias_correction`."""
    return tree_bias_correction(moment, decay, count)


def update_moment(updates, moments, decay, order):
    """optax's name of `tree_utils.tree_update_moment`."""
    return tree_update_moment(updates, moments, decay, order)


def update_infinity_moment(updates, moments, decay, eps):
    """optax's name of `tree_utils.tree_update_infinity_moment`."""
    return tree_update_infinity_moment(updates, moments, decay, eps)


def update_moment_per_elem_norm(updates, moments, decay, order):
    """optax's name of `tree_utils.tree_update_moment_per_elem_norm`."""
    return tree_update_moment_per_elem_norm(updates, moments, decay, order)


def init_empty_state(params):
    """The `init` of a transform that keeps nothing: an `EmptyState`."""
    return EmptyState()


@fnad.custom_vjp
def _scaled(x, scale):
    return x


def _scaled_fwd(x, scale):
    return x, scale


def _scaled_bwd(scale, g):
    return g * scale, None


_scaled.defvjp(_scaled_fwd, _scaled_bwd)


def scale_gradient(inputs, scale):
    """The identity on `inputs` (a pytree) whose gradient is multiplied by `scale` (0 stops
    it).

    Example:
      h = scale_gradient(h, 0.1)   # a tenth of the gradient flows back through h
    """
    if isinstance(scale, (int, float)) and scale == 1.0:
        return inputs
    if isinstance(scale, (int, float)) and scale == 0.0:
        return fnad.tree_map(fnad.stop_gradient, inputs)
    return fnad.tree_map(lambda x: _scaled(x, scale), inputs)


def incremental_update(new_tensors, old_tensors, step_size):
    """`step_size * new + (1 - step_size) * old` leaf by leaf (Polyak averaging of a target
    network).

    Example:
      target = incremental_update(online, target, 0.005)
    """
    return fnad.tree_map(lambda n, o: step_size * n + (1.0 - step_size) * o, new_tensors,
                         old_tensors)


def periodic_update(new_tensors, old_tensors, steps, update_period):
    """`new_tensors` every `update_period` steps (when `steps % update_period == 0`), else
    `old_tensors`.

    Example:
      target = periodic_update(online, target, step, 1000)
    """
    now = fnp.asarray(steps) % update_period == 0
    return fnad.tree_map(lambda n, o: fnp.where(now, n, o), new_tensors, old_tensors)


class _Raveled(NamedTuple):
    shapes: Any
    treedef: Any


def _ravel(tree):
    leaves, treedef = fnad.tree_flatten(tree)
    if not leaves:
        return fnp.zeros((0,)), _Raveled((), treedef)
    flat = fnp.concatenate([fnp.reshape(x, (-1,)) for x in leaves])
    return flat, _Raveled(tuple(fnp.shape(x) for x in leaves), treedef)


def _unravel(flat, how):
    out, start = [], 0
    for s in how.shapes:
        size = int(np.prod(s))
        out.append(fnp.reshape(flat[start:start + size], s))
        start += size
    return how.treedef.unflatten(out)


def flatten(inner):
    """`inner` run on all leaves concatenated into one vector (fewer, larger operations; its
    state then holds vectors).

    Example:
      opt = flatten(adam(1e-3))
    """
    def init(params):
        return inner.init(_ravel(params)[0])

    def update(updates, state, params=None):
        flat, how = _ravel(updates)
        flat_p = None if params is None else _ravel(params)[0]
        new, state = inner.update(flat, state, flat_p)
        return _unravel(new, how), state

    return GradientTransformation(init, update)
