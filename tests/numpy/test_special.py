"""fnad.scipy.special: the case table (check_grads, five-point differences, PyTorch
parity), kernel accuracy against SciPy (a test-only oracle), and numerical stability."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad.scipy.special as fsp
from fnad.test_util import check_grads
from tests.numpy.battery import fd_error, torch_error
from tests.numpy.cases_linalg import SPECIAL

sc = pytest.importorskip("scipy.special")
torch = pytest.importorskip("torch")
TORCH_TOL = 1e-10
FD_TOL = 1e-6


@pytest.mark.parametrize("case", SPECIAL, ids=lambda c: c.id)
def test_check_grads(case):
    check_grads(case.fun, case.args, order=case.order, modes=case.modes, atol=case.atol,
                rtol=case.rtol, eps=case.eps)


@pytest.mark.parametrize("case", SPECIAL, ids=lambda c: c.id)
def test_five_point_differences(case):
    assert fd_error(case, eps=case.eps or 1e-3) <= (case.rtol or FD_TOL)


@pytest.mark.parametrize("case", [c for c in SPECIAL if c.torch_fun is not None],
                         ids=lambda c: c.id)
def test_torch_parity(case):
    assert torch_error(case) <= TORCH_TOL


# ----------------------------------------------------------------------------- accuracy

RNG = np.random.default_rng(0)


def _points(lo, hi, n=20000):
    return np.concatenate([np.linspace(lo, hi, n), RNG.uniform(lo, hi, n)])


def _rel(a, b, floor):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    with np.errstate(invalid="ignore"):
        err = np.abs(a - b) / np.maximum(np.abs(b), floor)
    return float(np.max(np.where(same, 0.0, err)))


# (name, points, relative tolerance, floor): |ours - scipy| <= tol * max(|scipy|, floor).
# Floor 1 covers the zeros of gammaln (1, 2, -2.46, ...) and digamma (1.46, and between
# the negative poles), where no float64 code is relatively accurate; erfc stops at 6
# because SciPy's erfc rounds x*x (relative error ~x^2 eps beyond). test_far_and_near_zero
# checks those regions against mpmath instead.
ACCURACY = [
    ("erf", _points(-7, 7), 3e-15, 1e-300),
    ("erf", _points(-1e-3, 1e-3), 3e-15, 1e-300),
    ("erfc", _points(-7, 6), 1e-14, 1e-300),
    ("erfinv", _points(-1, 1), 5e-15, 1e-300),
    ("erfinv", 1 - np.logspace(-16, -1, 500), 5e-15, 1e-300),
    ("gammaln", _points(1e-6, 30), 3e-15, 1.0),
    ("gammaln", _points(30, 1e8), 3e-15, 1e-300),
    ("gammaln", np.logspace(-300, 300, 2000), 5e-15, 1e-300),
    ("gammaln", _points(-20, 0), 5e-15, 1.0),
    ("digamma", _points(1e-6, 30), 3e-15, 1.0),
    ("digamma", _points(30, 1e8), 3e-15, 1e-300),
    ("digamma", _points(-20, 0), 1e-9, 1.0),
]


@pytest.mark.parametrize("name,x,tol,floor", ACCURACY,
                         ids=[f"{a[0]}[{a[1].min():.3g},{a[1].max():.3g}]" for a in ACCURACY])
def test_kernel_accuracy_against_scipy(name, x, tol, floor):
    with np.errstate(all="ignore"):
        ours, ref = getattr(fsp, name)(x), getattr(sc, name)(x)
    assert _rel(ours, ref, floor) <= tol


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_polygamma_accuracy_against_scipy(n):
    x = np.concatenate([_points(1e-3, 40, 5000), _points(-4.9, -0.1, 500)])
    x = x[np.abs(x - np.round(x)) > 1e-3]
    assert _rel(fsp.polygamma(n, x), sc.polygamma(n, x), 1e-300) <= 1e-13


def test_far_tail_and_near_zeros_against_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    # (name, reference, points, floor): near gammaln's negative zero (-2.457) the reflection
    # formula cancels two terms of size ~1, so only an absolute ~1e-16 is possible there.
    checks = [("erfc", mp.erfc, [8.1, 12.5, 23.344, 26.0], 0.0),
              ("gammaln", lambda v: mp.log(abs(mp.gamma(v))),
               [1.0000559669398346, 0.999905966194831, 1.9999048321150754], 0.0),
              ("gammaln", lambda v: mp.log(abs(mp.gamma(v))), [-2.4570122850614], 1e-2),
              ("digamma", mp.digamma, [1.4616082593162965, 1.47, -11.999970971599215], 0.0)]
    for name, ref, xs, floor in checks:
        for v in xs:
            expected = float(ref(mp.mpf(v)))
            err = abs(getattr(fsp, name)(v) - expected)
            assert err <= 3e-14 * max(abs(expected), floor), (name, v)


def test_special_values_match_scipy():
    x = np.array([0.0, -0.0, 1.0, 2.0, -1.0, -2.5, np.inf, -np.inf, np.nan, 1e-300, 1e306])
    with np.errstate(all="ignore"):
        for name in ("erf", "erfc", "gammaln", "digamma"):
            np.testing.assert_allclose(getattr(fsp, name)(x), getattr(sc, name)(x),
                                       rtol=1e-14, atol=0, err_msg=name)
    y = np.array([-1.0, 1.0, 0.0, -0.0, 1.5, np.nan, 0.5])
    np.testing.assert_allclose(fsp.erfinv(y), sc.erfinv(y), rtol=1e-15)
    np.testing.assert_allclose(fsp.polygamma(np.array([0, 1, 2]), 2.5),
                               sc.polygamma(np.array([0, 1, 2]), 2.5), rtol=1e-14)


def test_scalars_and_float32():
    assert isinstance(fsp.erf(0.5), np.float64)
    assert fsp.gammaln(np.float32(3.5)).dtype == np.float32
    x = np.linspace(-2, 2, 7, dtype=np.float32)
    assert fsp.erf(x).dtype == np.float32
    assert fnad.grad(lambda x: fnp.sum(fsp.erf(x)))(x).dtype == np.float32


# ----------------------------------------------------------------------------- stability


def test_logsumexp_large_and_infinite_inputs():
    for x in (np.array([1e4, 1e4, -1e4]), np.array([-1e4, -1e4]), np.array([-np.inf, 0.0])):
        np.testing.assert_allclose(fsp.logsumexp(x), sc.logsumexp(x), rtol=1e-15)
        g = fnad.grad(fsp.logsumexp)(x)
        np.testing.assert_allclose(g, sc.softmax(x), rtol=1e-15)
    x = np.array([[-np.inf, -np.inf], [0.0, 1.0]])
    np.testing.assert_array_equal(fsp.logsumexp(x, axis=1), sc.logsumexp(x, axis=1))
    g = fnad.grad(lambda x: fnp.sum(fsp.logsumexp(x, axis=1)))(x)
    np.testing.assert_allclose(g, [[0, 0], sc.softmax([0.0, 1.0])], rtol=1e-15)
    assert fsp.logsumexp(np.array([np.inf, 1.0])) == np.inf


def test_logsumexp_b_and_return_sign_match_scipy():
    a, b = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]]), np.array([1.0, -2.0, 0.5])
    for axis in (None, 1, 0):
        out, sign = fsp.logsumexp(a, axis=axis, b=b, return_sign=True)
        ref, ref_sign = sc.logsumexp(a, axis=axis, b=b, return_sign=True)
        np.testing.assert_allclose(out, ref, rtol=1e-14)
        np.testing.assert_array_equal(sign, ref_sign)
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(fsp.logsumexp(a, axis=axis, b=b),
                                       sc.logsumexp(a, axis=axis, b=b), rtol=1e-14)
    out, sign = fsp.logsumexp(np.array([-np.inf, -np.inf]), return_sign=True)
    assert out == -np.inf and sign == 0


@pytest.mark.parametrize("scale", [1e4, -1e4])
def test_softmax_log_softmax_large_inputs(scale):
    x = scale * np.array([[1.0, 0.5, 1.0], [0.0, -1.0, 2.0]])
    for axis in (None, 0, 1):
        np.testing.assert_allclose(fsp.softmax(x, axis=axis), sc.softmax(x, axis=axis),
                                   rtol=1e-15)
        np.testing.assert_allclose(fsp.log_softmax(x, axis=axis),
                                   sc.log_softmax(x, axis=axis), rtol=1e-15)
    g = fnad.grad(lambda x: fnp.sum(fsp.log_softmax(x, axis=1)[:, 0]))(x)
    t = torch.tensor(x, requires_grad=True)
    torch.log_softmax(t, 1)[:, 0].sum().backward()
    np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-12, atol=1e-300)
    assert np.all(np.isfinite(g))


def test_expit_logit_extremes():
    x = np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0])
    np.testing.assert_array_equal(fsp.expit(x), sc.expit(x))
    g = fnad.grad(lambda x: fnp.sum(fsp.expit(x)))(x)
    assert np.all(np.isfinite(g))
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(fsp.logit(np.array([0.0, 1.0, 0.5])),
                                      sc.logit(np.array([0.0, 1.0, 0.5])))


def test_xlogy_at_zero():
    x, y = np.array([0.0, 0.0, 2.0]), np.array([0.0, 3.0, 3.0])
    np.testing.assert_array_equal(fsp.xlogy(x, y), sc.xlogy(x, y))
    gx, gy = fnad.grad(lambda x, y: fnp.sum(fsp.xlogy(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, [0.0, 0.0, np.log(3.0)])
    np.testing.assert_allclose(gy, [0.0, 0.0, 2.0 / 3.0])
    assert np.isnan(fsp.xlogy(0.0, np.nan)) and fsp.xlog1py(0.0, -1.0) == 0.0


def test_third_derivative_of_gammaln():
    d3 = fnad.grad(fnad.grad(fnad.grad(lambda x: fsp.gammaln(x))))(2.5)
    np.testing.assert_allclose(d3, sc.polygamma(2, 2.5), rtol=1e-13)


def test_runtime_does_not_import_scipy():
    import subprocess
    import sys
    code = ("import sys, fnad, fnad.scipy.special as s, numpy as np; s.erf(np.ones(2)); "
            "s.gammaln(np.ones(2)); sys.exit('scipy' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


@pytest.mark.gpu
def test_cupy_dispatch():
    cupy = pytest.importorskip("cupy")
    x = cupy.linspace(0.1, 3, 7)
    for name in ("erf", "erfc", "gammaln", "digamma"):
        out = getattr(fsp, name)(x)
        assert isinstance(out, cupy.ndarray)
        np.testing.assert_allclose(cupy.asnumpy(out), getattr(sc, name)(cupy.asnumpy(x)),
                                   rtol=1e-13)
    g = fnad.grad(lambda x: fnp.sum(fsp.gammaln(x)))(x)
    np.testing.assert_allclose(cupy.asnumpy(g), sc.digamma(cupy.asnumpy(x)), rtol=1e-13)
