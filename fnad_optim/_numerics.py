"""optax's small numeric helpers and utilities: safe norms and counters, moment updates,
`scale_gradient`, incremental and periodic target updates, `flatten`, the aliases of the
state classes of stateless transforms, and the type names."""

from typing import Any, Callable, NamedTuple, Protocol

import numpy as np

import fnad
import fnad.lax as flax
import fnad.numpy as fnp
import fnad.random as frandom

from ._base import EmptyState, GradientTransformation, ScheduleState, inc_count
from ._transforms import ScaleByAdagradState, ScaleByStddevState
from ._tree_utils import (tree_bias_correction, tree_norm, tree_scale, tree_sub,
                          tree_update_infinity_moment, tree_update_moment,
                          tree_update_moment_per_elem_norm, tree_vdot)

__all__ = ["safe_norm", "safe_root_mean_squares", "safe_increment", "safe_int32_increment",
           "bias_correction", "update_moment", "update_infinity_moment",
           "update_moment_per_elem_norm", "init_empty_state", "scale_gradient",
           "incremental_update", "periodic_update", "flatten", "power_iteration",
           "AdaptiveGradClipState",
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


def _normalized(tree):
    return tree_scale(1.0 / tree_norm(tree), tree)


def power_iteration(matrix, *, v0=None, num_iters=100, error_tolerance=1e-6, precision=None,
                    key=None):
    """The dominant eigenvalue and its unit eigenvector of a symmetric matrix, or of a
    linear map (a function of a pytree `v0`), by power iteration until the residual
    `||A v - lambda v|| / |lambda|` is below `error_tolerance` or `num_iters` steps.

    Args:
      matrix: a square array, or a function computing the matrix-vector product.
      v0: the starting vector (needed with a function; default: uniform in [-1, 1) drawn
        with fnad.random from `key`).
      precision: accepted for optax's signature; NumPy products are exact float64.

    Returns:
      `(eigenvalue, eigenvector)`.

    Example:
      lam, v = power_iteration(hessian_matrix)
    """
    if callable(matrix):
        mvp = matrix
        if v0 is None:
            raise ValueError("power_iteration: pass v0 when matrix is a function.")
    else:
        matrix = fnp.asarray(matrix)
        mvp = lambda v: matrix @ v
        if v0 is None:
            key = frandom.PRNGKey(0) if key is None else key
            v0 = frandom.uniform(key, matrix.shape[-1:], dtype=matrix.dtype, minval=-1.0,
                                 maxval=1.0)
    v0 = _normalized(v0)

    def cond(state):
        vec, z, eig, i = state
        residual = tree_norm(tree_sub(z, tree_scale(eig, vec)))
        return fnp.logical_and(~(fnp.abs(residual / eig) < error_tolerance), i < num_iters)

    def body(state):
        _, z, _, i = state
        vec = _normalized(z)
        z = mvp(vec)
        return vec, z, tree_vdot(vec, z), i + 1

    init = (v0, mvp(v0), fnp.asarray(0.0), fnp.asarray(0))
    with np.errstate(divide="ignore", invalid="ignore"):  # the first residual / 0
        _, z, eig, _ = flax.while_loop(cond, body, init)
    return eig, _normalized(z)


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
