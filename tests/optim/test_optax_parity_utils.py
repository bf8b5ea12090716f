"""tree_utils, projections and the numeric helpers against optax (float64)."""

import numpy as np
import pytest

import fnad
import fnad_optim as fo
import fnad_optim.projections as fp
import fnad_optim.tree_utils as ft

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

R = np.random.default_rng(0)
A = {"w": R.normal(size=(3, 2)), "b": R.normal(size=4)}
B = {"w": R.normal(size=(3, 2)), "b": R.normal(size=4)}
POS = {"w": np.abs(A["w"]) + 0.1, "b": np.abs(A["b"]) + 0.1}


def _same(ours, theirs):
    la, lb = fnad.tree_leaves(ours), jax.tree.leaves(theirs)
    assert len(la) == len(lb)
    for a, b in zip(la, lb):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-14)


TREE_CASES = {
    "tree_add": (A, B, A), "tree_sub": (A, B), "tree_mul": (A, B), "tree_div": (A, POS),
    "tree_scale": (0.3, A), "tree_add_scale": (A, 0.3, B), "tree_vdot": (A, B),
    "tree_sum": (A,), "tree_max": (A,), "tree_min": (A,), "tree_size": (A,),
    "tree_norm": (A,), "tree_bias_correction": (A, 0.9, 3),
    "tree_update_moment": (A, B, 0.9, 2), "tree_update_infinity_moment": (A, B, 0.9, 1e-8),
    "tree_update_moment_per_elem_norm": (A, B, 0.9, 2), "tree_zeros_like": (A,),
    "tree_ones_like": (A,), "tree_full_like": (A, 2.5), "tree_clip": (A, -0.5, 0.5),
    "tree_conj": (A,), "tree_real": (A,), "tree_batch_shape": (A, (2,)),
    "tree_where": (True, A, B), "tree_cast": (A, np.float32),
}


@pytest.mark.parametrize("name", sorted(TREE_CASES))
def test_tree_utils_match_optax(name):
    args = TREE_CASES[name]
    _same(getattr(ft, name)(*args), getattr(optax.tree_utils, name)(*args))


@pytest.mark.parametrize("ord", [None, 1, np.inf])
def test_tree_norm_orders(ord):
    _same(ft.tree_norm(A, ord=ord), optax.tree_utils.tree_norm(A, ord=ord))
    _same(ft.tree_norm(A, ord=ord, squared=True),
          optax.tree_utils.tree_norm(A, ord=ord, squared=True))


def test_tree_misc():
    assert ft.tree_allclose(A, A) and not ft.tree_allclose(A, B)
    assert ft.tree_dtype(A) == np.float64
    assert ft.tree_dtype({"a": np.zeros(2, np.float32), "b": np.zeros(2)}, "highest") \
        == np.float64
    with pytest.raises(ValueError, match="tree_dtype"):
        ft.tree_dtype({"a": np.zeros(2, np.float32), "b": np.zeros(2)})
    r = ft.tree_random_like(fnad.random.PRNGKey(0), A)
    assert fnad.tree_structure(r) == fnad.tree_structure(A)
    assert r["w"].shape == (3, 2) and not np.allclose(r["w"], r["w"][0, 0])


PROJ_CASES = {
    "projection_box": (A, -0.3, 0.4), "projection_hypercube": (A, 0.5),
    "projection_non_negative": (A,), "projection_simplex": (A, 2.0),
    "projection_l1_sphere": (A, 1.5), "projection_l1_ball": (A, 1.5),
    "projection_l1_ball_inside": (A, 100.0), "projection_l2_sphere": (A, 1.5),
    "projection_l2_ball": (A, 1.5), "projection_linf_ball": (A, 0.2),
    "projection_vector": (A, B), "projection_hyperplane": (A, B, 0.7),
    "projection_halfspace": (A, B, 0.7),
}


@pytest.mark.parametrize("name", sorted(PROJ_CASES))
def test_projections_match_optax(name):
    fn = name.replace("_inside", "")
    args = PROJ_CASES[name]
    want = getattr(optax.projections, fn)(*args) if fn not in ("projection_box",
                                                               "projection_hypercube") else None
    if want is None:  # optax's box takes bounds as trees only; ours takes numbers too
        lo, hi = args[1:] if fn == "projection_box" else (0.0, args[1])
        want = optax.projections.projection_box(A, ft.tree_full_like(A, lo),
                                                ft.tree_full_like(A, hi))
    _same(getattr(fp, fn)(*args), want)
    _same(fnad.jit(lambda *a: getattr(fp, fn)(*a))(*args), want)


