"""fnad.random beyond the basics: draws inside control flow, key data, the further
distributions (against jax.random where installed) and their gradients."""

import numpy as np
import pytest

import fnad
import fnad.lax as lax
import fnad.numpy as fnp
import fnad.random as jr

# JAX compares in its default float32 mode here (see tests/conftest.py)
pytestmark = pytest.mark.usefixtures("jax_x32")

KEY = jr.PRNGKey(0)


# ----------------------------------------------------------------------------- control flow

def test_normal_with_a_loop_dependent_key_in_scan_and_fori_loop():
    # np.float32 (a class, the default dtype) was taken for an array constant of the body
    def body(c, i):
        return c + jr.normal(jr.fold_in(KEY, i), (3,)), None

    out, _ = lax.scan(body, np.zeros(3, np.float32), np.arange(4))
    want = sum(jr.normal(jr.fold_in(KEY, i), (3,)) for i in range(4))
    np.testing.assert_allclose(out, want, rtol=1e-6)
    out = lax.fori_loop(0, 4, lambda i, c: c + jr.normal(jr.fold_in(KEY, i), (3,)),
                        np.zeros(3, np.float32))
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_make_graph_and_jit_of_normal():
    text = str(fnad.make_graph(lambda k: jr.normal(k, (3,)))(KEY))
    assert "random_normal" in text and "float32" in text
    np.testing.assert_array_equal(fnad.jit(lambda k: jr.normal(k, (3,), fnp.float32))(KEY),
                                  jr.normal(KEY, (3,)))


def test_float32_draws_as_cotangents_and_tangents_of_float64_data():
    # fnad.numpy makes float64 (NumPy), fnad.random draws float32 (JAX): a draw of the other
    # float precision is taken in the primal's/output's dtype, as a Python float is
    w = np.linspace(-1.0, 1.0, 3)
    f = lambda w: fnp.tanh(w * 2.0)
    y, f_vjp = fnad.vjp(f, w)
    u = jr.normal(KEY, y.shape)
    (g,) = f_vjp(u)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, f_vjp(u.astype(np.float64))[0], rtol=1e-15)
    _, t = fnad.jvp(f, (w,), (u,))
    assert t.dtype == np.float64
    w32 = w.astype(np.float32)
    _, t = fnad.jvp(f, (w32,), (np.eye(3)[0],))
    assert t.dtype == np.float32
    (gs,) = fnad.vmap(f_vjp)(jr.normal(KEY, (4, 3)))
    assert gs.shape == (4, 3) and gs.dtype == np.float64
    with pytest.raises(TypeError, match="tangents must have their primal's dtype"):
        fnad.jvp(f, (w,), (np.ones(3, np.complex128),))


# ----------------------------------------------------------------------------- float64 normals

def test_float64_normals_match_jax_x64():
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True), jax.threefry_partitionable(False):
        want = np.asarray(jax.random.normal(jax.random.PRNGKey(7), (20000,), np.float64))
    got = jr.normal(jr.PRNGKey(7), (20000,), np.float64)
    rel = np.abs(got - want) / np.abs(want)
    # JAX's own float64 erfinv is off by up to ~1e-13 in the tails; ours by ~5e-15
    assert np.median(rel) < 1e-15 and rel.max() < 1e-12


def test_float64_erfinv_is_accurate_to_a_few_ulps():
    special = pytest.importorskip("scipy.special")
    from fnad.random import _math as R
    y = np.concatenate([np.linspace(-0.9999, 0.9999, 4001), 1 - np.logspace(-16, -1, 100),
                        -1 + np.logspace(-16, -1, 100), [0.0, 5e-324]])
    got, want = R.erfinv(np, y), special.erfinv(y)
    assert (np.abs(got - want) <= 64 * np.spacing(np.abs(want))).all()
    np.testing.assert_array_equal(R.erfinv(np, np.array([1.0, -1.0])), [np.inf, -np.inf])
    assert R.erfinv(np, np.ones((2, 0))).shape == (2, 0)


# ----------------------------------------------------------------------------- distributions

