"""`inject_hyperparams`: an optimizer whose numeric hyperparameters live in its state, so they
can be read (logged) and changed between steps, and whose schedules are evaluated there."""

import inspect
from typing import Any, NamedTuple

import numpy as np

import fnad
import fnad.numpy as fnp
from fnad.extend import Tracer

from ._base import GradientTransformationExtraArgs, extra_args_caller, inc_count, zero_count

__all__ = ["InjectHyperparamsState", "InjectStatefulHyperparamsState", "WrappedSchedule",
           "inject_hyperparams", "inject_stateful_hyperparams"]


class InjectHyperparamsState(NamedTuple):
    """Step count, the current hyperparameters by name and the inner state (optax's older
    layout; `inject_hyperparams` gives an `InjectStatefulHyperparamsState`)."""

    count: Any
    hyperparams: Any
    inner_state: Any


class InjectStatefulHyperparamsState(NamedTuple):
    """Step count, the current hyperparameters by name (change them to change the next
    step), each schedule's state, and the inner state."""

    count: Any
    hyperparams: Any
    hyperparams_states: Any
    inner_state: Any


class WrappedScheduleState(NamedTuple):
    """A plain schedule's step count."""

    count: Any


class WrappedSchedule:
    """A schedule `count -> value` seen as a stateful schedule: `init()`, `update(state)`
    and `schedule(state)`, its state a `WrappedScheduleState` counting the steps."""

    def __init__(self, schedule_fn):
        self.schedule_fn = schedule_fn

    def init(self):
        return WrappedScheduleState(count=fnp.zeros([], fnp.int32))

    def update(self, state, **extra_args):
        return WrappedScheduleState(count=inc_count(state.count))

    def __call__(self, state, **extra_args):
        return self.schedule_fn(state.count)


def _is_stateful(v):
    return all(callable(getattr(v, a, None)) for a in ("init", "update", "__call__"))


def _float_dtype(params, hyperparam_dtype):
    if hyperparam_dtype is not None:
        return hyperparam_dtype
    kinds = [np.dtype(getattr(x, "dtype", np.float64)) for x in fnad.tree_leaves(params)]
    floats = [d for d in kinds if d.kind in "fc"]
    return np.result_type(*floats) if floats else np.float64


def _convert(x, dtype):
    """Floats (Python floats, float arrays not already typed arrays of ours) in `dtype`."""
    if isinstance(x, Tracer):
        return x
    kind = np.dtype(getattr(x, "dtype", type(x))).kind if not isinstance(x, bool) else "b"
    if kind == "f":
        return fnp.asarray(x, dtype=dtype)
    return x


def inject_hyperparams(inner_factory, static_args=(), hyperparam_dtype=None):
    """Wrap an optimizer factory (e.g. `adam`) so that its numeric arguments are kept in the
    state's `hyperparams` dict and its schedule arguments are evaluated into it each step.

    Args:
      inner_factory: a function returning a `GradientTransformation`.
      static_args: names of arguments to pass through unchanged (not in the state).
      hyperparam_dtype: the dtype of float hyperparameters (default: the params' widest
        float dtype).

    Returns:
      A function with `inner_factory`'s arguments returning a
      `GradientTransformationExtraArgs` with an `InjectStatefulHyperparamsState` (extra args
      of `update` go to the schedules and to the inner optimizer if it takes them).

    Example:
      opt = inject_hyperparams(adam)(learning_rate=1e-3)
      state = opt.init(params)
      state.hyperparams["learning_rate"] = fnp.asarray(1e-4)   # the next steps use 1e-4
    """
    static_args = {static_args} if isinstance(static_args, str) else set(static_args)
    sig = inspect.signature(inner_factory)
    if not static_args <= set(sig.parameters):
        raise ValueError(f"inject_hyperparams: static_args {sorted(static_args)} must be "
                         f"parameters of {getattr(inner_factory, '__name__', inner_factory)}, "
                         f"whose parameters are {list(sig.parameters)}.")

    def wrapped(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        sched, numeric, other = {}, {}, {}
        for name, value in bound.arguments.items():
            if name in static_args or isinstance(value, bool):
                other[name] = value
            elif _is_stateful(value) and not inspect.isfunction(value):
                sched[name] = value
            elif callable(value):
                sched[name] = WrappedSchedule(value)
            elif isinstance(value, (int, float, np.ndarray, np.generic, Tracer)) or hasattr(
                    value, "__array__"):
                numeric[name] = value
            else:
                other[name] = value

        def init(params):
            dtype = _float_dtype(params, hyperparam_dtype)
            hp = {k: fnp.asarray(_convert(v, dtype)) for k, v in numeric.items()}
            hp_states = {k: f.init() for k, f in sched.items()}
            hp.update({k: _convert(f(hp_states[k]), dtype) for k, f in sched.items()})
            return InjectStatefulHyperparamsState(
                zero_count(params), hp, hp_states, inner_factory(**other, **hp).init(params))

        def update(updates, state, params=None, **extra_args):
            dtype = _float_dtype(params if params is not None else updates, hyperparam_dtype)
            hp = {k: _convert(v, dtype) for k, v in state.hyperparams.items()}
            hp.update({k: _convert(f(state.hyperparams_states[k], **extra_args), dtype)
                       for k, f in sched.items()})
            hp_states = {k: f.update(state.hyperparams_states[k], **extra_args)
                         for k, f in sched.items()}
            inner = inner_factory(**other, **hp)
            updates, inner_state = extra_args_caller(inner)(updates, state.inner_state,
                                                            params, extra_args)
            return updates, InjectStatefulHyperparamsState(inc_count(state.count), hp,
                                                           hp_states, inner_state)

        return GradientTransformationExtraArgs(init, update)

    wrapped.__name__ = getattr(inner_factory, "__name__", "inject_hyperparams")
    wrapped.__doc__ = inner_factory.__doc__
    return wrapped


def inject_stateful_hyperparams(inner_factory, static_args=(), hyperparam_dtype=None):
    """optax's older name of `inject_hyperparams` (whose schedules may be stateful).

    Example:
      opt = inject_stateful_hyperparams(sgd)(learning_rate=0.1)
    """
    return inject_hyperparams(inner_factory, static_args, hyperparam_dtype)