def test_numerics_match_optax():
    x = R.normal(size=5)
    for a, b in [(fo.safe_norm(x, 0.1), optax.safe_norm(x, 0.1)),
                 (fo.safe_norm(1e-3 * x, 0.1), optax.safe_norm(1e-3 * x, 0.1)),
                 (fo.safe_root_mean_squares(x, 0.1), optax.safe_root_mean_squares(x, 0.1)),
                 (fo.safe_int32_increment(np.int32(7)), optax.safe_int32_increment(7)),
                 (fo.safe_increment(np.int32(2**31 - 1)),
                  optax.safe_increment(np.int32(2**31 - 1))),
                 (fo.incremental_update(A, B, 0.1), optax.incremental_update(A, B, 0.1)),
                 (fo.periodic_update(A, B, 4, 2), optax.periodic_update(A, B, 4, 2)),
                 (fo.periodic_update(A, B, 5, 2), optax.periodic_update(A, B, 5, 2)),
                 (fo.update_moment(A, B, 0.9, 1), optax.update_moment(A, B, 0.9, 1))]:
        _same(a, b)
    g = fnad.grad(lambda v: fnad.numpy.sum(fo.safe_norm(v, 0.1)))(np.zeros(3))
    assert np.all(np.isfinite(g))


def test_scale_gradient():
    f = lambda x, s: fnad.numpy.sum(fo.scale_gradient({"x": x}, s)["x"] ** 2)
    np.testing.assert_allclose(fnad.grad(f)(np.array([1.0, 2.0]), 0.5), [1.0, 2.0])
    np.testing.assert_allclose(fnad.grad(f)(np.array([1.0, 2.0]), 0.0), [0.0, 0.0])
    np.testing.assert_allclose(fnad.grad(f)(np.array([1.0, 2.0]), 1.0), [2.0, 4.0])


def test_flatten_matches_optax():
    from tests.optim.optax_steps import run_parity
    run_parity(fo.flatten(fo.adam(1e-2)), optax.flatten(optax.adam(1e-2)), steps=10)


def test_power_iteration_matches_optax():
    m = R.normal(size=(5, 5))
    m = m @ m.T
    v0 = R.normal(size=5)
    lam, v = fo.power_iteration(m, v0=v0, num_iters=500, error_tolerance=1e-12)
    lam2, v2 = optax.power_iteration(m, v0=v0, num_iters=500, error_tolerance=1e-12)
    np.testing.assert_allclose(float(lam), float(lam2), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(v), np.asarray(v2), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(float(lam), np.linalg.eigvalsh(m)[-1], rtol=1e-10)
    tree_lam, _ = fo.power_iteration(lambda t: {"x": m @ t["x"]}, v0={"x": v0}, num_iters=500,
                                     error_tolerance=1e-12)
    np.testing.assert_allclose(float(tree_lam), float(lam), rtol=1e-12)


@pytest.mark.parametrize("cols", [None, 2])
def test_nnls_matches_optax(cols):
    a = R.normal(size=(6, 4))
    b = R.normal(size=(6,) if cols is None else (6, cols))
    x = fo.nnls(a, b, iters=200)
    np.testing.assert_allclose(np.asarray(x), np.asarray(optax.nnls(a, b, iters=200)),
                               rtol=1e-9, atol=1e-12)
    assert np.all(np.asarray(x) >= 0)


def test_multi_normal_matches_optax():
    loc, log_scale = R.normal(size=3), 0.3 * R.normal(size=3)
    ours, theirs = fo.multi_normal(loc, log_scale), optax.multi_normal(loc, log_scale)
    x = R.normal(size=(5, 3))
    np.testing.assert_allclose(np.asarray(ours.log_prob(x)), np.asarray(theirs.log_prob(x)),
                               rtol=1e-12)
    draws = np.asarray(ours.sample((20000,), fnad.random.PRNGKey(1)))
    assert draws.shape == (20000, 3)
    np.testing.assert_allclose(draws.std(0), np.exp(log_scale), rtol=0.05)
    assert [np.asarray(p).shape for p in ours.params] == [(3,), (3,)]


def test_tree_get_and_set_match_optax():
    params = {"w": np.ones((2, 2)), "b": np.zeros(2)}
    ours = fo.inject_hyperparams(fo.adam)(learning_rate=1e-2).init(params)
    theirs = optax.inject_hyperparams(optax.adam)(learning_rate=1e-2).init(params)
    for key in ("learning_rate", "b1", "mu", "ScaleByAdamState"):
        _same(ft.tree_get(ours, key), optax.tree_utils.tree_get(theirs, key))
    with pytest.raises(KeyError, match="tree_get: found 2 values named 'count'"):
        ft.tree_get(ours, "count")
    assert ft.tree_get(ours, "nope", default=3) == 3
    counts = ft.tree_get_all_with_path(ours, "count")
    assert [tuple(map(str, p)) for p, _ in counts] == [
        ("InjectStatefulHyperparamsState.count",),
        ("InjectStatefulHyperparamsState.inner_state", "0", "ScaleByAdamState.count")]
    new = ft.tree_set(ours, learning_rate=np.asarray(5e-3))
    new_theirs = optax.tree_utils.tree_set(theirs, learning_rate=jax.numpy.asarray(5e-3))
    _same(new, new_theirs)
    assert type(new) is type(ours) and float(new.hyperparams["learning_rate"]) == 5e-3
    only_inner = ft.tree_set(ours, lambda path, v: len(path) > 1, count=np.asarray(7))
    assert int(only_inner.count) == 0 and int(only_inner.inner_state[0].count) == 7
    with pytest.raises(KeyError, match="tree_set: found no value named 'nope'"):
        ft.tree_set(ours, nope=1)