P5 = np.array([0.1, 0.2, 0.3, 0.2, 0.2], np.float32)
COV = np.array([[2.0, 0.5], [0.5, 1.0]])
DRAWS = [("exponential", ((5,),), {}), ("laplace", ((5,),), {}), ("logistic", ((5,),), {}),
         ("cauchy", ((5,),), {}), ("rademacher", ((8,),), {}), ("t", (3.0, (5,)), {}),
         ("beta", (2.0, 3.0, (5,)), {}), ("dirichlet", (np.array([1.0, 2.0, 3.0]), (4,)), {}),
         ("chisquare", (3.0, (5,)), {}), ("f", (3.0, 4.0, (5,)), {}),
         ("pareto", (2.0, (5,)), {}), ("lognormal", (0.5, (5,)), {}), ("maxwell", ((5,),), {}),
         ("double_sided_maxwell", (0.0, 1.0, (5,)), {}), ("weibull_min", (1.0, 2.0, (5,)), {}),
         ("rayleigh", (1.0, (5,)), {}), ("wald", (1.0, (5,)), {}),
         ("triangular", (0.0, 0.3, 1.0, (5,)), {}), ("geometric", (0.3, (5,)), {}),
         ("generalized_normal", (3.0, (5,)), {}), ("ball", (3,), {"shape": (4,)}),
         ("orthogonal", (3,), {}), ("orthogonal", (3,), {"m": 5}),
         ("multivariate_normal", (np.zeros(2), COV, (4,)), {}),
         ("multivariate_normal", (np.zeros(2), COV, (4,)), {"method": "eigh"}),
         ("gamma", (np.array([0.2, 1.0, 5.0, 100.0]),), {}), ("gamma", (2.0, (50,)), {}),
         ("loggamma", (0.5, (4,)), {}), ("choice", (10, (4,)), {"replace": False}),
         ("choice", (np.arange(5.0, dtype=np.float32), (6,)), {"p": P5}),
         ("choice", (5, (4,)), {"replace": False, "p": P5}),
         ("poisson", (3.5, (8,)), {}), ("poisson", (np.array([0.0, 1.0, 20.0, 300.0]),), {})]


# JAX compiles each of these gamma-based samplers for seconds: the slow run checks them
_SLOW = {"t", "beta", "dirichlet", "chisquare", "f", "generalized_normal", "ball"}


@pytest.mark.parametrize("name, args, kw", [
    pytest.param(*d, id=f"{d[0]}-{i}",
                 marks=[pytest.mark.slow] if d[0] in _SLOW or i in (25, 32) else [])
    for i, d in enumerate(DRAWS)])
def test_draws_match_jax(name, args, kw):
    jax = pytest.importorskip("jax")
    with jax.threefry_partitionable(False):
        want = np.asarray(getattr(jax.random, name)(jax.random.PRNGKey(3), *args, **kw))
    got = getattr(jr, name)(jr.PRNGKey(3), *args, **kw)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


@pytest.mark.slow  # JAX compiles its gamma sampler and gradient for ~20 s
def test_gamma_implicit_gradient_matches_jax():
    jax = pytest.importorskip("jax")
    alphas = np.array([0.2, 1.0, 7.0, 300.0], np.float32)
    with jax.threefry_partitionable(False):
        want = jax.vmap(jax.grad(lambda a: jax.random.gamma(jax.random.PRNGKey(1), a)))(alphas)
        want_log = jax.grad(lambda a: jax.random.loggamma(jax.random.PRNGKey(1), a,
                                                          (20,)).sum())(0.3)
        want_beta = jax.grad(lambda a: jax.random.beta(jax.random.PRNGKey(2), a, 2.0,
                                                       (10,)).sum())(1.5)
    got = fnad.vmap(fnad.grad(lambda a: jr.gamma(jr.PRNGKey(1), a)))(alphas)
    np.testing.assert_allclose(got, want, rtol=1e-4)
    got_log = fnad.grad(lambda a: jr.loggamma(jr.PRNGKey(1), a, (20,)).sum())(np.float32(0.3))
    np.testing.assert_allclose(got_log, want_log, rtol=1e-4)
    got_beta = fnad.grad(lambda a: jr.beta(jr.PRNGKey(2), a, 2.0, (10,)).sum())(np.float32(1.5))
    np.testing.assert_allclose(got_beta, want_beta, rtol=1e-4)


