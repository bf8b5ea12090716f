"""Complex error functions through the Faddeeva function w(z) = exp(-z^2) erfc(-iz), written
with array operations only, so the same code runs on NumPy and CuPy arrays.

w(z) for Im z >= 0: J. A. C. Weideman, "Computation of the complex error function" (SIAM J.
Numer. Anal. 31, 1994), the rational series with N = 40 terms: w(z) = 2 p(Z) / (L - iz)^2 +
1 / (sqrt(pi) (L - iz)), Z = (L + iz) / (L - iz), L = sqrt(N / sqrt 2), where the degree-39
polynomial p has coefficients from one FFT (computed once, at import). Over the upper half
plane up to |z| = 100 it agrees with scipy.special.wofz to 1.2e-14 relative (median 2e-16).

From w: erfc(z) = exp(-z^2) w(iz) for Re z >= 0 (iz lies in the upper half plane), and
erfc(z) = 2 - erfc(-z) for Re z < 0; erf(z) = 1 - erfc(z) (odd in z), except for |z| < 1
where the Taylor series of erf is used (no cancellation against 1); erfcx(z) = w(iz) for
Re z >= 0 and 2 exp(z^2) - w(-iz) for Re z < 0; log_ndtr(z) = -u^2 + log(w(iu) / 2) with
u = -z / sqrt 2 for Re z <= 0 (SciPy's principal branch: -u^2's imaginary part taken modulo
2 pi, and the result's imaginary part in (-pi, pi]), log1p(-erfc(-u) / 2) for Re z > 0
(SciPy's cancels there, fnad's keeps full accuracy). exp(-z^2) is formed from (y - x)(y + x)
and 2xy, which keeps the rounding of x^2 - y^2 out of the result. Inputs with a zero imaginary
part take the real kernels (exact on the real axis, infinities included).

Every function computes in complex128 and returns complex64 for complex64 (and float32)
input.
"""

import math

import numpy as np

from .._core.backend import array_module

__all__ = ["wofz", "erf", "erfc", "erfcx", "log_ndtr"]

_N = 40
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)


