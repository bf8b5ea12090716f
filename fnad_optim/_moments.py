"""Adam's relatives with optax's names, defaults and state layouts: AMSGrad, Adamax,
AdaBelief, Yogi, RAdam, AdaDelta, Adan, NovoGrad, SM3 and the EMA of the updates."""

from typing import Any, NamedTuple

import fnad
import fnad.numpy as fnp

from ._base import (cast_like, check_unit, div_as, hyper, inc_count, require_params,
                    transform, tree_full_like, tree_map_checked, tree_zeros_like, zero_count)
from ._base import bias_correction as _bias_correction
from ._transforms import ScaleByAdamState

__all__ = ["ScaleByAmsgradState", "ScaleByBeliefState", "ScaleByAdaDeltaState",
           "ScaleByAdanState", "ScaleByNovogradState", "ScaleBySM3State", "EmaState",
           "scale_by_amsgrad", "scale_by_adamax", "scale_by_belief", "scale_by_yogi",
           "scale_by_radam", "scale_by_adadelta", "scale_by_adan", "scale_by_novograd",
           "scale_by_sm3", "ema"]

_NAMES = ("updates", "state")


class ScaleByAmsgradState(NamedTuple):
    """Step count, moments `mu` and `nu`, and the running maximum `nu_max` of `nu`."""

    count: Any
    mu: Any
    nu: Any
    nu_max: Any


class ScaleByBeliefState(NamedTuple):
    """Step count, first moment `mu` and the moment of the prediction error `nu`."""

    count: Any
    mu: Any
    nu: Any


class ScaleByAdaDeltaState(NamedTuple):
    """Moving averages of the squared gradients `e_g` and squared steps `e_x`."""

    e_g: Any
    e_x: Any


class ScaleByAdanState(NamedTuple):
    """Adan's moments `m`, `v`, `n`, the previous gradient `g` and the step count `t`."""

    m: Any
    v: Any
    n: Any
    g: Any
    t: Any


class ScaleByNovogradState(NamedTuple):
    """Step count, first moment `mu` and the per-leaf second moment `nu` (0-d per leaf)."""

    count: Any
    mu: Any
    nu: Any


class ScaleBySM3State(NamedTuple):
    """SM3's per-axis accumulators `mu` (a list per leaf) and momentum `nu`."""

    mu: Any
    nu: Any


class EmaState(NamedTuple):
    """Step count and the exponential moving average `ema` of the updates."""

    count: Any
    ema: Any


def _moment(g, m, decay, order):
    decay = cast_like(decay, m)
    return (1 - decay) * (g if order == 1 else g * g) + decay * m


def _moments(fname, updates, state_tree, decay, order, what):
    return tree_map_checked(fname, lambda g, m: _moment(g, m, decay, order), updates,
                            state_tree, names=("updates", what))


def _adam_init(params):
    return ScaleByAdamState(count=zero_count(params), mu=tree_zeros_like(params),
                            nu=tree_zeros_like(params))


def _debiased(tree, decay, count):
    bc = _bias_correction(decay, count)
    return fnad.tree_map(lambda m: div_as(m, bc), tree)


def _nesterov_mu(updates, mu, b1, count):
    """NAdam's first moment: `b1 * mu / (1 - b1 ** (t + 1)) + (1 - b1) * g / (1 - b1 ** t)`."""
    nxt, now = _debiased(mu, b1, inc_count(count)), _debiased(updates, b1, count)
    return fnad.tree_map(lambda m, g: cast_like(b1, m) * m + cast_like(1 - b1, g) * g, nxt, now)


def _zeros_in(params, dtype):
    """Zeros like the params, in `dtype` (None: each param's own)."""
    return tree_zeros_like(params) if dtype is None else fnad.tree_map(
        lambda p: fnp.zeros_like(p, dtype=dtype), params)


def _cast_tree(tree, dtype):
    """`tree` with its leaves in `dtype` (None: unchanged)."""
    return tree if dtype is None else fnad.tree_map(lambda m: fnp.astype(m, dtype), tree)


