"""The primitive registry and what every trace sees: unique names, non-differentiable
primitives reaching `Trace.process`, and one-call VJP rules (`vjp_all`)."""

import subprocess
import sys

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad._core.abstract import aval_of
from fnad._core.tracer import Trace, Tracer
from fnad.extend import defjvp, defvjp_all, primitive
from fnad.test_util import check_grads


def test_no_two_primitives_share_a_name():
    code = """
import collections, fnad, fnad.scipy.special, fnad.random, fnad.kernels, fnad_nn, fnad_optim
from fnad.extend import PRIMITIVES
names = collections.Counter(p.name for p in PRIMITIVES)
assert len(PRIMITIVES) > 100, len(PRIMITIVES)
dup = {n: [getattr(p.impl, "__module__", "?") for p in PRIMITIVES if p.name == n]
       for n, k in names.items() if k > 1}
assert not dup, dup
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


# ----------------------------------------------------------------------------- every trace
# A minimal staging-like trace: it records the name of every primitive it is given and
# boxes every output, so it shows what a jit trace would see.

class _Box(Tracer):
    __slots__ = ("_value", "_trace")

    def __init__(self, value, trace):
        self._value, self._trace = value, trace

    @property
    def value(self):
        return self._value

    @property
    def aval(self):
        return aval_of(self._value)


class _Recorder(Trace):
    __slots__ = ("seen",)

    def __init__(self):
        super().__init__()
        self.seen = []

    def process(self, prim, args, kwargs):
        self.seen.append(prim.name)
        vals = [a._value if isinstance(a, _Box) and a._trace is self else a for a in args]
        out = prim.bind(*vals, **kwargs)
        if prim.multiple_results:
            return type(out)(_Box(o, self) for o in out)
        return _Box(out, self)


def _f(x):
    i = fnp.argmax(x)
    mask = x > 0
    return fnp.sum(fnp.where(mask, x, fnp.zeros_like(x))) * fnp.floor(x[i])


def test_a_trace_sees_non_differentiable_primitives():
    tr = _Recorder()
    x = np.array([0.5, -1.0, 2.5])
    out = _f(_Box(x, tr))
    assert isinstance(out, _Box) and out.value == _f(x)
    for name in ("argmax", "greater", "zeros_like", "floor", "where"):
        assert name in tr.seen, (name, tr.seen)


def test_autodiff_passes_non_differentiable_primitives_to_outer_traces():
    tr = _Recorder()
    x = np.array([0.5, -1.0, 2.5])
    g = fnad.grad(_f)(_Box(x, tr))  # the comparisons under grad still reach the recorder
    assert "greater" in tr.seen and "argmax" in tr.seen and "floor" in tr.seen
    np.testing.assert_allclose(getattr(g, "value", g), fnad.grad(_f)(x))


def test_non_differentiable_outputs_are_plain_under_autodiff():
    seen = {}

    def f(x):
        seen["mask"] = x > 0
        seen["idx"] = fnp.argmax(x)
        return fnp.sum(x * seen["mask"])

    x = np.array([1.0, -2.0, 3.0])
    np.testing.assert_array_equal(fnad.grad(f)(x), [1.0, 0.0, 1.0])
    assert type(seen["mask"]) is np.ndarray and type(seen["idx"]) is np.intp
    _, t = fnad.jvp(fnad.grad(f), (x,), (np.ones(3),))  # nested: still plain, zero tangent
    np.testing.assert_array_equal(t, np.zeros(3))
    assert type(seen["mask"]) is np.ndarray


# ----------------------------------------------------------------------------- vjp_all

def _make_mul():
    calls = []

    def rule(g, ans, x, y):
        calls.append(1)
        return g * y, g * x

    mul = primitive(lambda x, y: x * y, "test_vjp_all_mul")
    defvjp_all(mul, rule)
    defjvp(mul, lambda t, ans, x, y: t * y, lambda t, ans, x, y: x * t)
    return mul, calls


def test_vjp_all_runs_once_for_every_argument():
    mul, calls = _make_mul()
    x, y = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    gx, gy = fnad.grad(lambda x, y: fnp.sum(mul(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, y)
    np.testing.assert_array_equal(gy, x)
    assert len(calls) == 1
    check_grads(lambda x, y: mul(fnp.sin(x), y), (x, y), order=2)


def test_vjp_all_none_is_a_zero_cotangent():
    mul = primitive(lambda x, y: x * y, "test_vjp_all_none_mul")
    defvjp_all(mul, lambda g, ans, x, y: (g * y, None))
    gx, gy = fnad.grad(lambda x, y: fnp.sum(mul(x, y)), argnums=(0, 1))(np.ones(2), np.ones(2))
    np.testing.assert_array_equal(gx, np.ones(2))
    np.testing.assert_array_equal(gy, np.zeros(2))


def test_unstack_is_one_primitive_with_a_stack_vjp():
    x = np.arange(6.0).reshape(2, 3)
    parts = fnp.unstack(x, axis=1)
    assert len(parts) == 3 and all(np.array_equal(p, x[:, i]) for i, p in enumerate(parts))
    check_grads(lambda x: fnp.unstack(x, axis=-1)[1] * fnp.unstack(x)[0][1], (x,), order=2)
    with pytest.raises(ValueError, match="fnad.numpy.unstack: axis 2 is out of range"):
        fnp.unstack(x, axis=2)
