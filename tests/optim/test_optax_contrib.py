"""fnad_optim.contrib (schedule-free, Prodigy, Muon) and lookahead against optax (an
optional oracle), in float64: 50 steps on random gradient trees, updates (and states, where
the layouts are optax's) compared after each step to 1e-10; and the same inside fnad.jit."""

import numpy as np
import pytest

import fnad
import fnad_optim as fo
from fnad_optim.contrib._muon import orthogonalize_via_newton_schulz

jax = pytest.importorskip("jax")
optax = pytest.importorskip("optax")
jnp = jax.numpy
from tests.optim.optax_x64 import x64  # noqa: E402, F401  (autouse: float64 in jax)


def _params():
    rng = np.random.default_rng(0)
    return {"w": rng.normal(size=(4, 3)), "v": rng.normal(size=(3, 5)),
            "b": rng.normal(size=3), "s": np.float64(0.5)}


def _muon_dims(m, params):
    """Muon for "w" (the default axes) and "v" (transposed: rows are axis 1), AdamW else."""
    dn = m.contrib.MuonDimensionNumbers
    return {k: dn() if k == "w" else dn(1, 0) if k == "v" else None for k in params}


def _grads(step, like):
    rng = np.random.default_rng(100 + step)
    return fnad.tree_map(lambda x: rng.normal(size=np.shape(x)) + 0.1 * np.asarray(x), like)


CASES = {  # name: (make(module), whether the state layout is optax's)
    "schedule_free_adamw": (lambda m: m.contrib.schedule_free_adamw(
        1e-2, weight_decay=1e-3), False),
    "schedule_free_adamw_warmup": (lambda m: m.contrib.schedule_free_adamw(
        1e-2, warmup_steps=5, weight_decay=1e-3), False),
    "schedule_free_sgd": (lambda m: m.contrib.schedule_free_sgd(
        0.1, weight_decay=1e-3), False),
    "schedule_free_sgd_warmup": (lambda m: m.contrib.schedule_free_sgd(
        0.1, warmup_steps=5), False),
    "schedule_free_adam_b1_0": (lambda m: m.contrib.schedule_free(
        m.adam(1e-2, b1=0.0), 1e-2, b1=0.95, weight_lr_power=1.0), False),
    "prodigy": (lambda m: m.contrib.prodigy(), True),
    "prodigy_options": (lambda m: m.contrib.prodigy(
        m.linear_schedule(1.0, 0.1, 40), beta3=0.99, weight_decay=0.1,
        safeguard_warmup=True, estim_lr_coef=2.0), True),
    "muon": (lambda m: m.contrib.muon(0.02, weight_decay=0.1), True),
    "muon_plain_adaptive": (lambda m: m.contrib.muon(
        0.02, nesterov=False, adaptive=True, consistent_rms=0.2, adam_learning_rate=1e-3),
        True),
    "muon_aol": (lambda m: m.contrib.muon(0.02, preconditioning="aol"), True),
    "muon_schatten_dion": (lambda m: m.contrib.muon(0.02, ns_coeffs="dion",
                                                    preconditioning="schatten"), True),
    "muon_spectral": (lambda m: m.contrib.muon(0.02, preconditioning="spectral",
                                               ns_steps=4), True),
    "muon_dims_fn": (lambda m: m.contrib.muon(
        0.02, muon_weight_dimension_numbers=lambda p: _muon_dims(m, p)), True),
    "lookahead": (lambda m: m.lookahead(m.adam(1e-2), 3, 0.5), True),
    "lookahead_reset": (lambda m: m.lookahead(m.sgd(0.05, momentum=0.9), 4, 0.3,
                                              reset_state=True), False),
}


# optax evaluates warmup_constant_schedule in float32 even with x64 (0.004 is
# 0.004000000189989805 there), so the warmup cases agree to float32's precision only.
TOL = {"schedule_free_adamw_warmup": 1e-6, "schedule_free_sgd_warmup": 1e-6}


def _wrap(name, params, m):
    if name.startswith("lookahead"):
        return m.LookaheadParams.init_synced(params)
    return params


def _fast(name, params):
    return params.fast if name.startswith("lookahead") else params


