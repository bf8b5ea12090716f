"""Gradient transformations: scaling, momentum, adaptive moments and weight decay.

Every hyperparameter that is a float may also be a schedule `count -> value`, evaluated at
the number of steps taken before this one. States are NamedTuples of arrays; step counters
are int32 arrays of shape ().
"""

from typing import Any, NamedTuple

import fnad
import fnad.numpy as fnp

from ._base import (cast_like, check_nonneg, check_structures, check_unit, div_as, hyper,
                    inc_count, require_params, stateless, transform, tree_full_like,
                    tree_map_checked, tree_zeros_like, zero_count)
from ._base import bias_correction as _bias_correction
from ._shards import leaf_square_sums
from ._wrappers import masked

__all__ = ["scale", "scale_by_learning_rate", "scale_by_schedule", "trace", "scale_by_adam",
           "scale_by_rms", "scale_by_stddev", "scale_by_adagrad", "scale_by_rss",
           "scale_by_lion", "scale_by_trust_ratio", "add_decayed_weights"]

_UPD_STATE = ("updates", "state")


class TraceState(NamedTuple):
    """Step count and momentum buffer."""

    count: Any
    trace: Any


class ScaleByAdamState(NamedTuple):
    """Step count, first moment `mu` and second moment `nu`."""

    count: Any
    mu: Any
    nu: Any


class ScaleByRmsState(NamedTuple):
    """Step count and moving average of squared updates `nu`."""

    count: Any
    nu: Any


class ScaleByStddevState(NamedTuple):
    """Step count and moving averages of updates `mu` and their squares `nu`."""

    count: Any
    mu: Any
    nu: Any


class ScaleByAdagradState(NamedTuple):
    """Step count and running sum of squared updates."""

    count: Any
    sum_of_squares: Any


class ScaleByLionState(NamedTuple):
    """Step count and momentum `mu`."""

    count: Any
    mu: Any


# ----------------------------------------------------------------------------- scaling


def scale(step_size):
    """Multiply updates by `step_size` (a number or a schedule).

    Args:
      step_size: the factor; may be negative.

    Returns:
      A `GradientTransformation`.

    Example:
      tx = chain(scale_by_adam(), scale(-1e-3))
      state = tx.init(params)
    """
    return stateless("scale", lambda u, p, step_size: fnad.tree_map(
        lambda x: x * cast_like(step_size, x), u),
                     step_size=step_size)


def scale_by_schedule(step_size_fn):
    """Multiply updates by `step_size_fn(count)`.

    Args:
      step_size_fn: a schedule.

    Returns:
      A `GradientTransformation` whose state counts steps.

    Example:
      tx = scale_by_schedule(lambda count: -1e-3 * 0.99 ** count)
      state = tx.init(params)
    """
    if not callable(step_size_fn):
        raise TypeError("scale_by_schedule: step_size_fn must be a function of the step count; "
                        "use scale(value) for a constant.")
    return scale(step_size_fn)


def scale_by_learning_rate(learning_rate, *, flip_sign=True):
    """Multiply updates by `-learning_rate` (gradient descent), constant or scheduled.

    Args:
      learning_rate: a non-negative number or a schedule.
      flip_sign: negate the step (True for minimisation).

    Returns:
      A `GradientTransformation`.

    Example:
      tx = chain(scale_by_adam(), scale_by_learning_rate(warmup_cosine_decay_schedule(
          0.0, 1e-3, 100, 1000)))
    """
    check_nonneg("scale_by_learning_rate", "learning_rate", learning_rate)
    sign = -1 if flip_sign else 1
    if callable(learning_rate):
        return scale(lambda count: sign * hyper(learning_rate, count))
    return scale(sign * learning_rate)


# ----------------------------------------------------------------------------- momentum


def trace(decay, nesterov=False):
    """Momentum: `t = g + decay * t`; emits `t`, or `g + decay * t` with `nesterov`.

    This is torch.optim.SGD's momentum buffer with `dampening=0`.

    Args:
      decay: the momentum coefficient in [0, 1) (or a schedule).
      nesterov: use Nesterov momentum.

    Returns:
      A `GradientTransformation` with a `TraceState`.

    Example:
      tx = chain(trace(0.9), scale_by_learning_rate(0.1))
      state = tx.init(params)
    """
    check_unit("trace", "decay", decay)

    def init(params):
        return TraceState(count=zero_count(params), trace=tree_zeros_like(params))

    def update(updates, state, params=None):
        d = hyper(decay, state.count)
        new_trace = tree_map_checked("trace", lambda g, t: g + cast_like(d, t) * t, updates,
                                     state.trace, names=_UPD_STATE)
        if nesterov:
            updates = fnad.tree_map(lambda g, t: g + cast_like(d, t) * t, updates, new_trace)
        else:
            updates = new_trace
        return updates, TraceState(count=inc_count(state.count), trace=new_trace)

    return transform("trace", init, update, TraceState)


