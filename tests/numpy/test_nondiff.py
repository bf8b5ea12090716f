"""Non-differentiable functions return plain values under every transform: no gradient
flows through them and nothing raises."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp

X = np.array([[-1.7, 0.2, 2.5], [0.4, -0.6, 3.3]])

UNARY = ["floor", "ceil", "round", "around", "rint", "trunc", "fix", "sign", "signbit",
         "isfinite", "isinf", "isnan", "logical_not", "argsort", "argmax", "argmin",
         "nonzero", "argwhere", "flatnonzero", "any", "all", "count_nonzero", "zeros_like",
         "ones_like", "isneginf", "isposinf", "isreal", "iscomplex", "spacing"]
BINARY = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
          "logical_and", "logical_or", "logical_xor", "floor_divide", "isclose", "heaviside"]


def _use(res, x):
    """A differentiable scalar that depends on x both directly and through `res`."""
    leaves = res if isinstance(res, tuple) else (res,)
    total = fnp.sum(x * x)
    for r in leaves:
        total = total + fnp.sum(fnp.asarray(r, dtype=np.float64)) * 0.0 + \
            fnp.sum(x * fnp.sum(fnp.asarray(r, dtype=np.float64)))
    return total


@pytest.mark.parametrize("name", UNARY)
def test_unary_no_gradient(name):
    f = getattr(fnp, name)
    res = f(X)
    expect = 2 * X + sum(np.sum(np.asarray(r, np.float64))
                         for r in (res if isinstance(res, tuple) else (res,)))
    np.testing.assert_allclose(fnad.grad(lambda x: _use(f(x), x))(X), expect)
    _, t = fnad.jvp(lambda x: fnp.asarray(f(x) if not isinstance(f(x), tuple) else f(x)[0],
                                          dtype=np.float64), (X,), (np.ones_like(X),))
    assert not np.any(t)


@pytest.mark.parametrize("name", BINARY)
def test_binary_no_gradient(name):
    f = getattr(fnp, name)
    y = X[::-1] * 0.5
    res = f(X, y)
    g = fnad.grad(lambda a, b: _use(f(a, b), a) + fnp.sum(b), argnums=(0, 1))(X, y)
    np.testing.assert_allclose(g[0], 2 * X + np.sum(np.asarray(res, np.float64)))
    np.testing.assert_array_equal(g[1], np.ones_like(y))


def test_sort_values_have_gradient_indices_do_not():
    g = fnad.grad(lambda x: fnp.sum(fnp.sort(x, axis=1) * np.arange(3.0)))(X)
    np.testing.assert_array_equal(g, [[0, 1, 2], [1, 0, 2]])
    g2 = fnad.grad(lambda x: fnp.sum(x[fnp.argsort(x[:, 0])] ** 2))(X)
    np.testing.assert_allclose(g2, 2 * X)


def test_comparison_operators_on_tracers():
    def f(x):
        mask = (x > 0) & (x < 3.0)
        return fnp.sum(fnp.where(mask, x, 0.0) * (x >= 0.2))
    np.testing.assert_array_equal(fnad.grad(f)(X), [[0, 1, 1], [1, 0, 0]])
