"""Issue 31's linalg and scipy defects, each against NumPy/SciPy (values) and finite
differences (gradients): complex cho_solve and lu_solve, batched lu_solve, LAPACK's complex
pivoting, non-square lu_factor, complex logsumexp, vmap of expm, ord=0 norms, tensorsolve's
axes, svd under jit/vmap, jit == eager bit for bit, and odeint on the simulated device."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad.scipy.linalg as fla
from fnad.test_util import check_grads

sl = pytest.importorskip("scipy.linalg")
RNG = np.random.default_rng(31)


@pytest.fixture(autouse=True)
def _fresh_rng():
    """Each test draws the same points however the tests are selected or ordered."""
    global RNG
    RNG = np.random.default_rng(31)


def _c(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _hpd(n):
    a = _c(n, n)
    return a @ a.conj().T + n * np.eye(n)


def _herm_fn(a):  # a Hermitian positive definite matrix of a free complex one
    return fnp.matmul(a, fnp.conj(fnp.swapaxes(a, -1, -2))) + 4 * np.eye(4)


# ----------------------------------------------------------------------------- cho_solve


@pytest.mark.parametrize("lower", [False, True])
def test_complex_cho_solve_solves_the_system(lower):
    h, b = _hpd(4), _c(4, 2)
    x = np.asarray(fla.cho_solve(fla.cho_factor(h, lower=lower), b))
    assert np.abs(h @ x - b).max() < 1e-12  # was 1.2 (the factor was transposed, not adjoint)
    np.testing.assert_allclose(x, sl.cho_solve(sl.cho_factor(h, lower=lower), b), rtol=1e-12)


@pytest.mark.parametrize("lower", [False, True])
def test_complex_cho_solve_gradient(lower):
    a, b = _c(4, 4), _c(4, 2)
    check_grads(lambda a, b: fla.cho_solve(fla.cho_factor(_herm_fn(a), lower=lower), b),
                (a, b), order=1)


def test_solve_triangular_trans_2_is_the_adjoint():
    t, b = np.triu(_c(4, 4)) + 3 * np.eye(4), _c(4, 2)
    for trans in (1, 2, "T", "C"):
        np.testing.assert_allclose(fla.solve_triangular(t, b, trans=trans),
                                   sl.solve_triangular(t, b, trans=trans), rtol=1e-12)


# ----------------------------------------------------------------------------- lu_solve


@pytest.mark.parametrize("trans", [0, 1, 2])
def test_complex_lu_solve_matches_scipy(trans):
    a, b = _c(4, 4), _c(4, 3)
    np.testing.assert_allclose(fla.lu_solve(fla.lu_factor(a), b, trans=trans),
                               sl.lu_solve(sl.lu_factor(a), b, trans=trans), rtol=1e-11)
    check_grads(lambda a, b: fla.lu_solve(fla.lu_factor(a), b, trans=trans), (a, b), order=1)


@pytest.mark.parametrize("lu_batch, b_shape", [
    ((2,), (2, 3, 4)), ((2,), (3,)), ((2,), (3, 4)), ((2,), (1, 3, 4)), ((2,), (5, 2, 3, 4)),
    ((), (2, 3, 4)), ((2,), (2, 3, 1))])
@pytest.mark.parametrize("trans", [0, 1])
def test_batched_lu_solve_matches_scipy(lu_batch, b_shape, trans):
    a, b = RNG.standard_normal(lu_batch + (3, 3)), RNG.standard_normal(b_shape)
    want = sl.lu_solve(sl.lu_factor(a), b, trans=trans)
    got = fla.lu_solve(fla.lu_factor(a), b, trans=trans)
    assert np.shape(got) == want.shape  # (2, 3, 4) gave (2, 2, 3, 4)
    np.testing.assert_allclose(got, want, rtol=1e-11)


def test_batched_lu_solve_gradient_and_empty_batch():
    a, b = RNG.standard_normal((2, 3, 3)), RNG.standard_normal((2, 3, 2))
    check_grads(lambda a, b: fla.lu_solve(fla.lu_factor(a), b), (a, b), order=1)
    lu, piv = fla.lu_factor(np.zeros((0, 3, 3)))
    assert np.shape(fla.lu_solve((lu, piv), np.zeros((0, 3, 4)))) == (0, 3, 4)  # was (0, 0, 3, 4)


def test_lu_solve_refuses_shapes_that_do_not_fit():
    lu_piv = fla.lu_factor(RNG.standard_normal((2, 3, 3)))
    with pytest.raises(ValueError, match=r"lu_solve: lu of shape \(2, 3, 3\).*b of shape"):
        fla.lu_solve(lu_piv, np.ones((2, 3)))  # SciPy: b (2, 3) is one (N, K) = (2, 3) matrix
    with pytest.raises(ValueError, match="trans must be"):
        fla.lu_solve(lu_piv, np.ones(3), trans=3)


# ----------------------------------------------------------------------------- lu, lu_factor


def test_complex_lu_pivots_as_lapack():
    a = np.array([[0.9 + 0.9j, 1.0], [1.5, 1.0]])  # |a00| < |a10| but |Re|+|Im| is larger
    for ours, ref in zip(fla.lu(a), sl.lu(a)):
        np.testing.assert_allclose(ours, ref, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(fla.lu_factor(a)[1], sl.lu_factor(a)[1])  # was [1, 1]
    for _ in range(20):
        a = _c(5, 5)
        np.testing.assert_array_equal(fla.lu_factor(a)[1], sl.lu_factor(a)[1])
        for ours, ref in zip(fla.lu(a), sl.lu(a)):
            np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 3, 5), (2, 5, 3)])
def test_non_square_lu_factor_matches_scipy(shape):
    a = RNG.standard_normal(shape)
    lu, piv = fla.lu_factor(a)  # crashed with a broadcasting error
    want_lu, want_piv = sl.lu_factor(a)
    np.testing.assert_allclose(lu, want_lu, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(piv, want_piv)
    with pytest.raises(NotImplementedError, match="square matrices only"):
        fnad.grad(lambda a: fnp.sum(fla.lu_factor(a)[0]))(a)


# ----------------------------------------------------------------------------- logsumexp


_LSE_CASES = [
    (np.array([1e6 + 1.28e6j, 2 + 3j]), {}),  # imaginary part was 1280000, SciPy's is 2.06
    (np.array([1e6 + 1.28e6j, 2 + 3j]), {"b": np.array([2.0, -1.0])}),
    (np.array([1e6 + 1.28e6j, 2 + 3j]), {"b": np.array([2.0, -1.0]), "return_sign": True}),
    (np.array([[1 + 2j, 3 - 1j], [-np.inf + 0j, 0.5j]]), {"axis": 1}),
    (np.array([[1 + 2j, 3 - 1j], [-np.inf + 0j, 0.5j]]), {"axis": 1, "return_sign": True}),
    (np.array([1 + 1j, 2.0]), {"b": np.array([1j, 1.0]), "return_sign": True}),
    (np.array([1.0, 2.0]), {"b": np.array([1j, 1.0])}),
]


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("z, kw", _LSE_CASES)
def test_complex_logsumexp_matches_scipy(z, kw, jit):
    sc = pytest.importorskip("scipy.special")
    f = (lambda z: fnad.scipy.special.logsumexp(z, **kw))
    got, want = (fnad.jit(f) if jit else f)(z), sc.logsumexp(z, **kw)
    for g, w in zip(got, want) if kw.get("return_sign") else [(got, want)]:
        np.testing.assert_allclose(g, w, rtol=1e-13)


def test_complex_logsumexp_against_torch_and_its_gradients():
    torch = pytest.importorskip("torch")
    z = np.array([1e6 + 1.28e6j, 2 + 3j])
    want = torch.logsumexp(torch.tensor(z), 0).numpy()
    np.testing.assert_allclose(fnad.scipy.special.logsumexp(z), want, rtol=1e-13)
    z, b = _c(3, 4), RNG.standard_normal((3, 4))
    check_grads(lambda z: fnad.scipy.special.logsumexp(z, axis=1), (z,), order=2)
    check_grads(lambda z, b: fnad.scipy.special.logsumexp(z, axis=0, b=b), (z, b), order=1)
    check_grads(lambda z: fnad.scipy.special.logsumexp(z, axis=1, return_sign=True), (z,),
                order=1)


# ----------------------------------------------------------------------------- expm


def test_vmap_of_expm_is_the_loop():
    a = RNG.standard_normal((3, 5, 5)) * np.array([0.1, 3.0, 20.0])[:, None, None]
    got = fnad.vmap(fla.expm)(a)  # was (3, 3, 5, 5): every matrix scaled by every norm
    want = np.stack([fla.expm(m) for m in a])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(fnad.vmap(fla.expm, in_axes=2)(np.moveaxis(a, 0, 2)), want)
    np.testing.assert_allclose(got, sl.expm(a), rtol=1e-11, atol=1e-11 * np.abs(want).max())
    grad = fnad.grad(lambda m: fnp.sum(fla.expm(m)))
    np.testing.assert_array_equal(fnad.vmap(grad)(a), np.stack([grad(m) for m in a]))


# ----------------------------------------------------------------------------- norms, jit == eager


@pytest.mark.parametrize("fn", [
    lambda z: fnp.linalg.vector_norm(z, ord=0), lambda z: fnp.linalg.norm(z, ord=0, axis=1),
    lambda z: fnp.linalg.vector_norm(z, ord=0, axis=1, keepdims=True),
    lambda z: fnp.linalg.norm(z[0], ord=0)])
def test_ord_0_norm_of_complex_is_real_on_every_path(fn):
    z = _c(3, 4)
    z[0, 1] = 0
    want = fn(z)
    assert want.dtype == np.float64
    assert fnad.jit(fn)(z).dtype == np.float64  # was complex128
    out, pull = fnad.vjp(fn, z)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(pull(np.ones_like(out))[0], np.zeros_like(z))


def _identical(a, b):
    for x, y in zip(fnad.tree.tree_leaves(a), fnad.tree.tree_leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        assert (x.dtype, x.shape) == (y.dtype, y.shape)
        np.testing.assert_array_equal(x, y, strict=True)


_Z3 = _c(2, 3, 4)
_A, _B = RNG.standard_normal((6, 4)), RNG.standard_normal((6, 2))
_SPD = _A.T @ _A + np.eye(4)
_SPD8 = (lambda m: m.T @ m + np.eye(8))(RNG.standard_normal((10, 8)))
_HPD = _hpd(4)
_BIT_CASES = {
    "lstsq": (lambda a, b: fnp.linalg.lstsq(a, b), (_A, _B)),
    "lstsq_complex": (lambda a, b: fnp.linalg.lstsq(a, b)[0], (_c(6, 4), _c(6, 2))),
    "multi_dot4": (lambda *m: fnp.linalg.multi_dot(m),
                   tuple(RNG.standard_normal(s) for s in [(10, 30), (30, 5), (5, 60), (60, 10)])),
    "multi_dot_vec": (lambda *m: fnp.linalg.multi_dot(m),
                      tuple(RNG.standard_normal(s) for s in [(30,), (30, 5), (5, 60), (60,)])),
    "cholesky_upper": (lambda s: fnp.linalg.cholesky(s, upper=True), (_SPD8,)),
    "cholesky_upper_complex": (lambda s: fnp.linalg.cholesky(s, upper=True), (_HPD,)),
    "norm_1d": (lambda z: fnp.linalg.norm(z), (_Z3[0, 0],)),
    "norm_2_1d": (lambda z: fnp.linalg.norm(z, 2), (_Z3[0, 0],)),
    "vector_norm_axes": (lambda z: fnp.linalg.vector_norm(z, axis=(0, 2)), (_Z3,)),
    "vector_norm_1_axes": (lambda z: fnp.linalg.vector_norm(z, ord=1, axis=(0, 2)), (_Z3,)),
    "vector_norm_half": (lambda z: fnp.linalg.vector_norm(z, ord=0.5, axis=(0, 2)), (_Z3,)),
    "norm_fro": (lambda z: fnp.linalg.norm(z[0], "fro"), (_Z3,)),
    "matrix_norm_nuc": (lambda z: fnp.linalg.matrix_norm(z, ord="nuc"), (_Z3,)),
}


@pytest.mark.parametrize("name", list(_BIT_CASES))
def test_jit_gives_the_eager_bits(name):
    f, args = _BIT_CASES[name]
    _identical(fnad.jit(f)(*args), f(*args))


def test_eager_values_still_numpy_s():
    np.testing.assert_allclose(fnp.linalg.lstsq(_A, _B)[0], np.linalg.lstsq(_A, _B)[0],
                               rtol=1e-12)
    assert fnp.linalg.lstsq(_A, _B)[2].dtype == np.linalg.lstsq(_A, _B)[2].dtype
    np.testing.assert_allclose(fnp.linalg.cholesky(_HPD, upper=True),
                               np.linalg.cholesky(_HPD, upper=True), rtol=1e-14, atol=1e-15)
    mats = _BIT_CASES["multi_dot4"][1]
    np.testing.assert_allclose(fnp.linalg.multi_dot(mats), np.linalg.multi_dot(mats), rtol=1e-13)
    for z, kw in [(_Z3, {}), (_Z3, {"axis": (0, 2)}), (_Z3, {"ord": 0}), (_Z3, {"ord": 3}),
                  (np.arange(6), {})]:
        np.testing.assert_allclose(fnp.linalg.vector_norm(z, **kw),
                                   np.linalg.vector_norm(z, **kw), rtol=1e-14)
    check_grads(lambda s: fnp.linalg.cholesky(_herm_fn(s), upper=True), (_c(4, 4),), order=2)


# ----------------------------------------------------------------------------- tensorsolve


@pytest.mark.parametrize("a_shape, b_shape, axes", [
    ((1, 1, 6, 6), (2, 3), (0, 2)), ((2, 3, 6), (3, 2), None), ((2, 3, 2, 3), (3, 2), None),
    ((2, 6, 3), (6,), (0, 2)), ((1, 1, 4, 4), (2, 2), (2, 0))])
def test_tensorsolve_solves_what_numpy_solves(a_shape, b_shape, axes):
    perm = [k for k in range(len(a_shape)) if k not in (axes or ())] + list(axes or ())
    n = int(np.prod(b_shape))
    well = RNG.standard_normal((n, n)) / np.sqrt(n) + 3 * np.eye(n)  # a solvable system
    a = np.transpose(well.reshape([a_shape[k] for k in perm]), np.argsort(perm))
    b = RNG.standard_normal(b_shape)
    want = np.linalg.tensorsolve(a, b, axes=axes)
    got = fnp.linalg.tensorsolve(a, b, axes=axes)  # refused: b's shape was not a's leading
    assert np.shape(got) == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10)
    check_grads(lambda a, b: fnp.linalg.tensorsolve(a, b, axes=axes), (a, b), order=1)


def test_tensorsolve_refuses_a_non_square_system():
    with pytest.raises(ValueError, match=r"tensorsolve: a of shape \(2, 3, 6\) and b of shape"):
        fnp.linalg.tensorsolve(RNG.standard_normal((2, 3, 6)), np.ones(5))


# ----------------------------------------------------------------------------- svd


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4)])
def test_jit_and_vmap_of_full_svd(shape):
    a = RNG.standard_normal((2,) + shape)
    svd = lambda m: fnp.linalg.svd(m, full_matrices=True)
    want = [np.linalg.svd(m, full_matrices=True) for m in a]
    _identical(fnad.jit(svd)(a[0]), want[0])  # both refused "differentiating svd"
    _identical(fnad.vmap(svd)(a), [np.stack(x) for x in zip(*want)])


def test_only_differentiating_the_full_svd_of_a_non_square_matrix_refuses():
    a = RNG.standard_normal((3, 5))
    def f(m):
        return fnp.sum(fnp.linalg.svd(m, full_matrices=True)[1])

    for g in (fnad.grad(f), fnad.jit(fnad.grad(f)), fnad.grad(fnad.jit(f))):
        with pytest.raises(ValueError, match="differentiating svd of a non-square matrix"):
            g(a)
    with pytest.raises(ValueError, match="differentiating svd of a non-square matrix"):
        fnad.jvp(lambda m: fnp.linalg.svd(m, full_matrices=True), (a,), (a,))
    sq = RNG.standard_normal((4, 4))
    check_grads(lambda m: fnp.linalg.svd(m, full_matrices=True)[1], (sq,), order=1)