def _close(a, b, tol=1e-10):
    la, lb = fnad.tree_leaves(a), jax.tree.leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_allclose(np.asarray(x, np.float64), np.asarray(y, np.float64),
                                   rtol=tol, atol=tol)


@pytest.mark.parametrize("name", list(CASES))
def test_50_steps_match_optax(name):
    make, same_layout = CASES[name]
    tol = TOL.get(name, 1e-10)
    oj, of = make(optax), make(fo)
    pf = _wrap(name, _params(), fo)
    pj = jax.tree.map(jnp.asarray, _wrap(name, _params(), optax))
    sj, sf = oj.init(pj), of.init(pf)
    update_j = jax.jit(oj.update)
    step_f = fnad.jit(of.update)
    sjit = of.init(pf)
    for step in range(50):
        g = _grads(step, _fast(name, pf))
        uj, sj = update_j(jax.tree.map(jnp.asarray, g), sj, pj)
        uf, sf = of.update(g, sf, pf)
        _close(uf, uj, tol)
        if same_layout:
            _close(sf, sj, tol)
        ujit, sjit = step_f(g, sjit, pf)
        _close(ujit, uf, 1e-12)
        pj, pf = optax.apply_updates(pj, uj), fo.apply_updates(pf, uf)
    if name.startswith("schedule_free"):
        _close(fo.contrib.schedule_free_eval_params(sf, pf),
               optax.contrib.schedule_free_eval_params(sj, pj), tol)


def test_muon_state_is_optax_partition_state():
    """After 50 steps: the same classes and field names, and the same leaves, as optax's
    (optax's masked params trees hold MaskedNodes, which flatten to nothing)."""
    make = lambda m: m.contrib.muon(0.02, weight_decay=0.1,
                                    muon_weight_dimension_numbers=lambda p: _muon_dims(m, p))
    oj, of = make(optax), make(fo)
    pf, pj = _params(), jax.tree.map(jnp.asarray, _params())
    sj, sf = oj.init(pj), of.init(pf)
    update_j = jax.jit(oj.update)
    for step in range(50):
        g = _grads(step, pf)
        uj, sj = update_j(jax.tree.map(jnp.asarray, g), sj, pj)
        uf, sf = of.update(g, sf, pf)
        pj, pf = optax.apply_updates(pj, uj), fo.apply_updates(pf, uf)

    def names(state):
        if hasattr(state, "_fields"):
            return (type(state).__name__, {f: names(getattr(state, f)) for f in state._fields
                                           if f not in ("mu", "nu")})
        if isinstance(state, dict):
            return {k: names(v) for k, v in state.items()}
        if isinstance(state, tuple):
            return tuple(names(v) for v in state)
        return "leaf"

    assert type(sf).__name__ == type(sj).__name__ == "PartitionState"
    assert names(sf) == names(sj)
    for label in ("muon", "adam"):
        _close(sf.inner_states[label], sj.inner_states[label])


def test_orthogonalize_matches_optax_with_dimension_numbers():
    x = np.random.default_rng(1).normal(size=(2, 3, 4, 5))
    dims = fo.contrib.MuonDimensionNumbers(reduction_axis=(1,), output_axis=(2, 3))
    coeffs = (3.4445, -4.7750, 2.0315)
    got = orthogonalize_via_newton_schulz(x, np.asarray(coeffs), dimension_numbers=dims)
    want = optax.contrib._muon.orthogonalize_via_newton_schulz(
        jnp.asarray(x), jnp.asarray(coeffs),
        dimension_numbers=optax.contrib.MuonDimensionNumbers((1,), (2, 3)))
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-10, atol=1e-10)


def test_contrib_errors_name_the_function():
    with pytest.raises(ValueError, match="schedule_free: b1 must be > 0"):
        fo.contrib.schedule_free(fo.sgd(0.1), 0.1, b1=0.0)
    with pytest.raises(ValueError, match="muon: unknown ns_coeffs preset"):
        fo.contrib.muon(0.02, ns_coeffs="fast")
    with pytest.raises(ValueError, match="lookahead: sync_period"):
        fo.lookahead(fo.sgd(0.1), 0, 0.5)
    with pytest.raises(TypeError, match="LookaheadParams"):
        opt = fo.lookahead(fo.sgd(0.1), 2, 0.5)
        p = _params()
        opt.update(p, opt.init(p), p)