def _check_betas(fname, **betas):
    for k, v in betas.items():
        check_unit(fname, k, v)


def scale_by_amsgrad(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None,
                     bias_correction_mu=True, bias_correction_nu=True):
    """AMSGrad (Reddi et al. 2018): Adam dividing by the running maximum of the (debiased)
    second moment.

    Returns:
      A `GradientTransformation` with a `ScaleByAmsgradState`.

    Example:
      tx = chain(scale_by_amsgrad(), scale_by_learning_rate(1e-3))
    """
    fname = "scale_by_amsgrad"
    _check_betas(fname, b1=b1, b2=b2)

    def init(params):
        mu = _zeros_in(params, mu_dtype)
        return ScaleByAmsgradState(zero_count(params), mu, tree_zeros_like(params),
                                   tree_zeros_like(params))

    def update(updates, state, params=None):
        mu = _moments(fname, updates, state.mu, b1, 1, "state.mu")
        nu = _moments(fname, updates, state.nu, b2, 2, "state.nu")
        count = inc_count(state.count)
        mu_hat = _debiased(mu, b1, count) if bias_correction_mu else mu
        nu_eff = _debiased(nu, b2, count) if bias_correction_nu else nu
        nu_max = fnad.tree_map(fnp.maximum, state.nu_max, nu_eff)
        updates = fnad.tree_map(lambda m, v: m / (fnp.sqrt(v + eps_root) + eps), mu_hat, nu_max)
        mu = _cast_tree(mu, mu_dtype)
        return updates, ScaleByAmsgradState(count, mu, nu, nu_max)

    return transform(fname, init, update, ScaleByAmsgradState)


def scale_by_adamax(b1=0.9, b2=0.999, eps=1e-8):
    """Adamax (Kingma and Ba 2015): Adam with the infinity norm, `m_hat / max(|g| + eps,
    b2 * u)`.

    Returns:
      A `GradientTransformation` with a `ScaleByAdamState` (`nu` is the infinity moment).

    Example:
      tx = chain(scale_by_adamax(), scale_by_learning_rate(2e-3))
    """
    fname = "scale_by_adamax"
    _check_betas(fname, b1=b1, b2=b2)

    def update(updates, state, params=None):
        count = inc_count(state.count)
        mu = _moments(fname, updates, state.mu, b1, 1, "state.mu")
        nu = tree_map_checked(fname, lambda g, u: fnp.maximum(fnp.abs(g) + eps,
                                                               cast_like(b2, u) * u),
                              updates, state.nu, names=("updates", "state.nu"))
        updates = fnad.tree_map(lambda m, v: m / v, _debiased(mu, b1, count), nu)
        return updates, ScaleByAdamState(count, mu, nu)

    return transform(fname, _adam_init, update, ScaleByAdamState)


def scale_by_belief(b1=0.9, b2=0.999, eps=1e-16, eps_root=1e-16, *, nesterov=False):
    """AdaBelief (Zhuang et al. 2020): Adam whose second moment is that of `g - mu`, the
    surprise of the gradient.

    Returns:
      A `GradientTransformation` with a `ScaleByBeliefState`.

    Example:
      tx = chain(scale_by_belief(), scale_by_learning_rate(1e-3))
    """
    fname = "scale_by_belief"
    _check_betas(fname, b1=b1, b2=b2)

    def init(params):
        return ScaleByBeliefState(zero_count(params), tree_zeros_like(params),
                                  tree_zeros_like(params))

    def update(updates, state, params=None):
        mu = _moments(fname, updates, state.mu, b1, 1, "state.mu")
        err = fnad.tree_map(lambda g, m: g - m, updates, mu)
        nu = fnad.tree_map(lambda e, v: _moment(e, v, b2, 2) + eps_root, err, state.nu)
        count = inc_count(state.count)
        mu_hat = _nesterov_mu(updates, mu, b1, count) if nesterov else _debiased(mu, b1, count)
        updates = fnad.tree_map(lambda m, v: m / (fnp.sqrt(v) + eps), mu_hat,
                                _debiased(nu, b2, count))
        return updates, ScaleByBeliefState(count, mu, nu)

    return transform(fname, init, update, ScaleByBeliefState)


