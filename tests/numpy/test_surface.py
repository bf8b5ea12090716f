"""NumPy-surface behaviours a case table cannot show: values against NumPy on plain and
traced inputs, eig/lstsq/matrix_rank results and traps, and error messages."""

import warnings

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from tests.numpy.cases_linalg import nonsym, spaced

LA = fnp.linalg
RNG = np.random.default_rng(0)


def _traced(f, *args):
    """f evaluated under vjp (the primitive path), values only."""
    return fnad.vjp(f, *args)[0]


# ----------------------------------------------------------------------------- r_, c_


@pytest.mark.parametrize("key", [
    lambda a, b: (a, 0, slice(1, 4), b[0], slice(-1, 1, 5j)),
    lambda a, b: ("-1", b, b), lambda a, b: ("0,2", a, a), lambda a, b: ("0,2,0", a, a),
    lambda a, b: ("1,2,0", a, a), lambda a, b: ("0,3,-1", b, b)])
def test_r_matches_numpy(key):
    a, b = RNG.standard_normal(3), RNG.standard_normal((2, 3))
    ref = np.r_[key(a, b)]
    np.testing.assert_array_equal(fnp.r_[key(a, b)], ref)
    np.testing.assert_allclose(_traced(lambda a, b: fnp.r_[key(a, b)], a, b), ref)


def test_c_matches_numpy():
    a, b = RNG.standard_normal(3), RNG.standard_normal((3, 2))
    ref = np.c_[b, a, 0:3]
    np.testing.assert_allclose(_traced(lambda a, b: fnp.c_[b, a, 0:3], a, b), ref)
    np.testing.assert_array_equal(fnp.c_[1:4:3j, a], np.c_[1:4:3j, a])


def test_r_matrix_directive_is_refused():
    with pytest.raises(NotImplementedError, match="matrix directive"):
        fnad.grad(lambda a: fnp.sum(fnp.r_["r", a, a]))(np.ones(3))


# ----------------------------------------------------------------------------- gradient


@pytest.mark.parametrize("args,kw", [((), {}), ((0.5,), {}), ((2.0,), {"edge_order": 2}),
                                     ((0.5, "x1"), {}), (("x0", "x1"), {"edge_order": 2}),
                                     (("x1",), {"axis": 1}), ((), {"axis": (1, 0)})])
def test_gradient_matches_numpy(args, kw):
    f = RNG.standard_normal((4, 5))
    coords = {"x0": np.cumsum(RNG.uniform(0.5, 1.5, 4)), "x1": np.cumsum(RNG.uniform(0.5, 1, 5))}
    args = tuple(coords.get(a, a) if isinstance(a, str) else a for a in args)
    ref = np.gradient(f, *args, **kw)
    for got in (fnp.gradient(f, *args, **kw), _traced(lambda f: fnp.gradient(f, *args, **kw), f)):
        assert type(got) is type(ref)
        for g, r in zip(got if isinstance(got, tuple) else [got],
                        ref if isinstance(ref, tuple) else [ref]):
            np.testing.assert_allclose(g, r, rtol=1e-13, atol=1e-13)


def test_gradient_integer_input_and_errors():
    np.testing.assert_array_equal(fnp.gradient(np.array([1, 4, 9, 16])),
                                  np.gradient(np.array([1, 4, 9, 16])))
    with pytest.raises(ValueError, match="edge_order=2 needs at least 3"):
        fnp.gradient(np.ones(2), edge_order=2)
    with pytest.raises(TypeError, match="one spacing per axis"):
        fnp.gradient(np.ones((3, 3)), 1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match="must match"):
        fnp.gradient(np.ones(4), np.arange(3.0))


# ----------------------------------------------------------------------------- pad, median


@pytest.mark.parametrize("mode,kw", [
    ("linear_ramp", {}), ("linear_ramp", {"end_values": (2.0, -1.0)}), ("maximum", {}),
    ("minimum", {"stat_length": 2}), ("mean", {"stat_length": ((1, 2), (3, 1), (2, 2))}),
    ("median", {}), ("median", {"stat_length": 2})])
