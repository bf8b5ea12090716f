"""fnad.scipy.special on complex input: SciPy's value or a TypeError, never a real answer
(issue 21); the complex error functions through the Faddeeva function, their holomorphic
derivatives, jit and vmap."""

import re
import warnings

import numpy as np
import pytest
import scipy.special as ssp
from hypothesis import given
from hypothesis import strategies as st

import fnad
import fnad.numpy as fnp
import fnad.scipy.special as fsp
from fnad.test_util import check_grads

Z = np.array([-0.6 - 0.12j, 0.3 + 0.4j, 1.2 - 0.5j, -2.1 + 1.7j])

# Every public function with complex arguments where its inputs go (integer orders and
# dimensions stay integers, as SciPy's own signatures want).
ARGS = {
    "polygamma": (1, Z), "jn": (1, Z), "yn": (1, Z), "iv": (0.5, Z), "ive": (0.5, Z),
    "xlogy": (Z, Z), "xlog1py": (Z, Z), "beta": (Z, Z), "betaln": (Z, Z),
    "betainc": (Z, Z, Z), "betaincinv": (Z, Z, Z), "gammainc": (Z, Z), "gammaincc": (Z, Z),
    "gammaincinv": (Z, Z), "multigammaln": (Z, 2),
}
UNARY = ["digamma", "erf", "erfc", "erfinv", "expit", "gammaln", "log_softmax", "logit",
         "logsumexp", "psi", "softmax", "erfcinv", "erfcx", "gamma", "gammasgn", "log_ndtr",
         "ndtr", "ndtri", "rgamma", "i0", "i0e", "i1", "i1e", "j0", "j1", "y0", "y1", "wofz"]
# The ones that compute complex values (the rest refuse them with a TypeError).
COMPLEX_OK = {"erf", "erfc", "erfcx", "wofz", "ndtr", "log_ndtr", "softmax", "log_softmax",
              "logsumexp", "xlogy", "xlog1py"}


def _args(name):
    return ARGS.get(name, (Z,))


def test_the_table_covers_every_public_function():
    assert set(ARGS) | set(UNARY) == set(fsp.__all__)