def test_gamma_gradient_is_the_implicit_derivative():
    # d/da of the a-quantile map at fixed u: finite differences through the inverse CDF
    special = pytest.importorskip("scipy.special")
    a = np.array([0.5, 2.0, 30.0])
    x = jr.gamma(KEY, a, dtype=np.float64)
    g = fnad.jacfwd(lambda a: jr.gamma(KEY, a, dtype=np.float64))(a).diagonal()
    u = special.gammainc(a, x)
    h = 1e-6 * a
    fd = (special.gammaincinv(a + h, u) - special.gammaincinv(a - h, u)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-5)


def test_draws_under_jit_vmap_and_in_parameters():
    k = jr.PRNGKey(5)
    np.testing.assert_array_equal(fnad.jit(lambda k, a: jr.gamma(k, a, (3,)))(k, np.float32(2)),
                                  jr.gamma(k, np.float32(2), (3,)))
    keys = jr.split(k, 3)
    got = fnad.vmap(lambda k: jr.t(k, 4.0, (2,)))(keys)
    np.testing.assert_array_equal(got, np.stack([jr.t(kk, 4.0, (2,)) for kk in keys]))
    np.testing.assert_array_equal(fnad.jit(lambda k: jr.poisson(k, 4.0, (5,)))(k),
                                  jr.poisson(k, 4.0, (5,)))
    g = fnad.grad(lambda m: jr.multivariate_normal(k, m, COV, (3,)).sum())(np.zeros(2))
    np.testing.assert_allclose(g, [3.0, 3.0])
    w = fnad.grad(lambda al: jr.dirichlet(k, al)[0])(np.array([1.0, 2.0, 3.0]))
    assert w.shape == (3,) and np.isfinite(w).all()


def test_distribution_moments():
    k = jr.PRNGKey(11)
    n = 20000
    assert abs(jr.gamma(k, 3.0, (n,)).mean() - 3.0) < 0.06
    assert abs(jr.beta(k, 2.0, 6.0, (n,)).mean() - 0.25) < 0.005
    assert abs(jr.poisson(k, 7.0, (n,)).mean() - 7.0) < 0.1
    assert abs(jr.poisson(k, 50.0, (n,)).var() - 50.0) < 2.5
    assert abs(jr.exponential(k, (n,)).mean() - 1.0) < 0.03
    d = jr.dirichlet(k, np.array([1.0, 1.0, 2.0]), (n,))
    np.testing.assert_allclose(d.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(d.mean(0), [0.25, 0.25, 0.5], atol=0.01)
    b = jr.ball(k, 3, shape=(1000,))
    assert (np.linalg.norm(b, axis=-1) <= 1 + 1e-6).all()
    q = jr.orthogonal(k, 4, dtype=np.float64)
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=1e-12)
    c = jr.choice(k, 5, (n,), p=np.array([0.5, 0.5, 0.0, 0.0, 0.0]))
    assert set(np.unique(c)) == {0, 1}


def test_keys_and_errors():
    k = jr.key(0)
    np.testing.assert_array_equal(jr.split(k, (2, 3)), jr.split(k, 6).reshape(2, 3, 2))
    assert jr.key_data(k) is k and jr.clone(k) is k
    np.testing.assert_array_equal(jr.wrap_key_data(np.array([0, 42], np.uint32)), jr.PRNGKey(42))
    with pytest.raises(TypeError, match="key_data"):
        jr.key_data(np.zeros(3))
    with pytest.raises(ValueError, match="impl"):
        jr.wrap_key_data(k, impl="rbg")
    with pytest.raises(ValueError, match="replace=False"):
        jr.choice(k, 3, (4,), replace=False)
    with pytest.raises(TypeError, match="shape must be a sequence"):
        jr.choice(k, 3, 4)
    with pytest.raises(ValueError, match="broadcast"):
        jr.gamma(k, np.ones(3), (2,))
    with pytest.raises(ValueError, match="cov"):
        jr.multivariate_normal(k, np.zeros(2), np.eye(3))
    with pytest.raises(TypeError, match="integer"):
        jr.poisson(k, 1.0, (2,), dtype=np.float32)