# ----------------------------------------------------------------------------- adaptive


def _moment(g, m, decay, order):
    """Exponential moving average of `g ** order` (a traced `decay` cast to `m`'s dtype)."""
    decay = cast_like(decay, m)
    return (1 - decay) * (g if order == 1 else g * g) + decay * m


def scale_by_adam(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, *, nesterov=False):
    """Adam's direction: `m_hat / (sqrt(v_hat + eps_root) + eps)` with bias correction.

    `eps` sits outside the square root of the bias-corrected second moment, as in
    torch.optim.Adam and optax.

    Args:
      b1, b2: decay rates of the first and second moments, in [0, 1).
      eps: added to the denominator outside the square root.
      eps_root: added inside the square root.
      nesterov: use Nesterov momentum on the first moment (NAdam).

    Returns:
      A `GradientTransformation` with a `ScaleByAdamState`.

    Example:
      tx = chain(scale_by_adam(), scale_by_learning_rate(1e-3))
      state = tx.init(params)
    """
    fname = "scale_by_adam"
    check_unit(fname, "b1", b1)
    check_unit(fname, "b2", b2)
    check_nonneg(fname, "eps", eps)
    check_nonneg(fname, "eps_root", eps_root)

    def init(params):
        return ScaleByAdamState(count=zero_count(params), mu=tree_zeros_like(params),
                                nu=tree_zeros_like(params))

    def update(updates, state, params=None):
        beta1, beta2 = hyper(b1, state.count), hyper(b2, state.count)
        e, e_root = hyper(eps, state.count), hyper(eps_root, state.count)
        mu = tree_map_checked(fname, lambda g, m: _moment(g, m, beta1, 1), updates, state.mu,
                              names=("updates", "state.mu"))
        nu = tree_map_checked(fname, lambda g, v: _moment(g, v, beta2, 2), updates, state.nu,
                              names=("updates", "state.nu"))
        count = inc_count(state.count)
        bc1, bc2 = _bias_correction(beta1, count), _bias_correction(beta2, count)
        if nesterov:
            bc1_next = _bias_correction(beta1, count + 1)
            b1_ = cast_like(beta1, bc1_next)
            m_hat = fnad.tree_map(lambda g, m: div_as(cast_like(b1_, m) * m, bc1_next)
                                  + div_as(cast_like(1 - b1_, g) * g, bc1), updates, mu)
        else:
            m_hat = fnad.tree_map(lambda m: div_as(m, bc1), mu)
        updates = fnad.tree_map(lambda m, v: m / (fnp.sqrt(div_as(v, bc2) + cast_like(e_root, v))
                                                  + cast_like(e, v)), m_hat, nu)
        return updates, ScaleByAdamState(count=count, mu=mu, nu=nu)

    return transform("scale_by_adam", init, update, ScaleByAdamState)


def _rms_denominator(v, eps, eps_in_sqrt):
    eps = cast_like(eps, v)
    return fnp.sqrt(v + eps) if eps_in_sqrt else fnp.sqrt(v) + eps


def scale_by_rms(decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True,
                 bias_correction=False):
    """RMSprop's scaling: `g / sqrt(v + eps)` with `v` the moving average of `g ** 2`.

    The default puts `eps` inside the square root (optax); `eps_in_sqrt=False` gives
    `g / (sqrt(v) + eps)` as torch.optim.RMSprop.

    Args:
      decay: decay rate of the moving average, in [0, 1).
      eps: the term added to the denominator.
      initial_scale: the starting value of `v`.
      eps_in_sqrt: add `eps` inside the square root.
      bias_correction: divide `v` by `1 - decay ** t`.

    Returns:
      A `GradientTransformation` with a `ScaleByRmsState`.

    Example:
      tx = chain(scale_by_rms(0.99, eps_in_sqrt=False), scale_by_learning_rate(1e-2))
      state = tx.init(params)
    """
    check_unit("scale_by_rms", "decay", decay)
    check_nonneg("scale_by_rms", "eps", eps)

    def init(params):
        return ScaleByRmsState(count=zero_count(params), nu=tree_full_like(params, initial_scale))

    def update(updates, state, params=None):
        d, e = hyper(decay, state.count), hyper(eps, state.count)
        nu = tree_map_checked("scale_by_rms", lambda g, v: _moment(g, v, d, 2), updates,
                              state.nu, names=("updates", "state.nu"))
        count = inc_count(state.count)
        bc = _bias_correction(d, count) if bias_correction else 1
        updates = fnad.tree_map(lambda g, v: g / _rms_denominator(div_as(v, bc), e, eps_in_sqrt),
                                updates, nu)
        return updates, ScaleByRmsState(count=count, nu=nu)

    return transform("scale_by_rms", init, update, ScaleByRmsState)


