"""More transforms with optax's names: Rprop, sign, optimistic gradients, accumulation
every k steps, gradient noise, Polyak steps, parameter-scaled and normalised updates."""

from typing import Any, NamedTuple

import numpy as np

import fnad
import fnad.numpy as fnp
import fnad.random as frandom

from ._base import (EmptyState, cast_like, check_nonneg, global_norm, inc_count,
                    require_params, transform, tree_full_like, tree_map_checked,
                    tree_zeros_like, zero_count)

__all__ = ["ScaleByRpropState", "ScaleByOptimisticGradientState", "ApplyEvery",
           "AddNoiseState", "NonNegativeParamsState", "scale_by_rprop", "scale_by_sign",
           "scale_by_optimistic_gradient", "apply_every", "centralize",
           "scale_by_param_block_norm", "scale_by_param_block_rms", "normalize_by_update_norm",
           "scale_by_polyak", "keep_params_nonnegative", "add_noise",
           "ScaleByDistanceOverGradientsState", "scale_by_distance_over_gradients"]


class ScaleByRpropState(NamedTuple):
    """Per-coordinate step sizes and the previous (sign-scaled) updates."""

    step_sizes: Any
    prev_updates: Any


class ScaleByOptimisticGradientState(NamedTuple):
    """Whether no step was taken yet, and the previous gradient."""

    is_initial_step: Any
    previous_gradient: Any


class ApplyEvery(NamedTuple):
    """Calls modulo k and the gradients accumulated since the last emitted step."""

    count: Any
    grad_acc: Any


class AddNoiseState(NamedTuple):
    """Step count and the random key of the next noise draw."""

    count: Any
    rng_key: Any


class ScaleByDistanceOverGradientsState(NamedTuple):
    """Per leaf: the largest distance from the initial params, the running sum of squared
    gradients, and the initial params."""

    max_dist: Any
    grad_sum_of_squares: Any
    init_params: Any


class NonNegativeParamsState(NamedTuple):
    """`keep_params_nonnegative` keeps nothing."""


def _empty(params):
    return EmptyState()


def scale_by_rprop(learning_rate, eta_minus=0.5, eta_plus=1.2, min_step_size=1e-6,
                   max_step_size=50.0):
    """Rprop (Riedmiller and Braun 1993): per-coordinate step sizes grown by `eta_plus` while
    the gradient keeps its sign and shrunk by `eta_minus` when it flips (that step is
    skipped). As optax, each call emits the step `step_size * sign(g)` of the call before
    (zero on the first), unless the sign flipped; chain `scale(-1)` to descend.

    Returns:
      A `GradientTransformation` with a `ScaleByRpropState`.

    Example:
      tx = chain(scale_by_rprop(1e-2), scale(-1.0))
    """
    fname = "scale_by_rprop"
    check_nonneg(fname, "learning_rate", learning_rate)

    def init(params):
        return ScaleByRpropState(tree_full_like(params, learning_rate), tree_zeros_like(params))

    def update(updates, state, params=None):
        sign = tree_map_checked(fname, lambda g, p: g * p, updates, state.prev_updates,
                                names=("updates", "state.prev_updates"))
        steps = fnad.tree_map(lambda s, st: fnp.where(
            s == 0, st, fnp.clip(st * fnp.where(s > 0, eta_plus, eta_minus), min_step_size,
                                 max_step_size)), sign, state.step_sizes)
        prev = fnad.tree_map(lambda s, g, st: fnp.where(s < 0, fnp.zeros_like(g),
                                                        st * fnp.sign(g)), sign, updates, steps)
        # optax emits the previous call's step (the one this gradient's sign confirms)
        out = fnad.tree_map(lambda s, p: fnp.where(s < 0, fnp.zeros_like(p), p), sign,
                            state.prev_updates)
        return out, ScaleByRpropState(steps, prev)

    return transform(fname, init, update, ScaleByRpropState)


def scale_by_sign():
    """The sign of each update coordinate (signSGD).

    Example:
      tx = chain(scale_by_sign(), scale_by_learning_rate(1e-3))
    """
    return transform("scale_by_sign", _empty, lambda updates, state, params=None: (
        fnad.tree_map(fnp.sign, updates), state), EmptyState)


