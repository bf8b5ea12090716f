"""L-BFGS and the line searches against optax (an optional oracle), in float64.

Each iteration is compared from the same state: optax's state after iteration k is read
into fnad_optim's layout (the same NamedTuples, leaf by leaf), both take step k+1, and the
updates and states must agree to 1e-10. That checks every iteration of optax's path. Run
freely from the start, the two paths part slowly: the objectives' own rounding differs
(XLA and NumPy sum in different orders, 1e-16), and L-BFGS on Rosenbrock amplifies it
about threefold per iteration, so the free runs are compared to 1e-6 and by final loss.
Iterations stop before convergence: at a minimum the search's accept/reject decisions
compare values equal to the last bit, and the two sides may decide either way there.
"""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad_optim as fo

jax = pytest.importorskip("jax")
optax = pytest.importorskip("optax")
jnp = jax.numpy
from tests.optim.optax_x64 import x64  # noqa: E402, F401  (autouse: float64 in jax)


def _rosenbrock(xp):
    return lambda p: xp.sum(100.0 * (p[1:] - p[:-1] ** 2) ** 2 + (1.0 - p[:-1]) ** 2)


_RNG = np.random.default_rng(0)
_X = _RNG.normal(size=(40, 5))
_Y = (_RNG.random(40) < 0.5).astype(np.float64)


def _logistic(xp):
    def f(p, x=_X, y=_Y):
        z = x @ p["w"] + p["b"]
        return xp.mean(xp.logaddexp(0.0, z) - y * z) + 0.01 * xp.sum(p["w"] ** 2)
    return f


PROBLEMS = {  # objective, start, iterations compared (before convergence)
    "rosenbrock": (_rosenbrock, np.array([-1.2, 1.0, -0.5, 0.8]), 30),
    "logistic": (_logistic, {"w": np.zeros(5), "b": np.float64(0.0)}, 8),
}

SOLVERS = {
    "zoom": lambda m: m.lbfgs(),
    "backtracking": lambda m: m.lbfgs(
        linesearch=m.scale_by_backtracking_linesearch(20, store_grad=True)),
    "zoom_memory3_noscale": lambda m: m.lbfgs(memory_size=3, scale_init_precond=False),
}
_SLOW = pytest.mark.slow  # each case compiles optax's step (seconds); the default run keeps 2
CASES = [("rosenbrock", "zoom"), ("logistic", "backtracking"),
         pytest.param("rosenbrock", "zoom_memory3_noscale", marks=_SLOW),
         pytest.param("rosenbrock", "backtracking", marks=_SLOW),
         pytest.param("logistic", "zoom", marks=_SLOW),
         pytest.param("logistic", "zoom_memory3_noscale", marks=_SLOW)]


def _to_fnad(like, tree):
    leaves = [np.array(x) for x in jax.tree.leaves(tree)]
    return fnad.tree_unflatten(fnad.tree_structure(like), leaves)


def _close(a, b, tol):
    la, lb = fnad.tree_leaves(a), jax.tree.leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_allclose(np.asarray(x, np.float64), np.asarray(y, np.float64),
                                   rtol=tol, atol=tol)


def _step(opt, value_and_grad, f, params, state):
    value, grad = value_and_grad(params, state=state)
    updates, state = opt.update(grad, state, params, value=value, grad=grad, value_fn=f)
    return updates, state


def _optax_step(opt, f):
    """optax's step, jitted once (eager, each while_loop would compile on every call)."""
    value_and_grad = optax.value_and_grad_from_state(f)
    return jax.jit(lambda params, state: _step(opt, value_and_grad, f, params, state))


@pytest.mark.parametrize("problem, solver", CASES)
def test_each_iteration_matches_optax(problem, solver):
    make, x0, steps = PROBLEMS[problem]
    fj, ff = make(jnp), make(fnp)
    oj, of = SOLVERS[solver](optax), SOLVERS[solver](fo)
    step_j, vgf = _optax_step(oj, fj), fo.value_and_grad_from_state(ff)
    pj = jax.tree.map(jnp.asarray, x0)
    sj, sf = oj.init(pj), of.init(x0)
    _close(sf, sj, 0)  # the same layout and initial values
    for _ in range(steps):
        uj, sj_next = step_j(pj, sj)
        uf, sf_next = _step(of, vgf, ff, _to_fnad(x0, pj), _to_fnad(sf, sj))
        _close(uf, uj, 1e-10)
        _close(sf_next, sj_next, 1e-10)
        pj, sj = optax.apply_updates(pj, uj), sj_next