def scale_by_stddev(decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True,
                    bias_correction=False):
    """Centered RMSprop's scaling: `g / sqrt(v - m ** 2 + eps)` with moving averages `m`, `v`.

    Args:
      decay: decay rate of the moving averages, in [0, 1).
      eps: the term added to the denominator.
      initial_scale: the starting value of `v`.
      eps_in_sqrt: add `eps` inside the square root (False: torch.optim.RMSprop's centered).
      bias_correction: divide `m` and `v` by `1 - decay ** t`.

    Returns:
      A `GradientTransformation` with a `ScaleByStddevState`.

    Example:
      tx = chain(scale_by_stddev(), scale_by_learning_rate(1e-2))
      state = tx.init(params)
    """
    check_unit("scale_by_stddev", "decay", decay)
    check_nonneg("scale_by_stddev", "eps", eps)

    def init(params):
        return ScaleByStddevState(count=zero_count(params), mu=tree_zeros_like(params),
                                  nu=tree_full_like(params, initial_scale))

    def update(updates, state, params=None):
        d, e = hyper(decay, state.count), hyper(eps, state.count)
        names = ("updates", "state.mu")
        mu = tree_map_checked("scale_by_stddev", lambda g, m: _moment(g, m, d, 1), updates,
                              state.mu, names=names)
        nu = tree_map_checked("scale_by_stddev", lambda g, v: _moment(g, v, d, 2), updates,
                              state.nu, names=("updates", "state.nu"))
        count = inc_count(state.count)
        bc = _bias_correction(d, count) if bias_correction else 1

        def step(g, m, v):
            m, v = div_as(m, bc), div_as(v, bc)
            return g / _rms_denominator(v - m * m, e, eps_in_sqrt)

        updates = fnad.tree_map(step, updates, mu, nu)
        return updates, ScaleByStddevState(count=count, mu=mu, nu=nu)

    return transform("scale_by_stddev", init, update, ScaleByStddevState)


def scale_by_adagrad(initial_accumulator_value=0.1, eps=1e-7, *, eps_in_sqrt=True):
    """Adagrad's scaling by the root of the running sum of squared gradients.

    Default (optax): `g / sqrt(s + eps)`, and 0 where `s == 0`. With `eps_in_sqrt=False`:
    `g / (sqrt(s) + eps)` as torch.optim.Adagrad (whose `initial_accumulator_value` is 0).

    Args:
      initial_accumulator_value: the starting sum.
      eps: the term added to the denominator.
      eps_in_sqrt: add `eps` inside the square root.

    Returns:
      A `GradientTransformation` with a `ScaleByAdagradState`.

    Example:
      tx = chain(scale_by_adagrad(0.0, 1e-10, eps_in_sqrt=False), scale_by_learning_rate(0.1))
      state = tx.init(params)
    """
    check_nonneg("scale_by_adagrad", "initial_accumulator_value", initial_accumulator_value)
    check_nonneg("scale_by_adagrad", "eps", eps)

    def init(params):
        return ScaleByAdagradState(count=zero_count(params),
                                   sum_of_squares=tree_full_like(params,
                                                                 initial_accumulator_value))

    def update(updates, state, params=None):
        e = hyper(eps, state.count)
        sums = tree_map_checked("scale_by_adagrad", lambda g, s: s + g * g, updates,
                                state.sum_of_squares, names=("updates", "state.sum_of_squares"))

        def step(g, s):
            e_ = cast_like(e, s)
            if not eps_in_sqrt:
                return g / (fnp.sqrt(s) + e_)
            positive = s > 0
            safe = fnp.where(positive, s, fnp.ones_like(s))
            return fnp.where(positive, g / fnp.sqrt(safe + e_), fnp.zeros_like(g))

        updates = fnad.tree_map(step, updates, sums)
        return updates, ScaleByAdagradState(count=inc_count(state.count), sum_of_squares=sums)

    return transform("scale_by_adagrad", init, update, ScaleByAdagradState)


scale_by_rss = scale_by_adagrad  # optax's name