def scale_by_yogi(b1=0.9, b2=0.999, eps=1e-3, eps_root=0.0, initial_accumulator_value=1e-6):
    """Yogi (Zaheer et al. 2018): Adam whose second moment moves additively,
    `v -= (1 - b2) * sign(v - g ** 2) * g ** 2`.

    Returns:
      A `GradientTransformation` with a `ScaleByAdamState`.

    Example:
      tx = chain(scale_by_yogi(), scale_by_learning_rate(1e-2))
    """
    fname = "scale_by_yogi"
    _check_betas(fname, b1=b1, b2=b2)

    def init(params):
        return ScaleByAdamState(zero_count(params),
                                tree_full_like(params, initial_accumulator_value),
                                tree_full_like(params, initial_accumulator_value))

    def update(updates, state, params=None):
        mu = _moments(fname, updates, state.mu, b1, 1, "state.mu")
        nu = fnad.tree_map(lambda g, v: v - (1 - b2) * fnp.sign(v - g * g) * (g * g), updates,
                           state.nu)
        count = inc_count(state.count)
        updates = fnad.tree_map(lambda m, v: m / (fnp.sqrt(v + eps_root) + eps),
                                _debiased(mu, b1, count), _debiased(nu, b2, count))
        return updates, ScaleByAdamState(count, mu, nu)

    return transform(fname, init, update, ScaleByAdamState)


def scale_by_radam(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, threshold=5.0, *,
                   nesterov=False):
    """Rectified Adam (Liu et al. 2020): the first moment alone while the variance estimate
    is unreliable (the approximated SMA length `ro < threshold`), then Adam scaled by the
    rectification factor.

    Returns:
      A `GradientTransformation` with a `ScaleByAdamState`.

    Example:
      tx = chain(scale_by_radam(), scale_by_learning_rate(1e-3))
    """
    fname = "scale_by_radam"
    _check_betas(fname, b1=b1, b2=b2)
    ro_inf = 2.0 / (1.0 - b2) - 1.0

    def update(updates, state, params=None):
        mu = _moments(fname, updates, state.mu, b1, 1, "state.mu")
        nu = _moments(fname, updates, state.nu, b2, 2, "state.nu")
        count = inc_count(state.count)
        b2t = b2 ** count
        ro = ro_inf - 2 * count * b2t / (1 - b2t)
        mu_hat = _nesterov_mu(updates, mu, b1, count) if nesterov else _debiased(mu, b1, count)
        nu_hat = _debiased(nu, b2, count)
        # the rectification is nan for ro <= 4; only the selected branch is kept
        safe_ro = fnp.where(ro >= threshold, ro, fnp.full_like(ro, ro_inf))
        r = fnp.sqrt((safe_ro - 4.0) * (safe_ro - 2.0) * ro_inf
                     / ((ro_inf - 4.0) * (ro_inf - 2.0) * safe_ro))
        updates = fnad.tree_map(
            lambda m, v: fnp.where(ro >= threshold,
                                   cast_like(r, m) * m / (fnp.sqrt(v + eps_root) + eps), m),
            mu_hat, nu_hat)
        return updates, ScaleByAdamState(count, mu, nu)

    return transform(fname, _adam_init, update, ScaleByAdamState)


