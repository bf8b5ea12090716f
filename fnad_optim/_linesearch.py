"""Line searches: the backtracking (Armijo) search, the pieces the zoom search (`_zoom.py`)
shares with it, and `value_and_grad_from_state`.

A line search is a `GradientTransformationExtraArgs`: its `update` takes the objective's
`value` and `grad` at the params and `value_fn`, and calls `value_fn` at trial params along
the updates. Its loop runs in Python on concrete values and as one `fnad.lax.while_loop`
under `fnad.jit`, so a whole L-BFGS step can be staged.
"""

import inspect
from typing import Any, NamedTuple

import numpy as np

import fnad
import fnad.numpy as fnp
from fnad.extend import Tracer

from ._base import (GradientTransformationExtraArgs, cast_like, check_state, require_params,
                    zero_count)
from ._refuse import refuse_on_rows

__all__ = ["scale_by_backtracking_linesearch", "ScaleByBacktrackingLinesearchState",
           "BacktrackingLinesearchInfo", "value_and_grad_from_state"]


class BacktrackingLinesearchInfo(NamedTuple):
    """The number of trials of the last search and its decrease error (0: sufficient
    decrease reached)."""

    num_linesearch_steps: Any
    decrease_error: Any


class ScaleByBacktrackingLinesearchState(NamedTuple):
    """The step size found, the objective's value there, its gradient there (None unless
    `store_grad`) and the search's `BacktrackingLinesearchInfo`."""

    learning_rate: Any
    value: Any
    grad: Any
    info: BacktrackingLinesearchInfo


# ----------------------------------------------------------------------------- shared


def real_dtype(params):
    """The real dtype of the first leaf of `params` (float32 for complex64 leaves)."""
    leaves = fnad.tree_leaves(params)
    return np.empty((), fnp.asarray(leaves[0]).dtype).real.dtype if leaves else np.float64


def first_leaf(tree):
    """The first leaf of `tree` (None if it has none): new state arrays go to its device."""
    leaves = fnad.tree_leaves(tree)
    return leaves[0] if leaves else None


def scalar(x, dtype, like=None, shape=()):
    """`x` as an array of `shape` and `dtype`; a Python number on the device of `like`."""
    if like is not None and isinstance(x, (bool, int, float)):
        return fnp.full_like(like, x, dtype=dtype, shape=shape)
    return fnp.broadcast_to(fnp.asarray(x, dtype=dtype), shape)


def slope_of(updates, grad):
    """The derivative of `eta -> f(params + eta * updates)` where `grad` is f's gradient:
    the real part of the sum over leaves of `updates * grad`."""
    total = 0.0
    for u, g in zip(fnad.tree_leaves(updates), fnad.tree_leaves(grad)):
        if fnp.iscomplexobj(u) or fnp.iscomplexobj(g):
            total = total + fnp.real(fnp.vdot(fnp.conj(u), g))
        else:
            total = total + fnp.vdot(u, g)
    return total


def add_scale(params, eta, updates):
    """`params + eta * updates`, leaf by leaf, in the params' dtypes."""
    return fnad.tree_map(lambda p, u: cast_like(p + cast_like(eta, u) * u, p), params, updates)


def scale_tree(eta, updates):
    return fnad.tree_map(lambda u: cast_like(eta, u) * u, updates)


def tree_where(pred, a, b):
    return fnad.tree_map(lambda x, y: fnp.where(pred, x, y), a, b)


def _traced(tree):
    return any(isinstance(x, Tracer) for x in fnad.tree_leaves(tree))


def while_loop(cond_fun, body_fun, val):
    """`while cond_fun(val): val = body_fun(val)`: a Python loop while the condition is
    concrete, one `fnad.lax.while_loop` from the first traced one on."""
    while True:
        go = cond_fun(val)
        if isinstance(go, Tracer) or _traced(val):
            return fnad.lax.while_loop(cond_fun, body_fun, val)
        if not bool(go):
            return val
        val = body_fun(val)


def split_kwargs(fname, value_fn, extra_args):
    """The extra args `value_fn` takes (by its signature); a TypeError names the others."""
    try:
        params = inspect.signature(value_fn).parameters.values()
    except (TypeError, ValueError):
        return dict(extra_args)
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return dict(extra_args)
    names = {p.name for p in params}
    left = sorted(k for k in extra_args if k not in names)
    if left:
        raise TypeError(f"{fname}.update: got extra keyword arguments {left} that value_fn "
                        "does not take; pass only value, grad, value_fn and the keyword "
                        "arguments of value_fn (its data, say).")
    return dict(extra_args)


