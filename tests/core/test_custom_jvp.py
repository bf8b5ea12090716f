"""fnad.custom_jvp (issue 33): the rule, not autodiff of the function, under jvp, grad, vjp,
jacfwd/jacrev/hessian, vmap and jit in every order, defjvps, nondiff_argnums, keyword
calls, its errors, and JAX's results where jax is installed."""

import functools

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp

X = np.array([0.3, 1.0, -2.0])
Y = np.array([1.0, 2.0, -1.0])


@fnad.custom_jvp
def marked(x):
    """sin, whose declared derivative is 3 (not cos): every path must use the rule."""
    return fnp.sin(x)


@marked.defjvp
def _marked_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return marked(x), 3.0 * t


def _sum(f):
    return lambda x: fnp.sum(f(x))


@pytest.mark.parametrize("path", [
    "grad", "jit(grad)", "grad(jit)", "vmap(grad)", "jacrev", "jacfwd", "jvp", "jit(jvp)",
    "jvp(jit)", "vjp", "jit(vmap(grad))", "grad(vmap)"])
def test_every_path_uses_the_rule(path):
    g1 = fnad.grad(marked)
    want = np.full(3, 3.0)
    got = {
        "grad": lambda: fnad.grad(_sum(marked))(X),
        "jit(grad)": lambda: fnad.jit(fnad.grad(_sum(marked)))(X),
        "grad(jit)": lambda: fnad.grad(_sum(fnad.jit(marked)))(X),
        "vmap(grad)": lambda: fnad.vmap(g1)(X),
        "jacrev": lambda: np.diag(fnad.jacrev(marked)(X)),
        "jacfwd": lambda: np.diag(fnad.jacfwd(marked)(X)),
        "jvp": lambda: fnad.jvp(marked, (X,), (np.ones(3),))[1],
        "jit(jvp)": lambda: fnad.jit(lambda x: fnad.jvp(marked, (x,), (np.ones(3),))[1])(X),
        "jvp(jit)": lambda: fnad.jvp(fnad.jit(marked), (X,), (np.ones(3),))[1],
        "vjp": lambda: fnad.vjp(marked, X)[1](np.ones(3))[0],
        "jit(vmap(grad))": lambda: fnad.jit(fnad.vmap(g1))(X),
        "grad(vmap)": lambda: fnad.grad(_sum(fnad.vmap(marked)))(X),
    }[path]()
    np.testing.assert_array_equal(got, want)


def test_values_are_the_function_s():
    for f in (marked, fnad.jit(marked), fnad.vmap(marked)):
        np.testing.assert_allclose(f(X), np.sin(X), rtol=1e-15)


@fnad.custom_jvp
def f2(x, y):
    return fnp.sin(x) * y


@f2.defjvp
def _f2_jvp(primals, tangents):
    (x, y), (xd, yd) = primals, tangents
    return f2(x, y), fnp.cos(x) * xd * y + fnp.sin(x) * yd