def scale_by_optimistic_gradient(alpha=1.0, beta=1.0):
    """Optimistic gradient (Daskalakis et al. 2018): `(alpha + beta) * g - beta * g_prev`
    (`g_prev = g` on the first step).

    Returns:
      A `GradientTransformation` with a `ScaleByOptimisticGradientState`.

    Example:
      tx = chain(scale_by_optimistic_gradient(), scale_by_learning_rate(1e-2))
    """
    def init(params):
        return ScaleByOptimisticGradientState(zero_count(params) == 0, tree_zeros_like(params))

    def update(updates, state, params=None):
        first = state.is_initial_step
        out = tree_map_checked(
            "scale_by_optimistic_gradient",
            lambda g, p: (alpha + beta) * g - beta * fnp.where(first, g, p), updates,
            state.previous_gradient, names=("updates", "state.previous_gradient"))
        return out, ScaleByOptimisticGradientState(fnp.zeros_like(first), updates)

    return transform("scale_by_optimistic_gradient", init, update,
                     ScaleByOptimisticGradientState)


def apply_every(k=1):
    """Accumulate the updates and emit their sum every `k` calls (zeros in between).

    Returns:
      A `GradientTransformation` with an `ApplyEvery` state.

    Example:
      tx = chain(apply_every(4), sgd(0.1))
    """
    if int(k) != k or k < 1:
        raise ValueError(f"apply_every: k must be a whole number >= 1, got {k}.")

    def init(params):
        return ApplyEvery(zero_count(params), tree_zeros_like(params))

    def update(updates, state, params=None):
        c = state.count % k
        keep = c != 0
        acc = tree_map_checked("apply_every", lambda g, a: fnp.where(keep, a, 0 * a) + g,
                               updates, state.grad_acc, names=("updates", "state.grad_acc"))
        emit = c == k - 1
        out = fnad.tree_map(lambda a: fnp.where(emit, a, fnp.zeros_like(a)), acc)
        return out, ApplyEvery(inc_count(state.count) % k, acc)

    return transform("apply_every", init, update, ApplyEvery)


def centralize():
    """Gradient centralisation (Yong et al. 2020): subtract from each leaf of more than one
    dimension its mean over all axes but the first.

    Example:
      tx = chain(centralize(), sgd(0.1))
    """
    def sub_mean(u):
        if fnp.ndim(u) > 1:
            return u - fnp.mean(u, axis=tuple(range(1, u.ndim)), keepdims=True)
        return u

    return transform("centralize", _empty, lambda updates, state, params=None: (
        fnad.tree_map(sub_mean, updates), state), EmptyState)


def _param_scaled(fname, measure, min_scale):
    def update(updates, state, params=None):
        require_params(fname, params)
        return tree_map_checked(
            fname, lambda u, p: u * cast_like(fnp.maximum(measure(p), min_scale), u), updates,
            params, names=("updates", "params")), state

    return transform(fname, _empty, update, EmptyState)


def scale_by_param_block_norm(min_scale=1e-3):
    """Scale each leaf's updates by its param's norm (at least `min_scale`).

    Example:
      tx = chain(scale_by_param_block_norm(), scale(-1e-2))
    """
    return _param_scaled("scale_by_param_block_norm",
                         lambda p: fnp.sqrt(fnp.sum(p * p)), min_scale)


def scale_by_param_block_rms(min_scale=1e-3):
    """Scale each leaf's updates by its param's root mean square (at least `min_scale`).

    Example:
      tx = chain(scale_by_param_block_rms(), scale(-1e-2))
    """
    return _param_scaled("scale_by_param_block_rms",
                         lambda p: fnp.sqrt(fnp.mean(p * p)), min_scale)


def normalize_by_update_norm(scale_factor=1.0, eps=1e-6):
    """Divide all updates by `(global_norm + eps) / scale_factor`.

    Example:
      tx = chain(normalize_by_update_norm(), sgd(0.1))
    """
    def update(updates, state, params=None):
        norm = (global_norm(updates) + eps) / scale_factor
        return fnad.tree_map(lambda g: g / cast_like(norm, g), updates), state

    return transform("normalize_by_update_norm", _empty, update, EmptyState)


def scale_by_polyak(f_min=0.0, max_learning_rate=1.0, eps=0.0, variant="sps"):
    """The Polyak step size (Loizou et al. 2021): the updates times `min((value - f_min) /
    (||g|| ** 2 + eps), max_learning_rate)`; `update` takes the loss as `value=`.

    Args:
      variant: "sps", or "sps+" to clip the gap `value - f_min` at 0.

    Returns:
      A `GradientTransformationExtraArgs` whose `update(updates, state, params=None, *,
      value)`.

    Example:
      updates, state = tx.update(grads, state, params, value=loss)
    """
    if variant not in ("sps", "sps+"):
        raise ValueError(f"scale_by_polyak: variant must be 'sps' or 'sps+', got {variant!r}.")

    def update(updates, state, params=None, *, value=None, **extra_args):
        if value is None:
            raise ValueError("scale_by_polyak: pass the loss as update(..., value=loss).")
        sq = global_norm(updates) ** 2
        gap = fnp.astype(fnp.asarray(value - f_min), fnp.result_type(sq))
        if variant == "sps+":
            gap = fnp.maximum(gap, 0)
        tiny = sq + eps <= np.finfo(float).eps
        step = fnp.where(tiny, 0.0, fnp.minimum(gap / fnp.where(tiny, 1.0, sq + eps),
                                                max_learning_rate))
        return fnad.tree_map(lambda g: g * cast_like(step, g), updates), state

    update.__qualname__ = "scale_by_polyak.update"
    return transform("scale_by_polyak", _empty, update, EmptyState, extra=True)