def check_search_args(fname, params, value, grad, value_fn):
    require_params(fname, params)
    missing = [n for n, v in (("value", value), ("grad", grad), ("value_fn", value_fn))
               if v is None]
    if missing:
        raise TypeError(
            f"{fname}.update: missing the keyword arguments {missing}; a line search needs "
            "update(updates, state, params, value=f(params), grad=grad_f(params), "
            "value_fn=f, **data_of_f) (value, grad = fnad.value_and_grad(f)(params), or "
            "value_and_grad_from_state(f)(params, state=state)).")
    if not callable(value_fn):
        raise TypeError(f"{fname}.update: value_fn must be the objective, a function of "
                        f"the params, got a {type(value_fn).__name__}.")


def report_failure(fname, failed, slope, **values):
    """Print why the search `fname` failed, if `failed` (a concrete flag; under `fnad.jit`
    nothing is printed: read the state's `info`)."""
    if _traced([failed, slope, values]) or not bool(failed):
        return
    shown = ", ".join(f"{k.replace('_', ' ')} {float(v):.6g}" for k, v in values.items())
    hint = ("the updates are not a descent direction (slope >= 0 along them): check their sign"
            if not float(slope) < 0 else "try more steps, or float64 for tiny step sizes")
    print(f"{fname}: no step size met the criteria ({shown}, slope {float(slope):.6g}); "
          f"{hint}.")


def line_search(fname, init, search, state_type):
    """A `GradientTransformationExtraArgs` of `init` and `search(updates, state, params,
    value, grad, value_fn, fn_kwargs)`, behind the argument checks; refused by ZeRO."""
    why = (f"{fname} evaluates the objective at whole trial params, so it may not run on "
           "one process's rows of each leaf")

    def checked_init(params):
        refuse_on_rows(why)
        return init(params)

    def update(updates, state, params=None, *, value=None, grad=None, value_fn=None,
               **extra_args):
        refuse_on_rows(why)
        if type(state) is not state_type:
            check_state(fname, state, state_type)
        check_search_args(fname, params, value, grad, value_fn)
        fn_kwargs = split_kwargs(fname, value_fn, extra_args)
        return search(updates, state, params, value, grad, value_fn, fn_kwargs)

    update.__qualname__ = f"{fname}.update"
    checked_init.__qualname__ = f"{fname}.init"
    return GradientTransformationExtraArgs(checked_init, update)


# ----------------------------------------------------------------------------- backtracking


class _Trial(NamedTuple):
    learning_rate: Any
    new_value: Any
    new_grad: Any
    decrease_error: Any
    iter_num: Any


