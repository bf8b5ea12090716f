"""Measurements kept in the optimizer state, with optax's names: `snapshot` (the last value
of a measure of the updates), `monitor` (several), `measure_with_ema` (a moving average)."""

from typing import Any, NamedTuple

from ._base import GradientTransformation, chain
from ._groups import stateless
from ._moments import ema

__all__ = ["SnapshotState", "MonitorState", "snapshot", "monitor", "measure_with_ema"]


class SnapshotState(NamedTuple):
    """`{measure_name: the measure of the last updates}` (of the params after init)."""

    measurement: Any


class MonitorState(NamedTuple):
    """The measurements by name, and the states of the measuring transforms."""

    measurements: Any
    measure_states: Any


def snapshot(measure_name, measure):
    """Keep `measure(updates)` in the state, leaving the updates unchanged.

    Example:
      opt = chain(snapshot("grad_norm", global_norm), adam(1e-3))
      state[0].measurement["grad_norm"]
    """
    def init(params):
        return SnapshotState({measure_name: measure(params)})

    def update(updates, state, params=None):
        return updates, SnapshotState({measure_name: measure(updates)})

    return GradientTransformation(init, update)


def monitor(measures):
    """Keep several measurements in the state, leaving the updates unchanged: each value of
    the dict `measures` is a function of the updates, or a transform whose output is the
    measurement (e.g. `measure_with_ema(...)`).

    Example:
      opt = chain(monitor({"norm": global_norm}), adam(1e-3))
    """
    txs = {k: m if isinstance(m, GradientTransformation)
           else stateless(lambda u, _, m=m: m(u)) for k, m in measures.items()}
    names = tuple(txs)

    def init(params):
        return MonitorState({}, tuple(txs[k].init(params) for k in names))

    def update(updates, state, params=None, **extra_args):
        values, states = {}, []
        for k, s in zip(names, state.measure_states):
            values[k], s = txs[k].update(updates, s, params, **extra_args)
            states.append(s)
        return updates, MonitorState(values, tuple(states))

    return GradientTransformation(init, update)


def measure_with_ema(measure, decay, debias=True, accumulator_dtype=None):
    """A transform whose output is the moving average of `measure(updates)` (for `monitor`).

    Example:
      opt = chain(monitor({"norm_ema": measure_with_ema(global_norm, 0.9)}), adam(1e-3))
    """
    base = ema(decay, debias, accumulator_dtype)
    averaged = base._replace(init=lambda params: base.init(measure(params)))
    return chain(stateless(lambda updates, _: measure(updates)), averaged)