def scale_by_adadelta(rho=0.9, eps=1e-6):
    """AdaDelta (Zeiler 2012): `g * sqrt(e_x + eps) / sqrt(e_g + eps)` with moving averages
    of squared gradients `e_g` and squared steps `e_x`.

    Returns:
      A `GradientTransformation` with a `ScaleByAdaDeltaState`.

    Example:
      tx = chain(scale_by_adadelta(), scale_by_learning_rate(1.0))
    """
    fname = "scale_by_adadelta"
    check_unit(fname, "rho", rho)

    def init(params):
        return ScaleByAdaDeltaState(tree_zeros_like(params), tree_zeros_like(params))

    def update(updates, state, params=None):
        e_g = _moments(fname, updates, state.e_g, rho, 2, "state.e_g")
        updates = fnad.tree_map(lambda g, eg, ex: fnp.sqrt(ex + eps) / fnp.sqrt(eg + eps) * g,
                                updates, e_g, state.e_x)
        e_x = fnad.tree_map(lambda u, ex: _moment(u, ex, rho, 2), updates, state.e_x)
        return updates, ScaleByAdaDeltaState(e_g, e_x)

    return transform(fname, init, update, ScaleByAdaDeltaState)


def scale_by_adan(b1=0.98, b2=0.92, b3=0.99, eps=1e-8, eps_root=0.0):
    """Adan (Xie et al. 2022): Nesterov-style moments of the gradient, of its difference from
    the previous one, and of their combination squared.

    Returns:
      A `GradientTransformation` with a `ScaleByAdanState`.

    Example:
      tx = chain(scale_by_adan(), scale_by_learning_rate(1e-3))
    """
    fname = "scale_by_adan"
    _check_betas(fname, b1=b1, b2=b2, b3=b3)

    def init(params):
        z = tree_zeros_like
        return ScaleByAdanState(z(params), z(params), z(params), z(params), zero_count(params))

    def update(updates, state, params=None):
        first = state.t == 0
        diff = tree_map_checked(fname, lambda g, p: fnp.where(first, fnp.zeros_like(g), g - p),
                                updates, state.g, names=("updates", "state.g"))
        m = fnad.tree_map(lambda g, m: _moment(g, m, b1, 1), updates, state.m)
        v = fnad.tree_map(lambda d, v: _moment(d, v, b2, 1), diff, state.v)
        sq = fnad.tree_map(lambda g, d: g + (1 - b2) * d, updates, diff)
        n = fnad.tree_map(lambda s, n: _moment(s, n, b3, 2), sq, state.n)
        t = inc_count(state.t)
        m_hat, v_hat, n_hat = _debiased(m, b1, t), _debiased(v, b2, t), _debiased(n, b3, t)
        out = fnad.tree_map(lambda a, b, c: (a + (1 - b2) * b) / (fnp.sqrt(c + eps_root) + eps),
                            m_hat, v_hat, n_hat)
        return out, ScaleByAdanState(m, v, n, updates, t)

    return transform(fname, init, update, ScaleByAdanState)


def scale_by_novograd(b1=0.9, b2=0.25, eps=1e-8, eps_root=0.0, weight_decay=0.0,
                      mu_dtype=None):
    """NovoGrad (Ginsburg et al. 2019): a second moment per leaf (of its squared norm), the
    gradient divided by its root, plus weight decay, into a momentum.

    Returns:
      A `GradientTransformation` with a `ScaleByNovogradState`; `update` needs the params.

    Example:
      tx = chain(scale_by_novograd(), scale_by_learning_rate(1e-3))
    """
    fname = "scale_by_novograd"
    _check_betas(fname, b1=b1, b2=b2)

    def init(params):
        mu = _zeros_in(params, mu_dtype)
        nu = fnad.tree_map(lambda p: fnp.zeros_like(p, shape=()), params)
        return ScaleByNovogradState(zero_count(params), mu, nu)

    def update(updates, state, params=None):
        require_params(fname, params)
        count = inc_count(state.count)
        first = count == 1
        wd = hyper(weight_decay, state.count)
        nu = tree_map_checked(
            fname, lambda g, n: fnp.where(first, fnp.sum(g * g), _moment(fnp.sum(g * g), n, b2,
                                                                         1)),
            updates, state.nu, names=("updates", "state.nu"))
        add = fnad.tree_map(lambda g, p, n: g / (fnp.sqrt(n + eps_root) + eps)
                            + cast_like(wd, p) * p, updates, params, nu)
        mu = fnad.tree_map(lambda a, m: fnp.where(first, a, cast_like(b1, m) * m + a), add,
                           state.mu)
        mu = _cast_tree(mu, mu_dtype)
        return mu, ScaleByNovogradState(count, mu, nu)

    return transform(fname, init, update, ScaleByNovogradState)


