"""Checks every primitive call's `abstract_eval` against the real output while code runs.

`checking_abstract_eval()` wraps the `impl` of every primitive: a call that reaches a
primitive through a transform (vjp, jvp, and the non-differentiable path) runs the real
implementation and also the abstract evaluation on the abstract values of the same
arguments, and records any disagreement in shape or dtype.
"""

import contextlib

import numpy as np

from fnad._core.abstract import AbstractEvalError, abstract_eval, is_aval
from fnad._core.tracer import PRIMITIVES


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [y for v in x for y in _leaves(v)]
    return [x]


def _compare(prim, out, aval):
    outs, avals = _leaves(out), _leaves(aval)
    if len(outs) != len(avals):
        return f"{len(outs)} results, abstract_eval gave {len(avals)}"
    for o, a in zip(outs, avals):
        if not is_aval(a):
            return f"abstract_eval returned {a!r}, not a ShapedArray"
        shape, dtype = tuple(np.shape(o)), np.result_type(o)
        if a.shape != shape or a.dtype != dtype:
            return f"real {dtype}{list(shape)}, abstract {a}"
    return None


class Report:
    def __init__(self):
        self.seen = set()
        self.missing = set()
        self.data_dependent = set()
        self.errors = {}

    def failures(self):
        return sorted(f"{k}: {v}" for k, v in self.errors.items())


def _checked(prim, impl, report):
    def run(*args, **kwargs):
        out = impl(*args, **kwargs)
        report.seen.add(prim.name)
        if prim.abstract_eval is None:
            report.missing.add(prim.name)
            return out
        try:
            aval = abstract_eval(prim, *args, **kwargs)
        except AbstractEvalError:
            report.data_dependent.add(prim.name)
            return out
        except Exception as e:  # recorded and reported by the test
            shapes = [getattr(a, "shape", a) for a in args]
            report.errors.setdefault(prim.name, f"raised {type(e).__name__}: {e} on {shapes}")
            return out
        bad = _compare(prim, out, aval)
        if bad:
            shapes = [getattr(a, "shape", type(a).__name__) for a in args]
            report.errors.setdefault(prim.name, f"{bad} (args {shapes}, kwargs {kwargs})")
        return out
    return run


@contextlib.contextmanager
def checking_abstract_eval():
    """Within the block, every primitive impl call is checked; yields the `Report`."""
    report = Report()
    saved = [(p, p.impl) for p in PRIMITIVES]
    for p, impl in saved:
        p.impl = _checked(p, impl, report)
    try:
        yield report
    finally:
        for p, impl in saved:
            p.impl = impl


_CONVERSIONS = ("__bool__", "__int__", "__float__", "__index__")


@contextlib.contextmanager
def no_concrete_reads():
    """Within the block, converting a tracer to a Python bool/int/float/index raises: code
    that passes runs unchanged when its inputs are staged (jit)."""
    from fnad._core.tracer import Tracer
    saved = {n: Tracer.__dict__[n] for n in _CONVERSIONS}

    def refuse(self, *args):
        raise AssertionError("the concrete value of a traced input was read")
    for n in _CONVERSIONS:
        setattr(Tracer, n, refuse)
    try:
        yield
    finally:
        for n, f in saved.items():
            setattr(Tracer, n, f)