def test_pad_value_modes_match_numpy(mode, kw):
    x = RNG.standard_normal((3, 4, 2))
    for pw in [2, ((1, 2), (0, 3), (2, 0))]:
        ref = np.pad(x, pw, mode=mode, **kw)
        np.testing.assert_allclose(_traced(lambda x: fnp.pad(x, pw, mode=mode, **kw), x), ref,
                                   rtol=1e-14, atol=1e-14)


def test_pad_empty_and_bad_keywords():
    x = RNG.standard_normal((2, 3))
    out = _traced(lambda x: fnp.pad(x, 1, mode="empty"), x)
    assert out.shape == (4, 5)
    np.testing.assert_array_equal(out[1:-1, 1:-1], x)
    with pytest.raises(TypeError, match="stat_length"):
        fnad.grad(lambda x: fnp.sum(fnp.pad(x, 1, mode="mean", end_values=1)))(x)
    with pytest.raises(NotImplementedError, match="not supported"):
        fnad.grad(lambda x: fnp.sum(fnp.pad(x, 1, mode=lambda *a: None)))(x)


@pytest.mark.parametrize("kw", [{}, {"axis": 0}, {"axis": -1, "keepdims": True},
                                {"axis": (0, 2)}])
def test_median_matches_numpy(kw):
    x = RNG.standard_normal((3, 4, 5))
    np.testing.assert_allclose(_traced(lambda x: fnp.median(x, **kw), x), np.median(x, **kw))


# ----------------------------------------------------------------------------- einsum, lists


def test_einsum_sublist_errors():
    with pytest.raises(ValueError, match="sublist"):
        fnp.einsum(np.ones((2, 2)), [0, "a"])
    with pytest.raises(ValueError, match="sublist holds integers"):
        fnp.einsum(np.ones(2), np.ones(2))


def test_lists_of_traced_arrays_are_stacked():
    x = RNG.standard_normal((2, 3))
    g = fnad.grad(lambda x: fnp.mean([x, x + 2]))(x)
    np.testing.assert_allclose(g, np.full((2, 3), 1 / 6))
    g = fnad.grad(lambda x: fnp.linalg.norm([x[0, 0], x[1, 1]]))(x)
    np.testing.assert_allclose(g[0, 0], x[0, 0] / np.hypot(x[0, 0], x[1, 1]))
    np.testing.assert_allclose(fnp.sum([x, x]), np.sum([x, x]))


@pytest.mark.parametrize("fname", ["vstack", "hstack", "dstack", "column_stack"])
def test_joining_one_array_is_a_sequence_of_rows(fname):
    x = RNG.standard_normal((2, 3, 4))
    ref = getattr(np, fname)(x)
    np.testing.assert_array_equal(getattr(fnp, fname)(x), ref)
    np.testing.assert_array_equal(_traced(getattr(fnp, fname), x), ref)


def test_reductions_where_initial_values():
    x = RNG.standard_normal((3, 4))
    m = RNG.random((3, 4)) > 0.5
    m[:, :2] = True
    for name, kw in [("sum", {"where": m, "initial": 1.0}), ("mean", {"where": m, "axis": 1}),
                     ("max", {"where": m, "initial": -9.0, "axis": 0}),
                     ("min", {"initial": 0.0}), ("var", {"where": m, "axis": 1, "ddof": 1}),
                     ("std", {"where": m})]:
        ref = getattr(np, name)(x, **kw)
        np.testing.assert_allclose(_traced(lambda x: getattr(fnp, name)(x, **kw), x), ref)
    # an extreme that came from initial= passes no gradient
    g = fnad.grad(lambda x: fnp.max(x, initial=100.0))(x)
    np.testing.assert_array_equal(g, np.zeros_like(x))
    g = fnad.grad(lambda x: fnp.sum(fnp.max(x, axis=1, where=m, initial=-9.0)))(x)
    np.testing.assert_array_equal(g != 0, x == np.max(np.where(m, x, -9.0), 1, keepdims=True))


def test_power_zero_exponent_at_zero():
    z = np.zeros(3)
    np.testing.assert_array_equal(fnad.grad(lambda x: fnp.sum(x ** 0))(z), z)
    np.testing.assert_array_equal(fnad.hessian(lambda x: fnp.sum(x ** 0))(z), np.zeros((3, 3)))


# ----------------------------------------------------------------------------- eig, eigvals