def scale_by_lion(b1=0.9, b2=0.99):
    """Lion's direction: `sign((1 - b1) * g + b1 * m)`, then `m` moves towards `g` at `b2`.

    Args:
      b1: interpolation weight of the momentum in the direction, in [0, 1).
      b2: decay rate of the momentum, in [0, 1).

    Returns:
      A `GradientTransformation` with a `ScaleByLionState`.

    Example:
      tx = chain(scale_by_lion(), scale_by_learning_rate(1e-4))
      state = tx.init(params)
    """
    check_unit("scale_by_lion", "b1", b1)
    check_unit("scale_by_lion", "b2", b2)

    def init(params):
        return ScaleByLionState(count=zero_count(params), mu=tree_zeros_like(params))

    def update(updates, state, params=None):
        beta1, beta2 = hyper(b1, state.count), hyper(b2, state.count)
        direction = tree_map_checked("scale_by_lion",
                                     lambda g, m: fnp.sign(cast_like(1 - beta1, g) * g
                                                           + cast_like(beta1, m) * m),
                                     updates, state.mu, names=("updates", "state.mu"))
        mu = fnad.tree_map(lambda g, m: _moment(g, m, beta2, 1), updates, state.mu)
        return direction, ScaleByLionState(count=inc_count(state.count), mu=mu)

    return transform("scale_by_lion", init, update, ScaleByLionState)


# ----------------------------------------------------------------------------- using params


def scale_by_trust_ratio(min_norm=0.0, trust_coefficient=1.0, eps=0.0):
    """LAMB/LARS layer-wise scaling by `||param|| / ||update||` (1 where either norm is 0).

    Args:
      min_norm: lower bound for both norms.
      trust_coefficient: multiplies the ratio.
      eps: added to the update norm.

    Returns:
      A stateless `GradientTransformation`; `update` needs `params`.

    Example:
      tx = chain(scale_by_adam(), scale_by_trust_ratio(), scale_by_learning_rate(1e-3))
      updates, state = tx.update(grads, tx.init(params), params)
    """
    def fn(updates, params, min_norm, trust_coefficient, eps):
        require_params("scale_by_trust_ratio", params)
        check_structures("scale_by_trust_ratio", updates, params, names=("updates", "params"))
        # each leaf's norms, over its whole rows where the optimizer state is sharded
        norms = iter(zip(*[map(fnp.sqrt, leaf_square_sums(fnad.tree_leaves(t)))
                           for t in (updates, params)]))

        def step(u, p):
            u_norm, p_norm = next(norms)
            p_norm = fnp.maximum(p_norm, cast_like(min_norm, p))
            u_norm = fnp.maximum(u_norm, cast_like(min_norm, u))
            zero = fnp.logical_or(p_norm == 0, u_norm == 0)
            ratio = trust_coefficient * p_norm / fnp.where(zero, fnp.ones_like(u_norm),
                                                           u_norm + eps)
            return u * cast_like(fnp.where(zero, fnp.ones_like(ratio), ratio), u)

        return tree_map_checked("scale_by_trust_ratio", step, updates, params,
                                names=("updates", "params"))

    return stateless("scale_by_trust_ratio", fn, min_norm=min_norm,
                     trust_coefficient=trust_coefficient, eps=eps)


def add_decayed_weights(weight_decay=0.0, mask=None):
    """Add `weight_decay * params` to the updates (L2 / decoupled weight decay).

    Before an adaptive scaling this is an L2 penalty (torch's `weight_decay` in SGD/Adam);
    after it, just before the learning rate, it is decoupled decay (AdamW).

    Args:
      weight_decay: a non-negative number or a schedule.
      mask: a pytree of bools shaped like the params (True: decay this leaf) or a function
        of the params returning one, so biases and norms can be left out.

    Returns:
      A `GradientTransformation`; `update` needs `params`.

    Example:
      no_bias = lambda p: fnad.tree_map(lambda x: x.ndim > 1, p)
      tx = chain(scale_by_adam(), add_decayed_weights(1e-2, no_bias), scale_by_learning_rate(1e-3))
    """
    check_nonneg("add_decayed_weights", "weight_decay", weight_decay)

    def fn(updates, params, weight_decay):
        require_params("add_decayed_weights", params)
        return tree_map_checked("add_decayed_weights",
                                lambda g, p: g + cast_like(weight_decay, p) * p,
                                updates, params, names=("updates", "params"))

    tx = stateless("add_decayed_weights", fn, weight_decay=weight_decay)
    return tx if mask is None else masked(tx, mask)
