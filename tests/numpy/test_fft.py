"""fnad.numpy.fft: NumPy's values and signatures, derivatives with complex directions, errors.

The op table (tests/numpy/cases_fft.py) checks every transform against PyTorch and finite
differences through real functions; here check_grads draws complex directions itself."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad.test_util import check_grads

F = fnp.fft
RNG = np.random.default_rng(15)
X = RNG.standard_normal((3, 5))
Z = X + 1j * RNG.standard_normal((3, 5))
Z3 = RNG.standard_normal((2, 3, 4)) + 1j * RNG.standard_normal((2, 3, 4))

C2C = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn"]
NORMS = [None, "backward", "ortho", "forward"]


@pytest.mark.parametrize("name", C2C)
@pytest.mark.parametrize("norm", NORMS)
def test_complex_transforms_match_numpy(name, norm):
    for a in (Z, X, Z3):
        np.testing.assert_allclose(getattr(F, name)(a, norm=norm),
                                   getattr(np.fft, name)(a, norm=norm), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("kw", [{"n": 3}, {"n": 8}, {"n": 7, "axis": 0}, {"n": 1, "axis": -2}])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft"])
def test_n_pads_or_crops_like_numpy(name, kw):
    np.testing.assert_allclose(getattr(F, name)(X, **kw), getattr(np.fft, name)(X, **kw),
                               atol=1e-13)


@pytest.mark.parametrize("n", [None, 1, 2, 5, 6, 9])
@pytest.mark.parametrize("norm", NORMS)
def test_irfft_odd_and_even_lengths_match_numpy(n, norm):
    np.testing.assert_allclose(F.irfft(Z, n=n, norm=norm), np.fft.irfft(Z, n=n, norm=norm),
                               atol=1e-13)


@pytest.mark.parametrize("kw", [{}, {"axes": (0, 2)}, {"s": (3, 5), "axes": (1, 2)},
                                {"s": (4, -1, 7), "axes": (0, 1, 2)}, {"axes": (2, 0)}])
@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_nd_s_and_axes_match_numpy(name, kw):
    a = Z3.real if name == "rfftn" else Z3
    np.testing.assert_allclose(getattr(F, name)(a, **kw), getattr(np.fft, name)(a, **kw),
                               atol=1e-12)


def test_two_d_real_transforms_and_round_trips():
    np.testing.assert_allclose(F.rfft2(X), np.fft.rfft2(X), atol=1e-13)
    np.testing.assert_allclose(F.irfft2(F.rfft2(X), s=X.shape), X, atol=1e-13)
    np.testing.assert_allclose(F.irfft(F.rfft(X), n=5), X, atol=1e-13)  # odd length needs n
    np.testing.assert_allclose(F.ifftn(F.fftn(Z3)), Z3, atol=1e-13)


def test_repeated_axes_transform_twice_like_numpy():
    np.testing.assert_allclose(F.fftn(Z, axes=(1, 1)), np.fft.fftn(Z, axes=(1, 1)), atol=1e-12)


def test_dtypes_follow_numpy():
    x32 = X.astype(np.float32)
    for name in ("fft", "rfft", "fftn"):
        assert getattr(F, name)(x32).dtype == getattr(np.fft, name)(x32).dtype
    assert F.irfft(Z.astype(np.complex64)).dtype == np.float32
    assert F.fft(np.arange(4)).dtype == np.complex128


def test_shifts_and_frequencies_match_numpy():
    for a in (X, Z3):
        np.testing.assert_array_equal(F.fftshift(a), np.fft.fftshift(a))
        np.testing.assert_array_equal(F.ifftshift(a), np.fft.ifftshift(a))
        np.testing.assert_array_equal(F.fftshift(a, axes=(0, -1)),
                                      np.fft.fftshift(a, axes=(0, -1)))
        np.testing.assert_array_equal(F.ifftshift(a, axes=1), np.fft.ifftshift(a, axes=1))
    for n in (1, 4, 7):
        np.testing.assert_array_equal(F.fftfreq(n, 0.1), np.fft.fftfreq(n, 0.1))
        np.testing.assert_array_equal(F.rfftfreq(n, 0.1), np.fft.rfftfreq(n, 0.1))


# ----------------------------------------------------------------------------- derivatives

GRAD_CASES = [
    ("fft", lambda z: F.fft(z), Z),
    ("fft real input", lambda x: F.fft(x, n=6), X),
    ("ifft crop ortho", lambda z: F.ifft(z, n=3, axis=0, norm="ortho"), Z),
    ("fft2 pad forward", lambda z: F.fft2(z, s=(4, 6), norm="forward"), Z),
    ("ifftn axes", lambda z: F.ifftn(z, axes=(0, 2)), Z3),
    ("rfft odd", lambda x: F.rfft(x), X),
    ("rfft n=8 ortho", lambda x: F.rfft(x, n=8, norm="ortho"), X),
    ("irfft default", lambda z: F.irfft(z), Z),
    ("irfft odd n", lambda z: F.irfft(z, n=5, norm="forward"), Z),
    ("irfft even n axis 0", lambda z: F.irfft(z, n=4, axis=0), Z),
    ("irfft pads spectrum", lambda z: F.irfft(z, n=11, norm="ortho"), Z),
    ("rfftn", lambda x: F.rfftn(x), X),
    ("irfftn s", lambda z: F.irfftn(z, s=(3, 5), axes=(0, 1)), Z),
    ("irfft2", lambda z: F.irfft2(z), Z3),
    ("fftshift", lambda z: F.fftshift(z, axes=0), Z),
    ("power spectrum", lambda x: fnp.abs(F.rfft(x)) ** 2, X),
]


@pytest.mark.parametrize("name, fun, arg", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_check_grads_with_complex_directions(name, fun, arg):
    check_grads(fun, (arg,), order=2)


def test_irfft_ignores_the_imaginary_dc_and_nyquist_parts():
    """irfft reads only the real part of the zero (and even-n Nyquist) term; the gradient
    there is real (zero imaginary part), as the Hermitian weighting says."""
    w = RNG.standard_normal(6)
    g = fnad.grad(lambda z: fnp.sum(F.irfft(z, n=6) * w))(Z[0, :4])
    assert g[0].imag == 0 and g[3].imag == 0 and np.all(g[1:3].imag != 0)
    g = fnad.grad(lambda z: fnp.sum(F.irfft(z, n=7) * RNG.standard_normal(7)))(Z[0, :4])
    assert g[0].imag == 0 and g[3].imag != 0  # odd n: the last term is a full pair


def test_parseval_gradient():
    """sum |fft(x)|^2 = n sum |x|^2, so its gradient in x is 2 n x (and 2 n conj(z))."""
    g = fnad.grad(lambda x: fnp.sum(fnp.abs(F.fft(x)) ** 2))(X)
    np.testing.assert_allclose(g, 2 * 5 * X, atol=1e-12)
    g = fnad.grad(lambda z: fnp.sum(fnp.abs(F.fft2(z, norm="ortho")) ** 2))(Z)
    np.testing.assert_allclose(g, 2 * np.conj(Z), atol=1e-12)


def test_jvp_and_vjp_are_transposes_for_every_transform():
    for name in ("fft", "ifft", "rfft", "irfft", "fftn", "rfftn", "irfftn"):
        a = X if name.startswith("rfft") else Z
        f = getattr(F, name)
        t = a + 0.5
        _, jt = fnad.jvp(f, (a,), (t,))
        out, f_vjp = fnad.vjp(f, a)
        u = np.ones_like(out) * (1 - 2j if np.iscomplexobj(out) else 1.0)
        (vu,) = f_vjp(u)
        assert np.isclose(np.real(np.sum(u * jt)), np.real(np.sum(vu * t)), rtol=1e-12)


# ----------------------------------------------------------------------------- errors


def test_bad_norm_names_the_function_and_the_choices():
    with pytest.raises(ValueError, match=r"fft.fft: invalid norm value 'unitary'.*ortho"):
        F.fft(X, norm="unitary")


@pytest.mark.parametrize("n", [0, -3])
def test_bad_length_is_refused(n):
    with pytest.raises(ValueError, match=rf"fft.rfft: invalid number of FFT data points \({n}\)"):
        F.rfft(X, n=n)


def test_complex_input_to_a_real_transform_names_the_dtype():
    with pytest.raises(TypeError, match=r"rfft: the input must be real, got dtype complex128"):
        F.rfft(Z)
    with pytest.raises(TypeError, match=r"rfftn: .*complex128"):
        fnad.grad(lambda x: fnp.sum(fnp.abs(F.rfftn(x * 1j))))(X)


def test_zero_d_input_and_bad_axes_are_refused():
    with pytest.raises(ValueError, match="fft.fft: the input must have at least one axis"):
        F.fft(np.float64(2.0))
    with pytest.raises(ValueError, match="fft.fftn: axis 3 is out of bounds"):
        F.fftn(Z, axes=(3,))
    with pytest.raises(ValueError, match="fft.fftn: s has 2 entries but there are 1 axes"):
        F.fftn(Z, s=(2, 3), axes=(0,))


def test_s_without_axes_warns_as_numpy_does():
    with pytest.warns(DeprecationWarning, match="axes"):
        out = F.fftn(Z3, s=(3, 4))
    with pytest.warns(DeprecationWarning):
        expected = np.fft.fftn(Z3, s=(3, 4))
    np.testing.assert_allclose(out, expected, atol=1e-12)


def test_plain_arrays_record_nothing():
    assert type(F.fft(X)) is np.ndarray and type(F.irfft(Z)) is np.ndarray


def test_docs_api_lists_every_fft_and_complex_name():
    from tests.numpy.test_coverage import api_names
    names = api_names()
    assert [n for n in names["fft"] if not hasattr(F, n)] == []
    assert len(names["fft"]) == 16 and set(names["fft"]) == set(F.__all__)
    assert [n for n in names["complex"] if not hasattr(fnp, n)] == []
