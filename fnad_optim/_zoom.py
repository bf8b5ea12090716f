"""The zoom line search (Nocedal and Wright, algorithms 3.5 and 3.6, with Hager and Zhang's
approximate decrease test), as optax's `scale_by_zoom_linesearch`.

Each trial first finds an interval holding a step with sufficient decrease and small
curvature (the step grows by `increase_factor`), then narrows it by cubic or quadratic
interpolation or bisection. A trial picks its step, evaluates the objective and its gradient
once, and then updates the interval; a search that runs out of trials falls back to the
best step with sufficient decrease seen.
"""

from typing import Any, NamedTuple

import numpy as np

import fnad
import fnad.numpy as fnp

from ._base import inc_count, zero_count
from ._linesearch import (add_scale, first_leaf, line_search, real_dtype, report_failure,
                          scalar, scale_tree, slope_of, tree_where, while_loop)

__all__ = ["scale_by_zoom_linesearch", "ScaleByZoomLinesearchState", "ZoomLinesearchInfo"]


class ZoomLinesearchInfo(NamedTuple):
    """The number of trials of the last search and its decrease and curvature errors
    (0: the criterion holds)."""

    num_linesearch_steps: Any
    decrease_error: Any
    curvature_error: Any


class ScaleByZoomLinesearchState(NamedTuple):
    """The step size found, the objective's value and gradient there, and the search's
    `ZoomLinesearchInfo`."""

    learning_rate: Any
    value: Any
    grad: Any
    info: ZoomLinesearchInfo


class _Search(NamedTuple):
    """The search between trials (the fields of optax's `ZoomLinesearchState`)."""

    count: Any
    params: Any
    updates: Any
    stepsize_guess: Any
    stepsize: Any
    value: Any
    grad: Any
    slope: Any
    value_init: Any
    slope_init: Any
    decrease_error: Any
    curvature_error: Any
    error: Any
    interval_found: Any
    done: Any
    failed: Any
    low: Any
    value_low: Any
    slope_low: Any
    high: Any
    value_high: Any
    slope_high: Any
    cubic_ref: Any
    value_cubic_ref: Any
    safe_stepsize: Any
    safe_value: Any
    safe_grad: Any


def _div(a, b):
    """`a / b`, NaN where `b` is 0 (without a warning: such a point is then not used)."""
    zero = b == 0
    return fnp.where(zero, np.nan, a / fnp.where(zero, 1.0, b))


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    """The critical point of the cubic through (a, fa), (b, fb), (c, fc) with slope fpa at
    a; NaN where there is none."""
    db, dc = b - a, c - a
    x, y = fb - fa - fpa * db, fc - fa - fpa * dc
    denom = (db * dc) ** 2 * (db - dc)
    big_a = _div(dc ** 2 * x + -(db ** 2) * y, denom)
    big_b = _div(-(dc ** 3) * x + db ** 3 * y, denom)
    radical = big_b * big_b - 3.0 * big_a * fpa
    root = fnp.sqrt(fnp.where(radical >= 0, radical, 0.0))
    return fnp.where(radical >= 0, a + _div(-big_b + root, 3.0 * big_a), np.nan)


def _quadmin(a, fa, fpa, b, fb):
    """The critical point of the parabola through (a, fa), (b, fb) with slope fpa at a."""
    db = b - a
    big_b = _div(fb - fa - fpa * db, db ** 2)
    return a - _div(fpa, 2.0 * big_b)


def _pick(pred, new, old):
    return [fnp.where(pred, n, o) for n, o in zip(new, old)]