def test_eig_plain_is_numpy_and_traced_is_complex():
    a = nonsym(RNG, (2, 3, 3))
    w, v = LA.eig(a)
    w_ref, v_ref = np.linalg.eig(a)
    np.testing.assert_array_equal(w, w_ref)
    sym = a + np.swapaxes(a, -1, -2)   # real eigenvalues: NumPy gives a real dtype
    assert LA.eigvals(sym).dtype == np.float64
    wt, vt = _traced(lambda a: tuple(LA.eig(a)), sym)
    assert wt.dtype == vt.dtype == np.complex128
    np.testing.assert_allclose(np.sort(wt.real), np.sort(np.linalg.eigvals(sym)))
    np.testing.assert_allclose(vt @ (wt[..., None] * np.linalg.inv(vt)), sym, atol=1e-12)
    assert _traced(LA.eigvals, a.astype(np.float32)).dtype == np.complex64


def test_eig_repeated_eigenvalues_warn():
    a = np.diag([1.0, 1.0, 2.0])
    with pytest.warns(RuntimeWarning, match="repeated eigenvalues"):
        fnad.grad(lambda a: fnp.sum(fnp.real(LA.eig(a)[1])))(a)
    with pytest.warns(RuntimeWarning, match="repeated eigenvalues"):
        fnad.grad(lambda a: fnp.sum(fnp.real(LA.eigvals(a))))(a)
    with warnings.catch_warnings():   # distinct eigenvalues: quiet
        warnings.simplefilter("error")
        fnad.grad(lambda a: fnp.sum(fnp.real(LA.eig(a)[1])))(np.diag([1.0, 3.0, 2.0]))


def test_eig_rejects_non_square():
    with pytest.raises(ValueError, match="eig: expected a stack of square"):
        LA.eig(np.ones((2, 3)))


# ----------------------------------------------------------------------------- lstsq, rank


@pytest.mark.parametrize("sa,sb", [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 5), (3, 2)),
                                   ((3, 3), (3,))])
def test_lstsq_traced_matches_numpy(sa, sb):
    a, b = spaced(RNG, sa), RNG.standard_normal(sb)
    ref = np.linalg.lstsq(a, b)
    got = fnad.vjp(lambda a, b: tuple(LA.lstsq(a, b)), a, b)[0]
    for g, r in zip(got, ref):
        assert np.shape(g) == np.shape(r)
        np.testing.assert_allclose(g, r, atol=1e-12)
    assert type(LA.lstsq(a, b)).__name__ == "LstsqResult"


def test_lstsq_rank_deficient_and_batched():
    a = RNG.standard_normal((5, 2)) @ RNG.standard_normal((2, 3))
    b = RNG.standard_normal(5)
    x, res, rank, s = fnad.vjp(lambda a: tuple(LA.lstsq(a, b)), a)[0]
    x_ref, res_ref, rank_ref, s_ref = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(x, x_ref, atol=1e-12)
    assert rank == rank_ref == 2 and res.shape == res_ref.shape == (0,)
    ab, bb = spaced(RNG, (2, 5, 3)), RNG.standard_normal((2, 5, 2))
    x, res, rank, s = LA.lstsq(ab, bb)
    for k in range(2):
        ref = np.linalg.lstsq(ab[k], bb[k])
        np.testing.assert_allclose(x[k], ref[0], atol=1e-12)
        np.testing.assert_allclose(res[k], ref[1], atol=1e-12)
        assert rank[k] == ref[2]
    with pytest.raises(ValueError, match="lstsq: a of shape"):
        LA.lstsq(np.ones((3, 2)), np.ones(4))


@pytest.mark.parametrize("kw", [{}, {"tol": 1e-300}, {"rtol": 0.5}, {"hermitian": True}])
def test_matrix_rank_matches_numpy_and_has_no_gradient(kw):
    a = RNG.standard_normal((4, 2)) @ RNG.standard_normal((2, 4))
    a = np.stack([a @ a.T, np.eye(4)])
    np.testing.assert_array_equal(LA.matrix_rank(a, **kw), np.linalg.matrix_rank(a, **kw))
    g = fnad.grad(lambda a: fnp.sum(a * LA.matrix_rank(a, **kw)[:, None, None]))(a)
    np.testing.assert_array_equal(g, np.broadcast_to(
        np.linalg.matrix_rank(a, **kw)[:, None, None], a.shape))
