"""The fnad.numpy op battery on CuPy against the NumPy results (forward and VJP), using the
op table tests/numpy/cases.py (plus tests/numpy/cases_linalg.py when present)."""

import numpy as np
import pytest

import fnad
from fnad._core.backend import cupy_or_none, is_cupy_array

pytestmark = pytest.mark.gpu

CASES, LINALG_CASES = None, []
if cupy_or_none() is not None:  # the table imports torch: only load it where it runs
    try:
        from tests.numpy.cases import CASES
    except Exception:  # the table is another module's; fall back to a list of our own
        CASES = None
    try:
        from tests.numpy.cases_linalg import CASES as LINALG_CASES
    except Exception:
        LINALG_CASES = []
    if CASES is None:
        import fnad.numpy as fnp

        _r = np.random.default_rng(0)
        _x, _y = _r.standard_normal((2, 3)), _r.standard_normal((2, 3))
        CASES = [type("C", (), dict(id=n, fun=staticmethod(f), args=a))() for n, f, a in [
            ("add", fnp.add, (_x, _y)), ("mul", fnp.multiply, (_x, _y)),
            ("exp", fnp.exp, (_x,)), ("tanh", fnp.tanh, (_x,)), ("sum", fnp.sum, (_x,)),
            ("matmul", fnp.matmul, (_x, _y.T)), ("mean", lambda v: fnp.mean(v, axis=0), (_x,)),
        ]]

ALL = list(CASES or []) + list(LINALG_CASES)
TOL = 1e-8


def _leaves(out):
    if isinstance(out, (list, tuple)):
        return [x for o in out for x in _leaves(o)]
    return [out]


def _rel(a, b):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    scale = max(np.max(np.abs(a), initial=0.0), np.max(np.abs(b), initial=0.0), 1e-3)
    return float(np.max(np.abs(a - b), initial=0.0)) / scale


def _cotangents(out, rng):
    if isinstance(out, (list, tuple)):
        return type(out)(_cotangents(o, rng) for o in out)
    return rng.standard_normal(np.shape(out)).astype(getattr(out, "dtype", np.float64))


@pytest.mark.parametrize("case", ALL, ids=lambda c: c.id)
def test_op_on_gpu_matches_numpy(cp, case):
    args = tuple(np.asarray(a) for a in case.args)
    gargs = fnad.device_put(args, "gpu")
    ref = _leaves(case.fun(*args))
    got = _leaves(case.fun(*gargs))
    for r, g in zip(ref, got):
        if hasattr(r, "shape") and np.ndim(r) > 0:
            assert is_cupy_array(g), f"{case.id}: output left the GPU ({type(g).__name__})"
        assert _rel(r, fnad.to_numpy(g)) <= TOL, case.id
    rng = np.random.default_rng(0)
    out, f_vjp = fnad.vjp(case.fun, *args)
    ct = _cotangents(out, rng)
    gout, g_vjp = fnad.vjp(case.fun, *gargs)
    ref_g = f_vjp(ct)
    got_g = g_vjp(fnad.device_put(ct, "gpu"))
    for r, g in zip(ref_g, got_g):
        assert is_cupy_array(g) or np.ndim(g) == 0, f"{case.id}: a gradient left the GPU"
        assert _rel(r, fnad.to_numpy(g)) <= TOL, case.id
