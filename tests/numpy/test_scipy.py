"""fnad.scipy.special additions, linalg, signal and stats: forward values against SciPy (a
test-only oracle), edge values, and the traps (clear errors, -inf outside supports)."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad.scipy.linalg as fla
import fnad.scipy.signal as fsig
import fnad.scipy.special as fsp
import fnad.scipy.stats as fst

sc = pytest.importorskip("scipy.special")
sl = pytest.importorskip("scipy.linalg")
ss = pytest.importorskip("scipy.signal")
st = pytest.importorskip("scipy.stats")
RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _fresh_rng():
    """Each test draws the same points however the tests are selected or ordered."""
    global RNG
    RNG = np.random.default_rng(1)


def _rel(a, b, floor=1e-300):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    with np.errstate(invalid="ignore"):
        err = np.abs(a - b) / np.maximum(np.abs(b), floor)
    return float(np.max(np.where(same, 0.0, err), initial=0.0))


# ----------------------------------------------------------------------------- special

_A = RNG.uniform(0.1, 20, 3000)
ACCURACY = [
    ("gamma", (np.concatenate([np.linspace(-10.5, 30, 4001), RNG.uniform(0.01, 30, 2000)]),),
     1e-14),
    ("gamma", (np.linspace(30, 171, 2001),), 3e-13),  # exp(gammaln): ~|gammaln| eps
    ("rgamma", (np.linspace(-10.5, 30, 4001),), 1e-14),
    ("erfcx", (np.concatenate([np.linspace(-26, 5, 3001), np.logspace(0, 300, 300)]),), 1e-13),
    ("erfcinv", (np.concatenate([np.logspace(-300, 0, 2000), np.linspace(0, 2, 2001)]),),
     5e-15),
    # ndtr/log_ndtr round z = -x/sqrt(2) as SciPy does: ~z^2 eps apart in the far tails
    ("ndtr", (np.linspace(-37, 8, 3001),), 5e-13),
    ("ndtri", (np.concatenate([np.logspace(-300, 0, 2000), np.linspace(0, 1, 2001)]),), 5e-15),
    ("log_ndtr", (np.concatenate([-np.logspace(-3, 5, 2000), np.linspace(-40, 37, 3001)]),),
     5e-13),
    ("gammainc", (_A, RNG.uniform(0, 40, 3000)), 1e-13),
    ("gammaincc", (_A, RNG.uniform(0, 40, 3000)), 1e-13),
    ("betainc", (RNG.uniform(0.1, 10, 3000), RNG.uniform(0.1, 10, 3000),
                 RNG.uniform(0, 1, 3000)), 1e-12),
    # betaln crosses 0 (a + b ~ 1 + ab): there only an absolute ~1e-14 is meaningful
    ("gammaincinv", (_A[:1000], np.concatenate([RNG.uniform(0, 1, 500),
                                                np.logspace(-30, 0, 500)])), 1e-13),
    ("betaincinv", (RNG.uniform(0.1, 10, 1000), RNG.uniform(0.1, 10, 1000),
                    np.concatenate([RNG.uniform(0, 1, 500), np.logspace(-12, 0, 500)])), 1e-12),
    ("betaln", (RNG.uniform(0.1, 20, 3000), RNG.uniform(0.1, 20, 3000)), 1e-13, 1.0),
    ("beta", (RNG.uniform(0.1, 20, 3000), RNG.uniform(0.1, 20, 3000)), 1e-13),
]

_XB = np.concatenate([np.linspace(-50, 200, 5001), np.logspace(-10, 3, 300)])
_NB = np.arange(-5, 12)[:, None]
_VB = np.array([0, 0.5, 1, 2.5, 3, 7.3, -0.5, -1.7, -2])[:, None]
_XI = np.concatenate([np.linspace(-5, 100, 501), np.logspace(-8, 2.8, 200)])[None]
# j/y: floor 1 (an absolute error near their zeros, where no float64 code is relative)
ACCURACY += [(n, (_XB,), 3e-15, 1.0) for n in ("j0", "j1", "y0", "y1")]
ACCURACY += [("jn", (_NB, np.linspace(0.01, 60, 301)[None]), 3e-15, 1.0),
             ("yn", (_NB, np.linspace(0.01, 60, 301)[None]), 5e-15, 1.0),
             ("iv", (_VB, _XI), 1e-13), ("ive", (_VB, _XI), 1e-13)]
ACCURACY += [(n, (_XI,), 5e-15) for n in ("i0", "i1", "i0e", "i1e")]


@pytest.mark.parametrize("name,args,tol,floor",
                         [a + (1e-290,) * (4 - len(a)) for a in ACCURACY],
                         ids=[f"{a[0]}-{i}" for i, a in enumerate(ACCURACY)])
def test_special_against_scipy(name, args, tol, floor):
    with np.errstate(all="ignore"):
        ours, ref = getattr(fsp, name)(*args), getattr(sc, name)(*args)
    assert _rel(ours, ref, floor) <= tol


def test_special_edges():
    with np.errstate(all="ignore"):
        x = np.array([0.0, -0.0, -1.0, -2.0, np.inf, -np.inf, np.nan, 1e-300])
        np.testing.assert_array_equal(fsp.gamma(x), sc.gamma(x))
        np.testing.assert_array_equal(fsp.rgamma(x), sc.rgamma(x))
        y = np.array([0.0, 2.0, -0.5, 2.5, 1.0, np.nan])
        np.testing.assert_array_equal(fsp.erfcinv(y), sc.erfcinv(y))
        p = np.array([0.0, 1.0, 0.5, -0.1, 1.1])
        np.testing.assert_array_equal(fsp.ndtri(p), sc.ndtri(p))
        a, x = np.array([1.0, 1.0, 2.0, -1.0]), np.array([0.0, np.inf, -1.0, 1.0])
        np.testing.assert_array_equal(fsp.gammainc(a, x), sc.gammainc(a, x))
        np.testing.assert_array_equal(fsp.gammaincc(a, x), sc.gammaincc(a, x))
    assert fsp.multigammaln(3.0, 2) == pytest.approx(sc.multigammaln(3.0, 2), rel=1e-15)
    with pytest.raises(ValueError, match="multigammaln"):
        fsp.multigammaln(np.array([0.4, 3.0]), 3)


def test_gammainc_derivative_in_a_against_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    a = np.array([0.1, 0.5, 2.5, 10.0, 10.0, 50.0, 3.0])
    x = np.array([0.05, 3.0, 0.7, 11.0, 4.0, 52.0, 30.0])  # both sides of x = a + 1
    g = fnad.grad(lambda a: fnp.sum(fsp.gammainc(a, x)))(a)
    ref = [float(mp.diff(lambda t: mp.gammainc(t, 0, v, regularized=True), u))
           for u, v in zip(a, x)]
    np.testing.assert_allclose(g, ref, rtol=1e-12)
    gc = fnad.grad(lambda a: fnp.sum(fsp.gammaincc(a, x)))(a)
    np.testing.assert_allclose(gc, -np.array(ref), rtol=1e-12)
    # the inverse in a: P(a, x(a)) = p
    p = np.array([0.2, 0.5, 0.9])
    ga = fnad.grad(lambda a: fnp.sum(fsp.gammaincinv(a, p)))(np.array([0.7, 2.5, 9.0]))
    eps = 1e-6
    fd = (sc.gammaincinv(np.array([0.7, 2.5, 9.0]) + eps, p)
          - sc.gammaincinv(np.array([0.7, 2.5, 9.0]) - eps, p)) / (2 * eps)
    np.testing.assert_allclose(ga, fd, rtol=1e-7)


def test_special_derivatives():
    # d/dx log_ndtr stays finite and exact far in the lower tail (~ -x).
    g = fnad.grad(lambda x: fnp.sum(fsp.log_ndtr(x)))(np.array([-1e3, -40.0, 40.0]))
    expected = np.sqrt(2 / np.pi) / sc.erfcx(np.array([1e3, 40.0, -40.0]) / np.sqrt(2))
    np.testing.assert_allclose(g, expected, rtol=1e-13, atol=1e-300)
    # rgamma at its poles: 1/Gamma(x) ~ (-1)^n n! (x + n)
    np.testing.assert_allclose([fnad.grad(fsp.rgamma)(v) for v in (0.0, -1.0, -3.0)],
                               [1.0, -1.0, -6.0])
    np.testing.assert_allclose(fnad.grad(fsp.gamma)(2.5), sc.gamma(2.5) * sc.digamma(2.5))


@pytest.mark.parametrize("fun,argnum,name", [
    (fnad.grad(lambda a: fsp.gammainc(a, 2.0)), 0, "gammainc"),
    (lambda b: fsp.betainc(2.0, b, 0.3), 1, "betainc"),
    (lambda v: fsp.iv(v, 2.0), 0, "iv"),
    (lambda n: fsp.jn(n, 2.0), 0, "jn"),
])
def test_shape_parameter_derivative_raises(fun, argnum, name):
    with pytest.raises(NotImplementedError, match=rf"{name}.*argument {argnum}"):
        fnad.grad(fun)(2.0)
    with pytest.raises(NotImplementedError, match=name):
        fnad.jvp(fun, (2.0,), (1.0,))


# ----------------------------------------------------------------------------- linalg


def _well(n, batch=()):
    return RNG.standard_normal(batch + (n, n)) / np.sqrt(n) + 2.5 * np.eye(n)


def test_linalg_against_scipy():
    a, b, v = RNG.standard_normal((5, 5)), RNG.standard_normal((5, 2)), RNG.standard_normal(5)
    s = a @ a.T + np.eye(5)
    for kw in ({}, {"lower": True}, {"trans": 1}, {"unit_diagonal": True, "lower": True}):
        np.testing.assert_allclose(fla.solve_triangular(a, b, **kw),
                                   sl.solve_triangular(a, b, **kw), rtol=1e-12)
    np.testing.assert_allclose(fla.cholesky(s), sl.cholesky(s), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(fla.cholesky(s, lower=True), sl.cholesky(s, lower=True),
                               rtol=1e-13, atol=1e-15)
    for lower in (False, True):
        np.testing.assert_allclose(fla.cho_solve(fla.cho_factor(s, lower=lower), v),
                                   sl.cho_solve(sl.cho_factor(s, lower=lower), v), rtol=1e-12)
    for m in (a, RNG.standard_normal((5, 3)), RNG.standard_normal((3, 5))):
        for ours, ref in zip(fla.lu(m), sl.lu(m)):
            np.testing.assert_allclose(ours, ref, rtol=1e-13, atol=1e-15)
        for ours, ref in zip(fla.lu(m, p_indices=True), sl.lu(m, p_indices=True)):
            np.testing.assert_allclose(ours, ref, rtol=1e-13, atol=1e-15)
        for ours, ref in zip(fla.lu(m, permute_l=True), sl.lu(m, permute_l=True)):
            np.testing.assert_allclose(ours, ref, rtol=1e-13, atol=1e-15)
    lu_piv = sl.lu_factor(a)
    for ours, ref in zip(fla.lu_factor(a), lu_piv):
        np.testing.assert_allclose(ours, ref, rtol=1e-13, atol=1e-15)
    for trans in (0, 1):
        np.testing.assert_allclose(fla.lu_solve(lu_piv, b, trans=trans),
                                   sl.lu_solve(lu_piv, b, trans=trans), rtol=1e-12)
    for m in (a, 6 * a, np.zeros((3, 3)), np.array([[1e-3]])):
        assert _rel(fla.expm(m), sl.expm(m), 1.0) < 1e-13
    np.testing.assert_allclose(fla.sqrtm(s), sl.sqrtm(s), rtol=1e-12)
    g = _well(4)
    np.testing.assert_allclose(fla.sqrtm(g), sl.sqrtm(g), rtol=1e-12)
    a5, b3, q = _well(5), _well(3), RNG.standard_normal((5, 3))
    np.testing.assert_allclose(fla.solve_sylvester(a5, b3, q), sl.solve_sylvester(a5, b3, q),
                               rtol=1e-11)
    ab = RNG.standard_normal((4, 6))
    ab[2] += 5
    b6 = RNG.standard_normal((6, 2))
    np.testing.assert_allclose(fla.solve_banded((2, 1), ab, b6), sl.solve_banded((2, 1), ab, b6),
                               rtol=1e-12)
    np.testing.assert_array_equal(fla.block_diag(a[:2, :3], v, 7.0),
                                  sl.block_diag(a[:2, :3], v, 7.0))
    np.testing.assert_allclose(fla.solve(a, b, assume_a="sym", lower=True),
                               sl.solve(a, b, assume_a="sym", lower=True), rtol=1e-12)
    np.testing.assert_allclose(fla.solve(a, v, transposed=True),
                               sl.solve(a, v, transposed=True), rtol=1e-12)
    np.testing.assert_allclose(fla.inv(a), sl.inv(a), rtol=1e-12)
    np.testing.assert_allclose(fla.det(a), sl.det(a), rtol=1e-12)


def _normwise(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


def test_linalg_batched():
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2, 4, 3, 3)) / np.sqrt(3) + 2.5 * np.eye(3)
    a[0, 0] *= 5  # a larger norm: more squarings for that matrix only
    p, low, up = fla.lu(a)
    np.testing.assert_allclose(p @ low @ up, a, atol=1e-14)
    # normwise: SciPy's own expm is off by up to ~2e-12 on such matrices (ours ~5e-15
    # against a 40-digit mpmath expm on the same ones)
    for i, j in ((0, 0), (1, 2)):
        assert _normwise(fla.expm(a)[i, j], sl.expm(a[i, j])) < 5e-12
        assert _normwise(fla.sqrtm(a)[i, j], sl.sqrtm(a[i, j])) < 1e-13
    x = fla.solve_sylvester(a, _well(2), RNG.standard_normal((3, 2)))
    assert x.shape == (2, 4, 3, 2)


def test_linalg_traps():
    with pytest.raises(NotImplementedError, match="lu: derivatives .* square"):
        fnad.grad(lambda m: fnp.sum(fla.lu(m)[2]))(RNG.standard_normal((3, 2)))
    with pytest.raises(ValueError, match="solve_triangular"):
        fla.solve_triangular(np.eye(3), np.ones(4))
    with pytest.raises(ValueError, match="solve_banded"):
        fla.solve_banded((1, 1), np.ones((2, 4)), np.ones(4))
    with pytest.raises(ValueError, match="sqrtm"):
        fla.sqrtm(np.ones((2, 3)))


def test_expm_third_derivative_is_finite():
    a = 0.5 * RNG.standard_normal((3, 3))
    d = fnad.grad(fnad.grad(fnad.grad(lambda t: fnp.sum(fla.expm(t * a)))))(0.7)
    ref = np.sum(a @ a @ a @ sl.expm(0.7 * a))
    np.testing.assert_allclose(d, ref, rtol=1e-10)


# ----------------------------------------------------------------------------- signal

@pytest.mark.parametrize("s1,s2", [((5,), (3,)), ((3,), (5,)), ((4,), (4,)), ((4, 5), (2, 3)),
                                   ((2, 3), (4, 5)), ((3, 4, 2), (2, 2, 2)), ((2, 3), (2, 1))])
def test_signal_against_scipy(s1, s2):
    a, v = RNG.standard_normal(s1), RNG.standard_normal(s2)
    for mode in ("full", "same", "valid"):
        for ours, ref in ((fsig.convolve, ss.convolve), (fsig.correlate, ss.correlate)):
            try:
                expected = ref(a, v, mode=mode, method="direct")
            except ValueError:
                with pytest.raises(ValueError, match="valid"):
                    ours(a, v, mode)
                continue
            np.testing.assert_allclose(ours(a, v, mode), expected, rtol=1e-12, atol=1e-14)


def test_signal_traps():
    with pytest.raises(ValueError, match="same dimensionality"):
        fsig.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="mode"):
        fsig.correlate(np.ones(3), np.ones(2), mode="circular")


# ----------------------------------------------------------------------------- stats

CONT = {"norm": (), "expon": (), "laplace": (), "logistic": (), "uniform": (), "cauchy": (),
        "t": (3.5,), "gamma": (2.5,), "chi2": (3.0,), "beta": (2.5, 1.5)}
Q = np.array([0.0, 1e-10, 0.1, 0.5, 0.9, 1 - 1e-10, 1.0])


@pytest.mark.parametrize("name", list(CONT))
def test_continuous_against_scipy(name):
    f, ref, sh = getattr(fst, name), getattr(st, name), CONT[name]
    x = np.concatenate([RNG.uniform(-4, 4, 40), [0.0, 1.0, -1.0, 0.5, 2.0]])
    if name == "beta":
        x = RNG.uniform(-0.2, 1.2, 45)
    for loc, scale in ((0.0, 1.0), (0.3, 1.7)):
        for m in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"):
            if hasattr(f, m):
                arg = Q if m in ("ppf", "isf") else x
                ours = getattr(f, m)(arg, *sh, loc=loc, scale=scale)
                assert _rel(ours, getattr(ref, m)(arg, *sh, loc=loc, scale=scale)) < 1e-11, m


@pytest.mark.parametrize("name,sh", [("poisson", (3.2,)), ("bernoulli", (0.3,)),
                                     ("binom", (7, 0.35))])
def test_discrete_against_scipy(name, sh):
    f, ref = getattr(fst, name), getattr(st, name)
    k = np.array([-1, 0, 1, 2, 3, 5, 7, 2.5, 10])
    for m in ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"):
        assert _rel(getattr(f, m)(k, *sh), getattr(ref, m)(k, *sh)) < 1e-12, m
        assert _rel(getattr(f, m)(k, *sh, loc=1), getattr(ref, m)(k, *sh, loc=1)) < 1e-12, m
    np.testing.assert_array_equal(f.ppf(Q, *sh), ref.ppf(Q, *sh))


def test_multivariate_against_scipy():
    mean, a = np.array([0.5, -1.0, 2.0]), RNG.standard_normal((3, 3))
    cov, x = a @ a.T + np.eye(3), RNG.standard_normal((4, 3))
    mvn, ref = fst.multivariate_normal, st.multivariate_normal
    for args in ((x, mean, cov), (x[0], mean, cov), (x, mean, np.array([1.0, 2, 3])),
                 (np.array([0.1, 0.2, 0.3]), 0.5, 2.0)):
        assert _rel(mvn.logpdf(*args), ref.logpdf(*args)) < 1e-13
        assert _rel(mvn.pdf(*args), ref.pdf(*args)) < 1e-13
    assert _rel(mvn.entropy(mean, cov), ref.entropy(mean, cov)) < 1e-14
    alpha = np.array([1.5, 2.0, 3.0])
    xd = RNG.dirichlet(alpha, 5).T
    for arg in (xd, xd[:, 0], xd[:2]):
        assert _rel(fst.dirichlet.logpdf(arg, alpha), st.dirichlet.logpdf(arg, alpha)) < 1e-13
    for m in ("entropy", "mean", "var"):
        assert _rel(getattr(fst.dirichlet, m)(alpha), getattr(st.dirichlet, m)(alpha)) < 1e-13


def test_singular_covariance():
    mean, b = np.array([0.5, -1.0, 2.0]), RNG.standard_normal((3, 2))
    cov = b @ b.T
    on = np.stack([mean + b @ RNG.standard_normal(2) for _ in range(3)])
    pts = np.concatenate([on, RNG.standard_normal((1, 3))])
    with pytest.raises(ValueError, match="singular.*allow_singular=True"):
        fst.multivariate_normal.logpdf(pts, mean, cov)
    ours = fst.multivariate_normal.logpdf(pts, mean, cov, allow_singular=True)
    ref = st.multivariate_normal.logpdf(pts, mean, cov, allow_singular=True)
    assert _rel(ours, ref) < 1e-10 and ours[-1] == -np.inf
    assert _rel(fst.multivariate_normal.entropy(mean, cov, allow_singular=True),
                st.multivariate_normal.entropy(mean, cov)) < 1e-12
    g = fnad.grad(lambda m: fnp.sum(fst.multivariate_normal.logpdf(on, m, cov,
                                                                   allow_singular=True)))(mean)
    assert np.all(np.isfinite(g))


def test_outside_support_is_minus_inf_with_zero_gradient():
    cases = [(lambda x: fst.expon.logpdf(x), -1.0), (lambda x: fst.gamma.logpdf(x, 2.0), -0.5),
             (lambda x: fst.beta.logpdf(x, 2.0, 3.0), 1.5),
             (lambda x: fst.uniform.logpdf(x), 2.0),
             (lambda x: fst.poisson.logpmf(x, 2.0), 1.5)]
    for f, x in cases:
        assert f(x) == -np.inf
        assert fnad.grad(f)(x) == 0.0
    # parameter gradients stay finite too
    assert fnad.grad(lambda a: fst.gamma.logpdf(-1.0, a))(2.0) == 0.0
    assert fnad.grad(lambda p: fst.binom.logpmf(9.0, 7, p))(0.3) == 0.0
    with np.errstate(all="raise"):
        assert np.isnan(fst.norm.logpdf(0.0, scale=-1.0))


def test_stats_parameter_errors():
    with pytest.raises(TypeError, match="missing shape parameter"):
        fst.gamma.logpdf(1.0)
    with pytest.raises(TypeError, match="norm.logpdf.*positional"):
        fst.norm.logpdf(1.0, 0.0, 1.0, 2.0)
    with pytest.raises(NotImplementedError, match="betainc"):
        fnad.grad(lambda a: fst.beta.cdf(0.3, a, 2.0))(2.0)
    with pytest.raises(NotImplementedError, match="binom.cdf.*n"):
        fnad.grad(lambda n: fst.binom.cdf(2.0, n, 0.3))(7.0)
    with pytest.raises(NotImplementedError, match="dirichlet.rvs"):
        fnad.grad(lambda a: fnp.sum(fst.dirichlet.rvs(fnad.random.PRNGKey(0), a)))(
            np.array([1.0, 2.0]))
    with pytest.raises(NotImplementedError, match="gamma.rvs.*`a`"):
        fnad.grad(lambda a: fnp.sum(fst.gamma.rvs(fnad.random.PRNGKey(0), a, size=3)))(2.0)


@pytest.mark.parametrize("name", list(CONT))
def test_rvs_distribution(name):
    key = fnad.random.PRNGKey(3)
    sample = np.asarray(getattr(fst, name).rvs(key, *CONT[name], size=4000))
    assert sample.shape == (4000,)
    assert st.kstest(sample, getattr(st, name)(*CONT[name]).cdf).pvalue > 1e-3


def test_rvs_discrete_and_multivariate():
    key = fnad.random.PRNGKey(4)
    for name, sh in (("poisson", (3.2,)), ("bernoulli", (0.3,)), ("binom", (7, 0.35))):
        s = np.asarray(getattr(fst, name).rvs(key, *sh, size=20000))
        mean, var = getattr(st, name).stats(*sh)
        assert abs(s.mean() - mean) < 5 * np.sqrt(var / s.size)
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    s = fst.multivariate_normal.rvs(key, np.array([1.0, -1.0]), cov, size=20000)
    assert s.shape == (20000, 2) and np.abs(np.cov(s.T) - cov).max() < 0.08
    s = fst.dirichlet.rvs(key, np.array([1.5, 2.0, 3.0]), size=5000)
    assert s.shape == (5000, 3) and np.abs(s.mean(0) - [1.5 / 6.5, 2 / 6.5, 3 / 6.5]).max() < 0.01
    g = fnad.grad(lambda loc, s: fnp.sum(fst.norm.rvs(key, loc, s, size=5)), argnums=(0, 1))(
        0.0, 2.0)
    np.testing.assert_allclose(g[0], 5.0)


def test_runtime_does_not_import_scipy():
    import subprocess
    import sys
    code = ("import sys, fnad.scipy.stats as s, fnad.scipy.linalg as l, fnad.scipy.signal as g; "
            "import numpy as np; s.t.cdf(1.0, 3.0); s.gamma.cdf(1.0, 2.0); l.expm(np.eye(2)); "
            "g.convolve(np.ones(3), np.ones(2)); sys.exit('scipy' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


@pytest.mark.parametrize("name", ["norm", "t", "gamma", "beta"])
def test_stats_broadcasting(name):
    sh = [np.array([[v], [v + 0.5]]) for v in CONT[name]]  # (2, 1) shape parameters
    x, loc, scale = RNG.uniform(0.3, 0.6, (3,)), np.array(0.05), np.array([[[1.1]]])
    f, ref = getattr(fst, name), getattr(st, name)
    for m in ("logpdf", "cdf"):
        ours = getattr(f, m)(x, *sh, loc, scale)
        expected = getattr(ref, m)(x, *sh, loc, scale)
        assert ours.shape == expected.shape and _rel(ours, expected) < 1e-12


def test_each_stats_family_imports_as_a_module_as_in_jax():
    import importlib
    for name in fst.__all__:
        assert importlib.import_module(f"fnad.scipy.stats.{name}") is getattr(fst, name), name
    import fnad.scipy.stats.norm as norm  # JAX's advi example: import jax.scipy.stats.norm
    assert norm is fst.norm and np.isclose(norm.logpdf(0.0), -0.5 * np.log(2 * np.pi))