@pytest.mark.parametrize("problem", ["rosenbrock", pytest.param("logistic", marks=_SLOW)])
def test_free_run_and_jit_match_optax(problem):
    make, x0, steps = PROBLEMS[problem]
    fj, ff = make(jnp), make(fnp)
    oj, of = optax.lbfgs(), fo.lbfgs()
    step_j, vgf = _optax_step(oj, fj), fo.value_and_grad_from_state(ff)

    def step(params, state):
        updates, state = _step(of, vgf, ff, params, state)
        return fo.apply_updates(params, updates), state

    jitted = fnad.jit(step)
    pj, pf, pjit = jax.tree.map(jnp.asarray, x0), x0, x0
    sj, sf, sjit = oj.init(pj), of.init(x0), of.init(x0)
    for _ in range(steps):
        uj, sj = step_j(pj, sj)
        pj = optax.apply_updates(pj, uj)
        pf, sf = step(pf, sf)
        pjit, sjit = jitted(pjit, sjit)
        _close(pf, pj, 1e-6)
        _close(pjit, pf, 1e-12)
    assert abs(float(ff(pf)) - float(fj(pj))) <= 1e-8 * max(1.0, abs(float(fj(pj))))


@pytest.mark.parametrize("search", [pytest.param("zoom", marks=_SLOW), "backtracking"])
def test_line_search_after_sgd_matches_optax(search):
    f, x0 = _rosenbrock, np.array([-1.2, 1.0, 0.3])
    fj, ff = f(jnp), f(fnp)

    def make(m):
        ls = (m.scale_by_zoom_linesearch(15) if search == "zoom"
              else m.scale_by_backtracking_linesearch(15))
        return m.chain(m.sgd(1e-3), ls)

    oj, of = make(optax), make(fo)

    @jax.jit
    def step_j(pj, sj):
        vj, gj = jax.value_and_grad(fj)(pj)
        return oj.update(gj, sj, pj, value=vj, grad=gj, value_fn=fj)

    pj, sj, sf = jnp.asarray(x0), oj.init(jnp.asarray(x0)), of.init(x0)
    for _ in range(20):
        uj, sj_next = step_j(pj, sj)
        pf = np.array(pj)
        vf, gf = fnad.value_and_grad(ff)(pf)
        uf, sf_next = of.update(gf, _to_fnad(sf, sj), pf, value=vf, grad=gf, value_fn=ff)
        _close(uf, uj, 1e-10)
        _close(sf_next, sj_next, 1e-10)
        pj, sj = optax.apply_updates(pj, uj), sj_next


def test_extra_args_reach_value_fn():
    """Data passed to update as keyword arguments reaches value_fn (optax's convention)."""
    def fit(xp):
        return lambda p, x, y: xp.mean((x @ p - y) ** 2)

    x, y = _X, _X @ np.arange(5.0)
    oj, of = optax.lbfgs(), fo.lbfgs()

    @jax.jit
    def step_j(pj, sj):
        vj, gj = jax.value_and_grad(fit(jnp))(pj, x, y)
        return oj.update(gj, sj, pj, value=vj, grad=gj, value_fn=fit(jnp), x=x, y=y)

    pj, pf = jnp.zeros(5), np.zeros(5)
    sj, sf = oj.init(pj), of.init(pf)
    for _ in range(12):
        uj, sj = step_j(pj, sj)
        pj = optax.apply_updates(pj, uj)
        vf, gf = fnad.value_and_grad(fit(fnp))(pf, x, y)
        uf, sf = of.update(gf, sf, pf, value=vf, grad=gf, value_fn=fit(fnp), x=x, y=y)
        pf = fo.apply_updates(pf, uf)
    np.testing.assert_allclose(pf, np.asarray(pj), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(pf, np.arange(5.0), atol=1e-6)