def scale_by_distance_over_gradients(reps_rel=1e-6, eps=1e-8, param_dtype=np.float32,
                                     global_scale=1.0):
    """DoG, distance over gradients (Ivgi et al. 2023): per leaf, the step size is the
    largest distance the params have moved from their start (at least `reps_rel * (1 +
    ||x0||)`) over the root of the summed squared gradient norms.

    Returns:
      A `GradientTransformation` with a `ScaleByDistanceOverGradientsState`; `update` needs
      the params.

    Example:
      tx = chain(scale_by_distance_over_gradients(), scale(-1.0))
    """
    fname = "scale_by_distance_over_gradients"

    def l2(x, y=0.0):
        return fnp.sqrt(fnp.sum((x - y) ** 2))

    def init(params):
        return ScaleByDistanceOverGradientsState(
            fnad.tree_map(lambda x: reps_rel * (1 + l2(x)), params),
            fnad.tree_map(lambda x: fnp.zeros_like(x, shape=(1,)), params),
            fnad.tree_map(lambda x: fnp.astype(fnp.asarray(x), param_dtype), params))

    def update(updates, state, params=None):
        require_params(fname, params)
        max_dist = tree_map_checked(fname, lambda d, x, x0: fnp.maximum(d, l2(x, x0)),
                                    state.max_dist, params, state.init_params,
                                    names=("state.max_dist", "params", "state.init_params"))
        sos = fnad.tree_map(lambda s, g: s + fnp.sum(g * g), state.grad_sum_of_squares,
                            updates)
        out = fnad.tree_map(lambda g, d, s: global_scale * (d / fnp.sqrt(s + eps)) * g,
                            updates, max_dist, sos)
        return out, ScaleByDistanceOverGradientsState(max_dist, sos, state.init_params)

    return transform(fname, init, update, ScaleByDistanceOverGradientsState)


def keep_params_nonnegative():
    """Change the updates so that no param goes below 0 (`-param` where it would).

    Example:
      tx = chain(sgd(0.1), keep_params_nonnegative())
    """
    def update(updates, state, params=None):
        require_params("keep_params_nonnegative", params)
        return tree_map_checked("keep_params_nonnegative",
                                lambda u, p: fnp.where(p + u < 0.0, -p, u), updates, params,
                                names=("updates", "params")), state

    return transform("keep_params_nonnegative", lambda params: NonNegativeParamsState(),
                     update, NonNegativeParamsState)


def add_noise(eta, gamma, key=None, *, seed=None):
    """Gradient noise (Neelakantan et al. 2015): add a normal sample of variance `eta / (1 +
    t) ** gamma` at step `t`, drawn with `fnad.random` from `key` (an int seed or a key).

    Returns:
      A `GradientTransformation` with an `AddNoiseState`.

    Example:
      tx = chain(add_noise(0.01, 0.55, key=0), sgd(0.1))
    """
    if seed is not None:
        if key is not None:
            raise ValueError("add_noise: give key or seed, not both.")
        key = seed
    key = 0 if key is None else key

    def init(params):
        k = frandom.PRNGKey(key) if np.ndim(key) == 0 else fnp.asarray(key)
        return AddNoiseState(zero_count(params), k)

    def update(updates, state, params=None):
        count = inc_count(state.count)
        std = fnp.sqrt(eta / count ** gamma)
        rng, sample = frandom.split(state.rng_key)
        leaves, treedef = fnad.tree_flatten(updates)
        keys = frandom.split(sample, max(len(leaves), 1))
        noisy = [g + cast_like(std, g) * frandom.normal(keys[i], fnp.shape(g),
                                                         dtype=fnp.result_type(g))
                 for i, g in enumerate(leaves)]
        return treedef.unflatten(noisy), AddNoiseState(count, rng)

    return transform("add_noise", init, update, AddNoiseState)