def scale_by_backtracking_linesearch(max_backtracking_steps, slope_rtol=1e-4,
                                     decrease_factor=0.8, increase_factor=1.5,
                                     max_learning_rate=1.0, atol=0.0, rtol=0.0,
                                     store_grad=False, verbose=False):
    """Scale the updates by a step size with sufficient decrease (Armijo), as optax's.

    From `min(increase_factor * previous step, max_learning_rate)` the step `eta` is
    multiplied by `decrease_factor` until `f(w + eta u) <= (1 + rtol) f(w) + eta *
    slope_rtol * <u, grad f(w)> + atol`, at most `max_backtracking_steps` times. A step
    whose objective is NaN or infinite everywhere tried becomes 0. `update` takes the keyword
    arguments `value`, `grad`, `value_fn` and the keyword arguments of `value_fn`.

    Args:
      max_backtracking_steps: the most decreases of the step per search.
      slope_rtol: the fraction of the linear decrease required.
      decrease_factor: the factor a rejected step is multiplied by.
      increase_factor: the factor the previous step is multiplied by to start a search.
      max_learning_rate: the largest step.
      atol, rtol: absolute and relative slack of the criterion.
      store_grad: keep the gradient at the accepted step in the state (for
        `value_and_grad_from_state`).
      verbose: print why a search failed (eagerly; under `fnad.jit` read the state's
        `info`).

    Returns:
      A `GradientTransformationExtraArgs` with a `ScaleByBacktrackingLinesearchState`.

    Example:
      tx = chain(sgd(1.0), scale_by_backtracking_linesearch(15))
      updates, state = tx.update(g, state, params, value=v, grad=g, value_fn=f)
    """
    fname = "scale_by_backtracking_linesearch"

    def init(params):
        dtype, like = real_dtype(params), first_leaf(params)
        grad = fnad.tree_map(fnp.zeros_like, params) if store_grad else None
        return ScaleByBacktrackingLinesearchState(
            learning_rate=scalar(1.0, dtype, like), value=scalar(np.inf, dtype, like),
            grad=grad, info=BacktrackingLinesearchInfo(zero_count(params),
                                                       scalar(np.inf, dtype, like)))

    def decrease_error(eta, slope, value, new_value):
        err = new_value - (1.0 + rtol) * value - eta * slope_rtol * slope
        err = fnp.where(fnp.isnan(err), np.inf, err)
        return fnp.maximum(err, 0.0)

    def search(updates, state, params, value, grad, value_fn, fn_kwargs):
        dtype = real_dtype(params)
        slope = slope_of(updates, grad)
        fun = lambda p: value_fn(p, **fn_kwargs)
        value_and_grad = fnad.value_and_grad(fun)

        def go_on(t):
            return ~(t.decrease_error <= atol) & (t.iter_num <= max_backtracking_steps)

        def trial(t):
            eta = fnp.where(t.iter_num > 0, decrease_factor * t.learning_rate,
                            t.learning_rate)
            new_params = add_scale(params, eta, updates)
            if store_grad:
                new_value, g = value_and_grad(new_params)
                err = decrease_error(eta, slope, value, new_value)
                last = (err <= atol) | (t.iter_num == max_backtracking_steps)
                new_grad = tree_where(last, g, t.new_grad)
            else:
                new_value, new_grad = fun(new_params), t.new_grad
                err = decrease_error(eta, slope, value, new_value)
            return _Trial(scalar(eta, dtype), scalar(new_value, dtype), new_grad,
                          scalar(err, dtype), t.iter_num + 1)

        eta0 = fnp.minimum(increase_factor * state.learning_rate, max_learning_rate)
        like = first_leaf(params)
        start = _Trial(scalar(eta0, dtype, like), scalar(value, dtype, like),
                       fnad.tree_map(fnp.zeros_like, params), scalar(np.inf, dtype, like),
                       zero_count(params))
        end = while_loop(go_on, trial, start)
        eta = fnp.where(fnp.isinf(end.decrease_error), 0.0, end.learning_rate)
        if verbose:
            report_failure(fname, end.decrease_error > atol, slope, step_size=eta,
                           value=value, decrease_error=end.decrease_error)
        info = BacktrackingLinesearchInfo(end.iter_num, end.decrease_error)
        new_state = ScaleByBacktrackingLinesearchState(
            eta, end.new_value, end.new_grad if store_grad else None, info)
        return scale_tree(eta, updates), new_state

    return line_search(fname, init, search, ScaleByBacktrackingLinesearchState)


# ----------------------------------------------------------------------------- from state


def _fields(tree, name, found):
    """Append to `found` every field `name` of the NamedTuples inside `tree`."""
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        if name in tree._fields:
            found.append(getattr(tree, name))
        for f in tree._fields:
            if f != name:
                _fields(getattr(tree, f), name, found)
    elif isinstance(tree, (tuple, list)):
        for x in tree:
            _fields(x, name, found)
    elif isinstance(tree, dict):
        for x in tree.values():
            _fields(x, name, found)
    return found


def _one_field(state, name):
    found = _fields(state, name, [])
    if len(found) != 1 or found[0] is None:
        what = "no" if not found or found[0] is None else f"{len(found)}"
        raise ValueError(
            f"value_and_grad_from_state: the optimizer state holds {what} '{name}' field(s); "
            "it needs exactly one value and one grad: a line search's state "
            "(scale_by_zoom_linesearch, or scale_by_backtracking_linesearch with "
            "store_grad=True) inside the optimizer.")
    return found[0]


def value_and_grad_from_state(value_fn):
    """`fnad.value_and_grad(value_fn)` that reuses the value and gradient a line search
    computed at the params it accepted (stored in the optimizer state), when finite.

    Args:
      value_fn: the objective, `value_fn(params, *args, **kwargs) -> scalar`.

    Returns:
      A function `(params, *args, state, **kwargs) -> (value, grad)`.

    Example:
      value_and_grad = value_and_grad_from_state(f)
      value, grad = value_and_grad(params, state=opt_state)
    """
    if not callable(value_fn):
        raise TypeError("value_and_grad_from_state: value_fn must be the objective, a "
                        f"function of the params, got a {type(value_fn).__name__}.")
    fresh = fnad.value_and_grad(value_fn)

    def value_and_grad(params, *fn_args, state, **fn_kwargs):
        value, grad = _one_field(state, "value"), _one_field(state, "grad")
        stored = ~fnp.isinf(value) & ~fnp.isnan(value)
        if not isinstance(stored, Tracer):
            return (value, grad) if bool(stored) else fresh(params, *fn_args, **fn_kwargs)
        return fnad.lax.cond(stored, lambda p, a, k: (fnp.asarray(value), grad),
                             lambda p, a, k: fresh(p, *a, **k), params, fn_args, fn_kwargs)

    return value_and_grad