@pytest.mark.parametrize("name", sorted(fsp.__all__))
def test_complex_input_gives_scipys_value_or_a_type_error(name):
    args = _args(name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = getattr(fsp, name)(*args)
    except TypeError as e:
        assert name not in COMPLEX_OK
        assert re.match(r"fnad\.scipy\.special\.\w+: complex inputs \(dtype complex128\) are "
                        r"not supported", str(e)), str(e)
        return
    assert name in COMPLEX_OK, f"{name} returned {got!r} for complex input"
    expected = getattr(ssp, name)(*args)
    assert np.asarray(got).dtype.kind == "c"
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", sorted(COMPLEX_OK - {"logsumexp", "xlogy", "xlog1py"}))
def test_complex_values_under_grad_jit_and_vmap(name):
    f = getattr(fsp, name)
    expected = getattr(ssp, name)(Z)
    np.testing.assert_allclose(fnad.jit(f)(Z), expected, rtol=1e-12)
    if name not in ("softmax", "log_softmax"):
        np.testing.assert_allclose(fnad.vmap(f)(Z), expected, rtol=1e-12)
    out, _ = fnad.vjp(f, Z)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@pytest.mark.parametrize("name", ["gamma", "digamma", "expit", "erfinv", "i0"])
def test_refusal_holds_inside_transforms(name):
    f = getattr(fsp, name)
    for transform in (fnad.jit, fnad.vmap, lambda g: (lambda z: fnad.vjp(g, z)[0])):
        with pytest.raises(TypeError, match=r"fnad.scipy.special.\w+: complex inputs"):
            transform(f)(Z)


def test_the_issue_example():
    z = np.array(-0.6 - 0.12j)
    assert complex(fsp.erf(z)) == pytest.approx(-0.6106952241383459 - 0.0945956505106596j,
                                                abs=1e-15)


def test_erf_is_purely_imaginary_on_the_imaginary_axis():
    y = np.array([-5.25, -0.3, 0.7, 3.0, 6.0])
    z = 1j * y
    assert not fsp.erf(z).real.any()
    np.testing.assert_array_equal(fsp.erfc(z).real, 1.0)
    np.testing.assert_allclose(fsp.erf(z).imag, ssp.erfi(y), rtol=1e-14)


def test_python_complex_numbers_and_lists_of_them_count_as_complex():
    np.testing.assert_allclose(fsp.erf([-0.6 - 0.12j, 0.5]), ssp.erf([-0.6 - 0.12j, 0.5]),
                               rtol=1e-14)
    assert complex(fsp.erfc(1 + 1j)) == pytest.approx(complex(ssp.erfc(1 + 1j)), rel=1e-14)
    for bad in ([1j, 2.0], 1j, (0.5, 1 + 0j)):
        with pytest.raises(TypeError, match="gamma: complex inputs"):
            fsp.gamma(bad)


# ----------------------------------------------------------------------------- accuracy

_AXIS = np.concatenate([-np.logspace(-4, 1.3, 45)[::-1], [0.0], np.logspace(-4, 1.3, 45)])
GRID = _AXIS[:, None] + 1j * _AXIS[None, :]


@pytest.mark.parametrize("name", ["erf", "erfc", "erfcx", "wofz", "ndtr", "log_ndtr"])
def test_a_grid_out_to_20_matches_scipy(name):
    """|z| up to 20 along both axes and diagonals (overflowing values excluded). SciPy's own
    erf loses digits near 0 and its log_ndtr where ndtr is near 1 (Re z > 2): those points
    are checked against mpmath below instead."""
    with np.errstate(all="ignore"):
        expected = getattr(ssp, name)(GRID)
        got = getattr(fsp, name)(GRID)
    ok = np.isfinite(expected) & (np.abs(expected) < 1e300)
    if name == "log_ndtr":
        ok &= GRID.real < 2
    if name == "erf":
        ok &= np.abs(GRID) > 0.02
    err = np.abs(got - expected)[ok] / np.maximum(np.abs(expected)[ok], 1e-300)
    assert err.max() < 5e-13, GRID[ok][np.argmax(err)]
    assert np.all(np.isnan(got) == np.isnan(expected))


MP_POINTS = [-0.006806367790073923 - 0.0018281310859078572j, 1e-9 + 2e-9j, 0.3 - 0.2j,
             5.798172599347297 - 0.1660554617331874j, 6.58 + 3.78j, 15 + 14j, 10 + 0.5j,
             -8 - 2j, 0.01 + 6j, -0.5 + 25j, 30 - 30j, 1e-5 - 3.0j, -3.0 + 1e-5j]


@pytest.mark.parametrize("name", ["erf", "erfc", "erfcx", "wofz", "log_ndtr"])
def test_points_where_scipy_is_inexact_match_mpmath(name):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40

    def exact(z):
        z = mpmath.mpc(z)
        return complex({"erf": lambda: mpmath.erf(z), "erfc": lambda: mpmath.erfc(z),
                        "erfcx": lambda: mpmath.exp(z * z) * mpmath.erfc(z),
                        "wofz": lambda: mpmath.exp(-z * z) * mpmath.erfc(-1j * z),
                        "log_ndtr": lambda: mpmath.log(mpmath.erfc(-z / mpmath.sqrt(2)) / 2),
                        }[name]())

    for z in MP_POINTS:
        with np.errstate(all="ignore"):
            got = complex(getattr(fsp, name)(np.complex128(z)))
        want = exact(z)
        if not np.isfinite(want) or abs(want) > 1e300:
            continue
        assert abs(got - want) <= 1e-12 * abs(want) + 1e-300, (z, got, want)


def test_complex64_stays_complex64_and_real_input_keeps_the_real_kernel():
    z = Z.astype(np.complex64)
    for name in ("erf", "erfc", "erfcx", "wofz", "log_ndtr"):
        got = getattr(fsp, name)(z)
        assert got.dtype == np.complex64
        np.testing.assert_allclose(got, getattr(ssp, name)(Z), rtol=1e-6)
    x = np.array([-30.0, -1.5, 0.0, 0.25, 3.0, np.inf, -np.inf])
    np.testing.assert_array_equal(fsp.erf(x + 0j).imag, 0.0)
    np.testing.assert_allclose(fsp.erf(x + 0j).real, fsp.erf(x), rtol=0)
    np.testing.assert_allclose(fsp.erfc(x + 0j).real, fsp.erfc(x), rtol=0)
    assert fsp.wofz(np.float32(1.0)).dtype == np.complex64


# ----------------------------------------------------------------------------- derivatives


@pytest.mark.parametrize("name", ["erf", "erfc", "erfcx", "wofz", "ndtr", "log_ndtr"])
def test_check_grads_with_complex_directions(name):
    check_grads(getattr(fsp, name), (Z,), order=2)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_complex_softmax_check_grads(name):
    check_grads(lambda z: getattr(fsp, name)(z, axis=-1), (Z.reshape(2, 2),), order=2)


def test_holomorphic_derivatives():
    d = {"erf": 2 / np.sqrt(np.pi) * np.exp(-Z ** 2), "erfc": -2 / np.sqrt(np.pi) * np.exp(-Z ** 2),
         "wofz": 2j / np.sqrt(np.pi) - 2 * Z * ssp.wofz(Z),
         "erfcx": 2 * Z * ssp.erfcx(Z) - 2 / np.sqrt(np.pi)}
    for name, want in d.items():
        f = getattr(fsp, name)
        got = fnad.vmap(fnad.grad(f, holomorphic=True))(Z)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_wofz_of_real_input_has_a_real_gradient():
    x = np.array([0.3, -1.2, 2.0])
    g = fnad.grad(lambda x: fnp.sum(fnp.imag(fsp.wofz(x))))(x)
    assert g.dtype == np.float64
    # Im w(x) = 2/sqrt(pi) dawsn(x): its derivative is 2/sqrt(pi) (1 - 2 x dawsn(x)).
    np.testing.assert_allclose(g, 2 / np.sqrt(np.pi) * (1 - 2 * x * ssp.dawsn(x)), rtol=1e-12)
    check_grads(fsp.wofz, (x,), order=2)


# ----------------------------------------------------------------------------- properties

_coord = st.floats(-6.0, 6.0, allow_nan=False, allow_subnormal=False)


@given(st.lists(st.tuples(_coord, _coord), min_size=1, max_size=6))
def test_symmetries_and_scipy(points):
    z = np.array([complex(a, b) for a, b in points])
    erf, erfc = fsp.erf(z), fsp.erfc(z)
    scale = np.maximum(np.abs(erf), 1.0)
    np.testing.assert_allclose(erf + erfc, 1.0, atol=1e-13 * scale.max())
    np.testing.assert_allclose(fsp.erf(-z), -erf, rtol=4e-15, atol=0)
    np.testing.assert_allclose(fsp.erf(np.conj(z)), np.conj(erf), rtol=4e-15, atol=0)
    np.testing.assert_allclose(erf, ssp.erf(z), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(fsp.wofz(z), ssp.wofz(z), rtol=1e-12, atol=1e-300)


@given(st.lists(st.tuples(_coord, _coord), min_size=1, max_size=4))
def test_vjp_is_the_transpose_of_jvp(points):
    z = np.array([complex(a, b) / 2 for a, b in points])
    rng = np.random.default_rng(len(points))
    for f in (fsp.erf, fsp.erfc, fsp.wofz):
        v = rng.standard_normal(z.shape) + 1j * rng.standard_normal(z.shape)
        u = rng.standard_normal(z.shape) + 1j * rng.standard_normal(z.shape)
        _, jv = fnad.jvp(f, (z,), (v,))
        _, f_vjp = fnad.vjp(f, z)
        (ju,) = f_vjp(u)
        lhs, rhs = np.sum(u * jv).real, np.sum(ju * v).real
        assert abs(lhs - rhs) <= 1e-10 * max(abs(lhs), abs(rhs), 1.0)
