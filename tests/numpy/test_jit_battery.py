"""jit over the op battery (tests/numpy/cases*.py): for every case, `jit(f)` gives what `f`
gives, bit for bit (the same implementations run, NaN where NaN); `grad(jit(g))` and
`jit(grad(g))` give `grad(g)` for g = sum of f's outputs times fixed random weights; and
`make_graph(f)` prints. Functions whose result shape depends on values refuse to stage with
`AbstractEvalError`; the few that need values to choose an algorithm refuse with
`ConcretizationError` naming themselves."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad._core.abstract import AbstractEvalError
from tests.numpy import cases, cases_linalg, cases_scipy
from tests.numpy.battery import leaves
from tests.numpy.test_nondiff import BINARY, UNARY

ALL_CASES = cases.CASES + cases_linalg.CASES + cases_scipy.CASES

# Need the values to decide how much work to do: refused inside jit with a clear error.
REFUSED = {"scipy.linalg.expm": "number of squarings",
           "scipy.integrate.odeint": "adaptive steps"}
# Whose result dtype depends on the values (a real matrix with a negative eigenvalue has a
# complex square root): refused when the staged program runs, naming the way out.
DTYPE_BY_VALUE = {"negative eigenvalues": "pass the matrix as complex"}

# Rules that pick a cheaper form by looking at the values (a quotient ans / x where no input
# is zero or tiny); staged, no value is known, so they take their general form, exact at
# zeros, equal to float rounding.
GRAD_BY_ROUNDING = {"prod", "cumprod", "cumulative_prod", "at.multiply", "linalg.det",
                    "scipy.linalg.det"}
# On plain arrays these call NumPy's own function, which associates differently (multi_dot
# chooses its order over 4+ arrays; vector_norm over a tuple of axes reshapes first; lstsq
# is LAPACK's gelsd there, an SVD-based formula of fnad.numpy ops when staged).
FWD_BY_ROUNDING = {"linalg.multi_dot", "linalg.vector_norm", "linalg.lstsq"}
RTOL = 1e-12


def _args(case):
    return tuple(np.asarray(a, np.float64) for a in case.args)


def _equal(actual, expect, name, exact=True):
    a, e = leaves(actual), leaves(expect)
    assert len(a) == len(e), name
    for x, y in zip(a, e):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape and x.dtype == y.dtype, (name, x.shape, y.shape, x.dtype,
                                                           y.dtype)
        if exact:
            np.testing.assert_array_equal(x, y, err_msg=name)
        else:
            np.testing.assert_allclose(x, y, rtol=RTOL, atol=RTOL * max(1.0, np.max(np.abs(
                y), initial=0.0)), err_msg=name)


def _weighted(fun, out):
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal(np.shape(o)) for o in leaves(out)]

    def g(*args):
        return sum(fnp.sum(o * w) for o, w in zip(leaves(fun(*args)), ws))
    return g


def _check_case(case):
    args = _args(case)
    if case.name in REFUSED:
        with pytest.raises(fnad.ConcretizationError, match=REFUSED[case.name]):
            fnad.jit(case.fun)(*args)
        return
    for what, way_out in DTYPE_BY_VALUE.items():
        if what in case.id:
            with pytest.raises(ValueError, match=way_out):
                fnad.jit(case.fun)(*args)
            return
    expect = case.fun(*args)
    _equal(fnad.jit(case.fun)(*args), expect, case.id, case.name not in FWD_BY_ROUNDING)
    assert str(fnad.make_graph(case.fun)(*args)).startswith("{ lambda")
    g = _weighted(case.fun, expect)
    argnums = tuple(range(len(args)))
    grads = fnad.grad(g, argnums=argnums)(*args)
    _equal(fnad.grad(fnad.jit(g), argnums=argnums)(*args), grads, "grad(jit) " + case.id)
    _equal(fnad.jit(fnad.grad(g, argnums=argnums))(*args), grads, "jit(grad) " + case.id,
           case.name not in GRAD_BY_ROUNDING)


_STRIDE = 4  # the default run takes every 4th case (all names still seen); slow: all of them


@pytest.mark.parametrize("case", ALL_CASES[::_STRIDE], ids=lambda c: c.id)
def test_jit_matches_eager(case):
    _check_case(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for i, c in enumerate(ALL_CASES) if i % _STRIDE],
                         ids=lambda c: c.id)
def test_jit_matches_eager_rest(case):
    _check_case(case)


def test_every_name_of_the_battery_is_in_the_default_run():
    names = {c.name for c in ALL_CASES}
    default = {c.name for c in ALL_CASES[::_STRIDE]}
    missing = names - default
    for name in sorted(missing):  # a name with fewer cases than the stride: check one here
        _check_case(next(c for c in ALL_CASES if c.name == name))


X = np.array([[-1.7, 0.2, 2.5], [0.4, -0.6, 3.3]])


@pytest.mark.parametrize("name", [n for n in UNARY if n not in ("nonzero", "argwhere",
                                                              "flatnonzero")])
def test_nondiff_unary_under_jit(name):
    f = getattr(fnp, name)
    _equal(fnad.jit(f)(X), f(X), name)


@pytest.mark.parametrize("name", BINARY)
def test_nondiff_binary_under_jit(name):
    f = getattr(fnp, name)
    _equal(fnad.jit(f)(X, X[::-1] * 0.5), f(X, X[::-1] * 0.5), name)


@pytest.mark.parametrize("fun, name", [
    (fnp.nonzero, "nonzero"), (fnp.argwhere, "argwhere"), (fnp.flatnonzero, "flatnonzero"),
    (lambda x: x[x > 0], "getitem"),
    (lambda x: fnp.repeat(x, fnp.asarray(x > 0, dtype=int).ravel()), "repeat"),
])
def test_value_dependent_shapes_refuse_to_stage(fun, name):
    with pytest.raises(AbstractEvalError, match=f"{name}.*depends on the values"):
        fnad.jit(fun)(X)
    with pytest.raises(AbstractEvalError, match=name):
        fnad.make_graph(fun)(X)


def test_a_constant_mask_stages():
    mask = X > 0
    f = fnad.jit(lambda x: fnp.sum(x[mask] ** 2))
    assert f(X) == np.sum(X[mask] ** 2)
    np.testing.assert_array_equal(fnad.grad(f)(X), np.where(mask, 2 * X, 0.0))