def scale_by_sm3(b1=0.9, b2=1.0, eps=1e-8):
    """SM3 (Anil et al. 2019): memory-efficient adaptivity with one accumulator per axis of
    each leaf (the per-coordinate accumulator is the minimum over the axes' covers).

    Returns:
      A `GradientTransformation` with a `ScaleBySM3State`.

    Example:
      tx = chain(scale_by_sm3(), scale(-1e-2))
    """
    fname = "scale_by_sm3"

    def init(params):
        for p in fnad.tree_leaves(params):
            if fnp.iscomplexobj(p):
                raise ValueError(f"{fname}: complex params are not supported.")
        mu = fnad.tree_map(lambda p: [fnp.zeros_like(p, shape=(p.shape[i],))
                                      for i in range(p.ndim)], params)
        return ScaleBySM3State(mu, tree_zeros_like(params))

    def expanded(g, vs):
        return [fnp.reshape(v, [1] * i + [g.shape[i]] + [1] * (g.ndim - i - 1))
                for i, v in enumerate(vs)]

    def accum(g, vs):
        c0, c1 = (1.0 - b2 if b2 != 1.0 else 1.0), b2
        if g.ndim < 2:
            return c0 * g ** 2 + c1 * vs[0]
        low = vs[0]
        for v in vs[1:]:
            low = fnp.minimum(low, v)
        return c0 * g ** 2 + c1 * low

    def new_mu(a, i):
        if a.ndim < 2:
            return a
        return fnp.max(a, axis=tuple(j for j in range(a.ndim) if j != i))

    def update(updates, state, params=None):
        leaves, treedef = fnad.tree_flatten(updates)
        flat = iter(fnad.tree_leaves(state.mu))  # each leaf's accumulators, one per axis
        mus = [[next(flat) for _ in range(g.ndim)] for g in leaves]
        acc = [accum(g, expanded(g, vs)) for g, vs in zip(leaves, mus)]
        up = [g * fnp.where(a > 0, 1 / fnp.sqrt(fnp.where(a > 0, a, 1.0) + eps), 0.0)
              for g, a in zip(leaves, acc)]
        nu = tree_map_checked(fname, lambda u, n: _moment(u, n, b1, 1), treedef.unflatten(up),
                              state.nu, names=("updates", "state.nu"))
        mu = treedef.unflatten([[new_mu(a, i) for i in range(a.ndim)] for a in acc])
        return nu, ScaleBySM3State(mu, nu)

    return transform(fname, init, update, ScaleBySM3State)


def ema(decay, debias=True, accumulator_dtype=None):
    """The exponential moving average of the updates, debiased by `1 - decay ** t` unless
    `debias=False`.

    Returns:
      A `GradientTransformation` with an `EmaState`.

    Example:
      tx = chain(ema(0.9), scale_by_learning_rate(1e-2))   # momentum as an average
    """
    check_unit("ema", "decay", decay)

    def init(params):
        acc = _zeros_in(params, accumulator_dtype)
        return EmaState(zero_count(params), acc)

    def update(updates, state, params=None):
        d = hyper(decay, state.count)
        new = _moments("ema", updates, state.ema, d, 1, "state.ema")
        count = inc_count(state.count)
        out = _debiased(new, d, count) if debias else new
        new = _cast_tree(new, accumulator_dtype)
        return out, EmaState(count, new)

    return transform("ema", init, update, EmaState)