def scale_by_zoom_linesearch(max_linesearch_steps, max_learning_rate=None, tol=0.0,
                             increase_factor=2.0, slope_rtol=1e-4, curv_rtol=0.9,
                             approx_dec_rtol=1e-6, stepsize_precision=1e-5,
                             initial_guess_strategy="keep", verbose=False):
    """Scale the updates by a step with sufficient decrease and small curvature (strong
    Wolfe conditions), as optax's.

    The step `eta` satisfies `f(w + eta u) <= f(w) + slope_rtol * eta * <u, grad f(w)> + tol`
    (or Hager and Zhang's approximate decrease, for very flat objectives: set
    `approx_dec_rtol=None` to leave it out) and `|<grad f(w + eta u), u>| <= curv_rtol *
    |<grad f(w), u>| + tol`. `update` takes the keyword arguments `value`, `grad`,
    `value_fn` and the keyword arguments of `value_fn`.

    Args:
      max_linesearch_steps: the most trials (objective evaluations) per search.
      max_learning_rate: the largest step, or None for no bound.
      tol: the slack of both criteria.
      increase_factor: the factor the step grows by while looking for an interval.
      slope_rtol: the fraction of the linear decrease required.
      curv_rtol: the fraction of the initial slope the final slope may keep.
      approx_dec_rtol: the relative slack of the approximate decrease test, or None.
      stepsize_precision: below this interval length a step with sufficient decrease is
        taken even without small curvature.
      initial_guess_strategy: "keep" (start from the last step: for gradient descent) or
        "one" (start from 1: for quasi-Newton directions such as L-BFGS's).
      verbose: print why a search failed (eagerly; under `fnad.jit` the errors and the
        trial count are in the state's `info`).

    Returns:
      A `GradientTransformationExtraArgs` with a `ScaleByZoomLinesearchState`.

    Example:
      tx = chain(sgd(1.0), scale_by_zoom_linesearch(15))
      updates, state = tx.update(g, state, params, value=v, grad=g, value_fn=f)
    """
    fname = "scale_by_zoom_linesearch"
    if initial_guess_strategy not in ("keep", "one"):
        raise ValueError(f"{fname}: initial_guess_strategy must be 'keep' or 'one', got "
                         f"{initial_guess_strategy!r}.")

    def decrease_error(eta, value, slope, value_init, slope_init):
        err = value - value_init - slope_rtol * eta * slope_init
        if approx_dec_rtol is not None:
            approx = slope - (2 * slope_rtol - 1.0) * slope_init
            delta = value - value_init - approx_dec_rtol * fnp.abs(value_init)
            err = fnp.minimum(fnp.maximum(approx, delta), err)
        err = fnp.maximum(err, 0.0)
        return fnp.where(fnp.isnan(err), np.inf, err)

    def curvature_error(slope, slope_init):
        err = fnp.maximum(fnp.abs(slope) - curv_rtol * fnp.abs(slope_init), 0.0)
        return fnp.where(fnp.isnan(err), np.inf, err)

    def search_step(s):
        """Algorithm 3.5's next step: the guess, then ever larger, up to the bound."""
        eta = fnp.where(s.count == 0, s.stepsize_guess, increase_factor * s.stepsize)
        if max_learning_rate is None:
            return eta, fnp.zeros_like(eta, dtype=bool)
        return fnp.minimum(eta, max_learning_rate), eta >= max_learning_rate

    def zoom_step(s):
        """Algorithm 3.6's next step: cubic, else quadratic, else bisection."""
        delta = fnp.abs(s.high - s.low)
        left, right = fnp.minimum(s.high, s.low), fnp.maximum(s.high, s.low)
        cubic = _cubicmin(s.low, s.value_low, s.slope_low, s.high, s.value_high,
                          s.cubic_ref, s.value_cubic_ref)
        use_cubic = (cubic > left + 0.2 * delta) & (cubic < right - 0.2 * delta)
        quad = _quadmin(s.low, s.value_low, s.slope_low, s.high, s.value_high)
        use_quad = ~use_cubic & (quad > left + 0.1 * delta) & (quad < right - 0.1 * delta)
        middle = fnp.where(use_cubic, cubic, s.cubic_ref)
        middle = fnp.where(use_quad, quad, middle)
        return fnp.where(~use_cubic & ~use_quad, (s.low + s.high) / 2.0, middle)

    def after_search(s, eta, at_max, value, grad, slope, dec, curv):
        err = fnp.maximum(dec, curv)
        safe = dec <= tol
        safe_new = _pick(safe, [eta, value], [s.safe_stepsize, s.safe_value])
        safe_grad = tree_where(safe, grad, s.safe_grad)
        to_high = (dec > 0.0) | ((value >= s.value) & (s.count > 0))
        to_low = (slope >= 0.0) & ~to_high
        prev, new = [s.stepsize, s.value, s.slope], [eta, value, slope]
        low, value_low, slope_low, high, value_high, slope_high = _pick(
            to_low, new + prev, prev + new)
        found = to_high | to_low | (err <= tol)
        done = (err <= tol) | (at_max & ~found)
        failed = (s.count + 1 >= max_linesearch_steps) & ~done
        return s._replace(
            interval_found=found, done=done, failed=failed, low=low, value_low=value_low,
            slope_low=slope_low, high=high, value_high=value_high, slope_high=slope_high,
            cubic_ref=low, value_cubic_ref=value_low, safe_stepsize=safe_new[0],
            safe_value=safe_new[1], safe_grad=safe_grad)

    def after_zoom(s, eta, value, grad, slope, dec, curv):
        err = fnp.maximum(dec, curv)
        better = (dec <= tol) & (value < s.safe_value)
        safe_eta, safe_value = _pick(better, [eta, value], [s.safe_stepsize, s.safe_value])
        safe_grad = tree_where(better, grad, s.safe_grad)
        done = err <= tol
        to_middle = (dec > 0.0) | (value >= s.value_low)
        high_to_low = (slope * (s.high - s.low) >= 0.0) & ~to_middle
        mid, low, high = [eta, value, slope], [s.low, s.value_low, s.slope_low], \
            [s.high, s.value_high, s.slope_high]
        new_high = _pick(high_to_low, low, _pick(to_middle, mid, high))
        new_low = _pick(~to_middle, mid, low)
        ref = _pick(to_middle | high_to_low, high[:2], low[:2])
        too_small = fnp.abs(s.high - s.low) <= stepsize_precision
        failed = ((s.count + 1 >= max_linesearch_steps) | (too_small & (safe_eta > 0.0))) \
            & ~done
        return s._replace(
            done=done, failed=failed, low=new_low[0], value_low=new_low[1],
            slope_low=new_low[2], high=new_high[0], value_high=new_high[1],
            slope_high=new_high[2], cubic_ref=ref[0], value_cubic_ref=ref[1],
            safe_stepsize=safe_eta, safe_value=safe_value, safe_grad=safe_grad)

    def trial(s, value_and_grad):
        dtype = s.value_init.dtype
        zooming = s.interval_found
        eta_search, at_max = search_step(s)
        if isinstance(zooming, np.ndarray) or isinstance(zooming, (bool, np.bool_)):
            eta = zoom_step(s) if bool(zooming) else eta_search
        else:
            eta = fnp.where(zooming, zoom_step(s), eta_search)
        eta = scalar(eta, dtype)
        value, grad = value_and_grad(add_scale(s.params, eta, s.updates))
        value = scalar(value, dtype)
        slope = scalar(slope_of(grad, s.updates), dtype)
        dec = scalar(decrease_error(eta, value, slope, s.value_init, s.slope_init), dtype)
        curv = scalar(curvature_error(slope, s.slope_init), dtype)
        args = (value, grad, slope, dec, curv)
        if isinstance(zooming, (np.ndarray, bool, np.bool_)):
            s = after_zoom(s, eta, *args) if bool(zooming) else after_search(
                s, eta, at_max, *args)
        else:
            s = tree_where(zooming, after_zoom(s, eta, *args),
                           after_search(s, eta, at_max, *args))
        s = s._replace(count=inc_count(s.count), stepsize=eta, value=value, grad=grad,
                       slope=slope, decrease_error=dec, curvature_error=curv,
                       error=fnp.maximum(dec, curv))
        return _fall_back(s)

    def init(params):
        dtype, like = real_dtype(params), first_leaf(params)
        inf = scalar(np.inf, dtype, like)
        return ScaleByZoomLinesearchState(
            learning_rate=scalar(1.0, dtype, like), value=inf,
            grad=fnad.tree_map(fnp.zeros_like, params),
            info=ZoomLinesearchInfo(zero_count(params), inf, inf))

    def search(updates, state, params, value, grad, value_fn, fn_kwargs):
        dtype = real_dtype(params)
        value_and_grad = fnad.value_and_grad(lambda p: value_fn(p, **fn_kwargs))
        guess = state.learning_rate if initial_guess_strategy == "keep" else 1.0
        like = first_leaf(params)
        value, slope = scalar(value, dtype, like), scalar(slope_of(updates, grad), dtype)
        zero, inf = scalar(0.0, dtype, like), scalar(np.inf, dtype, like)
        no = fnp.zeros_like(zero, dtype=bool)
        start = _Search(
            count=zero_count(params), params=params, updates=updates,
            stepsize_guess=scalar(guess, dtype, like), stepsize=zero, value=value, grad=grad,
            slope=slope, value_init=value, slope_init=slope, decrease_error=inf,
            curvature_error=inf, error=inf, interval_found=no, done=no, failed=no, low=zero,
            value_low=value, slope_low=slope, high=zero, value_high=value, slope_high=slope,
            cubic_ref=zero, value_cubic_ref=value, safe_stepsize=zero, safe_value=value,
            safe_grad=grad)
        end = while_loop(lambda s: ~(s.done | s.failed),
                         lambda s: trial(s, value_and_grad), start)
        if verbose:
            report_failure(fname, end.error > tol, end.slope_init, step_size=end.stepsize,
                           value=value, decrease_error=end.decrease_error,
                           curvature_error=end.curvature_error)
        info = ZoomLinesearchInfo(end.count, end.decrease_error, end.curvature_error)
        new_state = ScaleByZoomLinesearchState(end.stepsize, end.value, end.grad, info)
        return scale_tree(end.stepsize, updates), new_state

    return line_search(fname, init, search, ScaleByZoomLinesearchState)


def _fall_back(s):
    """A failed search takes the best step with sufficient decrease seen (or, where every
    step tried gave NaN or infinity, its last)."""
    use_safe = s.failed & ((s.safe_stepsize > 0.0) | fnp.isinf(s.decrease_error))
    eta, value = _pick(use_safe, [s.safe_stepsize, s.safe_value], [s.stepsize, s.value])
    return s._replace(stepsize=eta, value=value, grad=tree_where(use_safe, s.safe_grad, s.grad))