def test_two_arguments_and_higher_order():
    gx, gy = fnad.grad(lambda x, y: fnp.sum(f2(x, y)), argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(gx, np.cos(X) * Y, rtol=1e-15)
    np.testing.assert_allclose(gy, np.sin(X), rtol=1e-15)
    hess = np.diag(-np.sin(X) * Y)
    for h in (fnad.hessian(lambda x: fnp.sum(f2(x, Y))),
              fnad.jacrev(fnad.jacrev(lambda x: fnp.sum(f2(x, Y)))),
              fnad.jit(fnad.hessian(lambda x: fnp.sum(f2(x, Y))))):
        np.testing.assert_allclose(h(X), hess, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(fnad.vmap(f2, in_axes=(0, None))(X, Y[0]), np.sin(X) * Y[0])


def test_defjvps():
    @fnad.custom_jvp
    def h(x, y):
        return x * y

    h.defjvps(lambda xd, ans, x, y: 2.0 * xd * y, None)  # a marked rule for x, none for y
    gx, gy = fnad.grad(lambda x, y: fnp.sum(h(x, y)), argnums=(0, 1))(X, Y)
    np.testing.assert_array_equal(gx, 2.0 * Y)
    np.testing.assert_array_equal(gy, np.zeros(3))
    np.testing.assert_array_equal(fnad.jvp(h, (X, Y), (np.ones(3), np.ones(3)))[1], 2 * Y)


def test_nondiff_argnums_and_keywords():
    @functools.partial(fnad.custom_jvp, nondiff_argnums=(0,))
    def app(f, x, scale=1.0):
        return f(x) * scale

    @app.defjvp
    def _app_jvp(f, primals, tangents):
        (x, scale), (xd, sd) = primals, tangents
        out = app(f, x, scale)
        return out, 10.0 * xd * scale + f(x) * sd  # marked: 10 instead of f'

    g = fnad.grad(lambda x: fnp.sum(app(fnp.tanh, x, scale=2.0)))(X)
    np.testing.assert_array_equal(g, np.full(3, 20.0))
    g = fnad.jit(fnad.vmap(fnad.grad(lambda x: app(fnp.tanh, x))))(X)
    np.testing.assert_array_equal(g, np.full(3, 10.0))


def test_integer_arguments_get_zero_tangents():
    @fnad.custom_jvp
    def power(x, n):
        return x ** n

    @power.defjvp
    def _power_jvp(primals, tangents):
        (x, n), (xd, nd) = primals, tangents
        assert nd.dtype.kind == "i"
        return power(x, n), n * x ** (n - 1) * xd

    np.testing.assert_allclose(fnad.grad(lambda x: power(x, np.int64(3)))(2.0), 12.0)
    np.testing.assert_allclose(fnad.jvp(lambda x: power(x, np.int64(3)), (2.0,), (1.0,))[1],
                               12.0)


def test_errors():
    @fnad.custom_jvp
    def bare(x):
        return x

    with pytest.raises(TypeError, match="custom_jvp function bare has no rule yet"):
        bare(X)

    @fnad.custom_jvp
    def bad(x):
        return x

    bad.defjvp(lambda p, t: p[0])
    with pytest.raises(TypeError, match="must return a pair"):
        fnad.jvp(bad, (X,), (X,))
    bad.defjvp(lambda p, t: (p[0], (t[0], t[0])))
    with pytest.raises(TypeError, match="differ in structure"):
        fnad.grad(lambda x: fnp.sum(bad(x)))(X)

    @functools.partial(fnad.custom_jvp, nondiff_argnums=(1,))
    def nd(x, n):
        return x * n

    nd.defjvp(lambda n, p, t: (p[0] * n, t[0] * n))
    with pytest.raises(TypeError, match="argument 1 is in nondiff_argnums but holds a traced"):
        fnad.grad(lambda n: fnp.sum(nd(X, n)))(2.0)


def _log1pexp(mod, np_):
    """JAX's documentation example, written for `mod` (fnad or jax)."""
    @mod.custom_jvp
    def log1pexp(x):
        return np_.log(1.0 + np_.exp(x))

    @log1pexp.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), (1.0 - 1.0 / (1.0 + np_.exp(x))) * t

    return log1pexp


def test_log1pexp_matches_jax():
    """JAX's documentation example: the rule keeps the gradient finite at large x."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    log1pexp, log1pexp_j = _log1pexp(fnad, fnp), _log1pexp(jax, jax.numpy)

    xs = np.array([0.0, 10.0, 100.0])
    with np.errstate(over="ignore"):
        ours = fnad.vmap(fnad.grad(log1pexp))(xs)
        ours_jit = fnad.jit(fnad.vmap(fnad.grad(log1pexp)))(xs)
    theirs = jax.vmap(jax.grad(log1pexp_j))(xs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-15)
    np.testing.assert_allclose(ours_jit, theirs, rtol=1e-15)
    np.testing.assert_allclose(fnad.hessian(lambda x: log1pexp(x))(1.5),
                               jax.hessian(log1pexp_j)(1.5), rtol=1e-14)