def _weideman_coefficients(n):
    """L and the coefficients of p, highest degree first (Weideman's eq. (3.4) by FFT)."""
    m = 2 * n
    k = np.arange(-m + 1, m)
    big_l = math.sqrt(n / math.sqrt(2.0))
    t = big_l * np.tan(k * np.pi / (2 * m))
    f = np.concatenate([[0.0], np.exp(-t * t) * (big_l * big_l + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return big_l, tuple(float(c) for c in a[n:0:-1])


_L, _A = _weideman_coefficients(_N)


def _as_complex(z):
    """`z` as a complex128 array of its backend, and the dtype to return."""
    xp = array_module(z)
    z = xp.asarray(z)
    single = z.dtype in (np.float32, np.float16, np.complex64)
    dt = np.dtype(np.complex64) if single else np.dtype(np.complex128)
    return xp, z.astype(np.complex128), dt


def _w_upper(z):
    """w(z) for Im z >= 0 (Weideman's series)."""
    d = _L - 1j * z
    big_z = (_L + 1j * z) / d
    p = 0.0 * big_z + _A[0]
    for c in _A[1:]:
        p = p * big_z + c
    return (2.0 * p / d + _INV_SQRT_PI) / d


def _exp_neg_sq(xp, z):
    """exp(-z^2), with the real part of -z^2 formed as (y - x)(y + x)."""
    x, y = z.real, z.imag
    return xp.exp((y - x) * (y + x)) * (xp.cos(2.0 * x * y) - 1j * xp.sin(2.0 * x * y))


def _erfc_right(xp, z):
    """erfc(z) for Re z >= 0."""
    return _exp_neg_sq(xp, z) * _w_upper(1j * z)


def _erf_taylor(z):
    """erf(z) = 2/sqrt(pi) sum (-1)^k z^(2k+1) / (k! (2k+1)) for |z| < 1 (28 terms reach
    rounding: the k-th term is below 1 / k!)."""
    z2 = z * z
    term, total = z, z
    for k in range(1, 28):
        term = term * (-z2) / k
        total = total + term / (2 * k + 1)
    return (2.0 * _INV_SQRT_PI) * total


def _on_real_axis(xp, z, out, real_kernel):
    """`out`, with the entries of real `z` replaced by `real_kernel` of their real part. On
    NumPy, inputs with none skip the real kernel; on a device the check is not made (it
    would read a value back)."""
    real = z.imag == 0
    if xp is np and not real.any():
        return out
    return xp.where(real, real_kernel(z.real) + 0j, out)


def _on_imaginary_axis(xp, z, out, real_part):
    """`out` with the real part set to `real_part` (erf: 0 with z's sign, erfc: 1) where z is
    on the imaginary axis, where erf is purely imaginary (1 - erfc would leave rounding of
    size eps |erfc| there)."""
    return xp.where(z.real == 0, (z.real if real_part == 0.0 else real_part) + 1j * out.imag,
                    out)


def _reflect(xp, z):
    """(z with Re z >= 0, whether it was flipped): erf and erfc are computed on the right."""
    left = z.real < 0
    return xp.where(left, -z, z), left


def erfc(z, real_kernel):
    """erfc of a complex array; `real_kernel` serves inputs on the real axis."""
    xp, z, dt = _as_complex(z)
    with np.errstate(all="ignore"):
        s, left = _reflect(xp, z)
        r = _erfc_right(xp, s)
        out = _on_imaginary_axis(xp, z, xp.where(left, 2.0 - r, r), 1.0)
        out = _on_real_axis(xp, z, out, real_kernel)
    return out.astype(dt, copy=False)[()]


def erf(z, real_kernel):
    """erf of a complex array; `real_kernel` serves inputs on the real axis."""
    xp, z, dt = _as_complex(z)
    with np.errstate(all="ignore"):
        s, left = _reflect(xp, z)
        small = xp.abs(z) < 1.0
        far = 1.0 - _erfc_right(xp, s)
        near = _erf_taylor(xp.where(small, z, 0.0))
        out = xp.where(small, near, xp.where(left, -far, far))
        out = _on_imaginary_axis(xp, z, out, 0.0)
        out = _on_real_axis(xp, z, out, real_kernel)
    return out.astype(dt, copy=False)[()]


def erfcx(z, real_kernel):
    """exp(z^2) erfc(z) of a complex array: w(iz), reflected as 2 exp(z^2) - w(-iz)."""
    xp, z, dt = _as_complex(z)
    with np.errstate(all="ignore"):
        s, left = _reflect(xp, z)
        r = _w_upper(1j * s)
        out = xp.where(left, 2.0 * _exp_neg_sq(xp, 1j * z) - r, r)
        out = _on_real_axis(xp, z, out, real_kernel)
    return out.astype(dt, copy=False)[()]


def wofz(z):
    """The Faddeeva function w(z) = exp(-z^2) erfc(-iz) (complex output for any input):
    Weideman's series on Im z >= 0, w(z) = 2 exp(-z^2) - w(-z) below."""
    xp, z, dt = _as_complex(z)
    with np.errstate(all="ignore"):
        lower = z.imag < 0
        r = _w_upper(xp.where(lower, -z, z))
        out = xp.where(lower, 2.0 * _exp_neg_sq(xp, z) - r, r)
    return out.astype(dt, copy=False)[()]


def _wrap_phase(xp, t):
    """`t` moved by a multiple of 2 pi into (-pi, pi]."""
    t = t - (2.0 * math.pi) * xp.round(t / (2.0 * math.pi))
    return xp.where(t <= -math.pi, t + 2.0 * math.pi, t)


def _log1p(xp, a):
    """log(1 + a) for complex a, accurate for tiny a (NumPy's complex log1p is not)."""
    re, im = a.real, a.imag
    return 0.5 * xp.log1p(re * (2.0 + re) + im * im) + 1j * xp.arctan2(im, 1.0 + re)


def log_ndtr(z, real_kernel):
    """log of the standard normal CDF of a complex array (SciPy's branch)."""
    xp, z, dt = _as_complex(z)
    with np.errstate(all="ignore"):
        u = z * (-1.0 / math.sqrt(2.0))
        x, y = u.real, u.imag
        w = wofz(1j * u)
        left = ((y - x) * (y + x) - math.log(2.0) + xp.log(xp.abs(w))
                + 1j * _wrap_phase(xp, _wrap_phase(xp, -2.0 * x * y) + xp.angle(w)))
        # Re z > 0: log(1 - ndtr(-z)), without the cancellation of exp(u^2) against w.
        s, _ = _reflect(xp, -u)
        out = xp.where(z.real > 0, _log1p(xp, -0.5 * _erfc_right(xp, s)), left)
        out = _on_real_axis(xp, z, out, real_kernel)
    return out.astype(dt, copy=False)[()]
