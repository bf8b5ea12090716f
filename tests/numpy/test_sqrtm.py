"""fnad.scipy.linalg.sqrtm: SciPy's principal root, complex where a real matrix has a negative
real eigenvalue (issue 21: it used to return a wrong real matrix or raise LinAlgError), and
its derivatives there."""

import warnings

import numpy as np
import pytest
import scipy.linalg as sl
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fnad
import fnad.numpy as fnp
import fnad.scipy.linalg as fla
from fnad.test_util import check_grads

S3 = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.5], [0.0, 0.5, 2.0]])  # eigenvalues -1.1, 2.0, 3.1
S2 = np.array([[1.0, 2.0], [2.0, 1.0]])                             # eigenvalues -1, 3
NONSYM = np.array([[-1.0, 1.0, 0.3], [0.2, -2.0, 1.0], [0.5, 0.1, 3.0]])
TRIANGULAR = np.array([[-1.0, 1.0], [0.0, 4.0]])
COMPLEX = NONSYM + 0.1j * np.arange(9.0).reshape(3, 3)
COMPLEX_ON_CUT = np.array([[-1.0, 2.0 + 1j], [0.0, 3.0 - 1j]])      # eigenvalue -1 exactly
NEAR_CUT = np.array([[0.0, 1.0, 1.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])  # -0.80 within rounding


@pytest.mark.parametrize("a", [S3, S2, NONSYM, TRIANGULAR, -4 * np.eye(2), COMPLEX,
                               COMPLEX_ON_CUT, NEAR_CUT, NEAR_CUT + 0j],
                         ids=["issue 3x3", "issue 2x2", "nonsymmetric", "triangular",
                              "negative identity", "complex", "complex on the cut",
                              "eigenvalue within rounding of the cut",
                              "the same as complex"])
def test_matches_scipys_principal_root(a):
    r = fla.sqrtm(a)
    expected = sl.sqrtm(a)
    assert r.dtype == expected.dtype == np.complex128
    np.testing.assert_allclose(r, expected, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(r @ r, a, atol=1e-13)


def test_the_issue_examples_were_wrong_or_raised():
    r = fla.sqrtm(S3)
    assert np.abs(r @ r - S3).max() < 1e-14        # was 0.557, silently
    assert np.iscomplexobj(fla.sqrtm(S2))          # was LinAlgError("Singular matrix")


def test_real_roots_stay_real_and_dtypes_follow_scipy():
    spd = S3 + 2 * np.eye(3)
    assert fla.sqrtm(spd).dtype == np.float64
    np.testing.assert_allclose(fla.sqrtm(spd), sl.sqrtm(spd), rtol=1e-13)
    assert fla.sqrtm(spd.astype(np.float32)).dtype == np.float32
    assert fla.sqrtm(S3.astype(np.float32)).dtype == np.complex64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy warns that the matrix is singular
        np.testing.assert_allclose(fla.sqrtm(np.diag([0.0, 1.0])), sl.sqrtm(np.diag([0.0, 1.0])))


def test_inside_jit_a_real_matrix_with_a_complex_root_says_to_pass_it_as_complex():
    with pytest.raises(ValueError, match=r"sqrtm: the matrix is real but has a negative real "
                                         r"eigenvalue.*pass the matrix as complex \(a \+ 0j\)"):
        fnad.jit(fla.sqrtm)(S3)
    np.testing.assert_allclose(fnad.jit(fla.sqrtm)(S3 + 0j), sl.sqrtm(S3), atol=1e-13)
    np.testing.assert_allclose(fnad.jit(fla.sqrtm)(S3 + 2 * np.eye(3)),
                               sl.sqrtm(S3 + 2 * np.eye(3)), atol=1e-13)


def test_batches_and_vmap():
    stack = np.stack([S3, S3 + 2 * np.eye(3), NONSYM])
    expected = np.stack([sl.sqrtm(m) for m in stack])
    np.testing.assert_allclose(fla.sqrtm(stack), expected, atol=1e-13)
    np.testing.assert_allclose(fnad.vmap(fla.sqrtm)(stack + 0j), expected, atol=1e-13)


@pytest.mark.parametrize("a", [S3, NONSYM, COMPLEX], ids=["symmetric", "nonsymmetric", "complex"])
def test_check_grads_where_the_root_is_complex(a):
    """Real matrices keep a simple negative eigenvalue on the axis under real perturbations,
    so the root is smooth there (a complex matrix with an eigenvalue on the cut is not: its
    principal root jumps across it)."""
    check_grads(fla.sqrtm, (a,), order=2)


def test_a_real_input_gets_a_real_gradient():
    def loss(a):
        r = fla.sqrtm(a)
        return fnp.sum(fnp.real(r) ** 2 - fnp.imag(r))

    g = fnad.grad(loss)(NONSYM)
    assert g.dtype == np.float64
    eps = 1e-6
    numeric = np.zeros((3, 3))
    for idx in np.ndindex(3, 3):
        e = np.zeros((3, 3))
        e[idx] = eps
        numeric[idx] = (loss(NONSYM + e) - loss(NONSYM - e)) / (2 * eps)
    np.testing.assert_allclose(g, numeric, rtol=1e-6, atol=1e-7)


@given(hnp.arrays(np.float64, (3, 3), elements=st.floats(-2, 2, allow_subnormal=False)))
def test_random_real_matrices_match_scipy(a):
    w = np.linalg.eigvals(a)
    if np.min(np.abs(w)) < 0.1 or np.linalg.cond(np.linalg.eig(a)[1]) > 1e4:
        return  # near-singular or near-defective: no well-conditioned root to compare
    r = fla.sqrtm(a)
    expected = sl.sqrtm(a)
    assert r.dtype == expected.dtype
    np.testing.assert_allclose(r @ r, a, atol=1e-10)
    assert np.all(np.linalg.eigvals(r).real >= -1e-9)  # the principal root
    if np.abs(expected @ expected - a).max() < 1e-10:  # SciPy 1.17 misses some: see below
        np.testing.assert_allclose(r, expected, atol=1e-9 * max(1.0, np.abs(expected).max()))


def test_a_matrix_scipy_gets_wrong():
    """SciPy 1.17.1's sqrtm returns diag(e^{i pi/4}, e^{-i pi/4}, i) for this matrix, whose
    square is off by 1; fnad's is the principal root, rotation by 45 degrees in the block."""
    a = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]])
    r = fla.sqrtm(a)
    c = np.sqrt(0.5)
    np.testing.assert_allclose(r, [[c, -c, 0], [c, c, 0], [0, 0, 1j]], atol=1e-15)
