"""Logarithm, exponential, erf and erfinv from IEEE-754 correctly rounded operations only
(+, -, *, /, sqrt, frexp, ldexp, rint), not the platform's math library: the same key then
gives bit-identical numbers on every backend (fnad/random's promise)."""

import math

import numpy as np

__all__ = ["horner", "log", "exp", "erfinv", "erf", "erf_any"]


def horner(x, coeffs, dtype):
    p = dtype.type(coeffs[0])
    for c in coeffs[1:]:
        p = p * x + dtype.type(c)
    return p


_LN2_HI, _LN2_LO = 0.693145751953125, 1.4286068203094173e-06  # hi has 16 significant bits


def log(xp, x):
    """Natural log of positive finite `x` from frexp and +-*/ only (bit-reproducible)."""
    dtype = x.dtype
    m, e = xp.frexp(x)
    small = m < dtype.type(math.sqrt(0.5))
    m = xp.where(small, m * dtype.type(2), m)
    e = (e - small.astype(e.dtype)).astype(dtype)
    s = (m - dtype.type(1)) / (m + dtype.type(1))  # |s| <= 0.1716
    s2 = s * s
    nterms = 12 if dtype == np.float64 else 6
    poly = horner(s2, [1.0 / (2 * j + 1) for j in range(nterms - 1, -1, -1)], dtype)
    return e * dtype.type(_LN2_HI) + (e * dtype.type(_LN2_LO) + dtype.type(2) * s * poly)


def exp(xp, x):
    """exp(x) for finite `x` from rint, ldexp and +-*/ only (bit-reproducible)."""
    dtype = x.dtype
    lim = 700.0 if dtype == np.float64 else 87.0
    x = xp.clip(x, dtype.type(-lim), dtype.type(lim))
    kf = xp.rint(x * dtype.type(1 / math.log(2)))
    r = (x - kf * dtype.type(_LN2_HI)) - kf * dtype.type(_LN2_LO)  # |r| <= 0.35
    nterms = 14 if dtype == np.float64 else 8
    p = horner(r, [1.0 / math.factorial(j) for j in range(nterms - 1, -1, -1)], dtype)
    return xp.ldexp(p, kf.astype(xp.int32))


# Single-precision erfinv coefficients from M. Giles, "Approximating the erfinv function"
# (GPU Computing Gems, 2011), the approximation XLA uses for float32.
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def erfinv(xp, x):
    """Inverse error function on [-1, 1] (+-inf at +-1): relative error below 1e-6 in
    float32; float64 refines that to about 1 ulp (JAX's x64 normals)."""
    dtype = x.dtype
    t = (dtype.type(1) - x) * (dtype.type(1) + x)
    edge = t <= 0
    w = -log(xp, xp.where(edge, dtype.type(1), t))
    central = horner(w - dtype.type(2.5), _ERFINV_CENTRAL, dtype)
    tail = horner(xp.sqrt(w) - dtype.type(3), _ERFINV_TAIL, dtype)
    p = xp.where(w < dtype.type(5), central, tail) * x
    if dtype == np.float64:
        y = xp.where(edge, 0.0, x)
        p = _refine64(xp, y, xp.where(edge, 0.0, p))
        # Newton's steps (from 1.5 on) converge quadratically, not cubically: one more step
        # there, and five beyond 1 - 6e-8 where the float32 fit starts far off; per entry,
        # so that an entry never depends on the others
        for more, sel in ((1, xp.abs(p) >= _CF_FROM), (4, w >= 16.5)):
            p = _refine_where(xp, y, p, sel, more)
    return xp.where(edge, xp.copysign(dtype.type(np.inf), x), p)


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_CF_FROM = 1.5  # erfc by its continued fraction from here, erf by its series below


# erf(x) = (2/sqrt(pi)) exp(-x^2) x sum_n (2x^2)^n / (1 3 ... (2n+1)): positive terms, no
# cancellation; 32 terms reach 1 ulp for x <= 1.5 (Horner in x^2, highest power first)
_ERF_SERIES = tuple(2.0**n / math.prod(range(1, 2 * n + 2, 2)) for n in range(31, -1, -1))


def _cf_denominator(x):
    """K of erfc(x) = exp(-x^2) / (sqrt(pi) K) for x >= 1.5: the continued fraction
    x + (1/2) / (x + 1 / (x + (3/2) / ...)), evaluated from a fixed depth upwards."""
    k = x
    for j in range(100, 0, -1):
        k = x + (j / 2) / k
    return k


def _refine64(xp, y, x):
    """One refinement of x = erfinv(y): below 1.5 a Halley step on erf(x) - y; above, a
    Newton step on log erfc(x) = log(1 - |y|) (1 - |y| is exact there), which converges from
    far guesses as log erfc is nearly -x^2. Each branch runs on its own entries only."""
    shape = x.shape
    a, ax = xp.abs(y).reshape(-1), xp.abs(x).reshape(-1)
    low = ax < _CF_FROM
    if not _on_host(xp):  # no data-dependent branch on a device: both branches, selected
        out = xp.where(low, _halley_low(xp, xp.where(low, ax, 0.5), a),
                       _newton_high(xp, xp.where(low, 2.0, ax), xp.where(low, 0.5, a)))
        return xp.copysign(out.reshape(shape), y)
    out = ax.copy()
    if low.any():
        out[low] = _halley_low(xp, ax[low], a[low])
    high = ~low
    if high.any():
        out[high] = _newton_high(xp, ax[high], a[high])
    return xp.copysign(out.reshape(shape), y)


def _on_host(xp):
    return xp is np


def _halley_low(xp, xs, al):
    """A Halley step on erf(x) - y for x < 1.5 (x, y >= 0)."""
    x2 = xs * xs
    scale = _TWO_OVER_SQRT_PI * exp(xp, -x2)  # erf'(x)
    r = (scale * (xs * horner(x2, _ERF_SERIES, xs.dtype)) - al) / scale
    return xs - r / (1.0 + xs * r)


def _newton_high(xp, xc, ah):
    """A Newton step on log erfc(x) = log(1 - y) for x >= 1.5 (x, y >= 0)."""
    k = _cf_denominator(xc)
    log_erfc = -xc * xc - log(xp, math.sqrt(math.pi) * k)
    return xc + (log_erfc - log(xp, 1.0 - ah)) / (2.0 * k)


def _refine_where(xp, y, p, sel, steps):
    """`steps` more refinements of p = erfinv(y) where `sel` holds (on the host only on the
    selected entries; on a device on all, then selected, so no value is read back)."""
    if not _on_host(xp):
        q = p
        for _ in range(steps):
            q = _refine64(xp, y, q)
        return xp.where(sel, q, p)
    sel = sel.reshape(-1)
    if not sel.any():
        return p
    flat = p.reshape(-1)
    pf, yf = flat[sel], y.reshape(-1)[sel]
    for _ in range(steps):
        pf = _refine64(xp, yf, pf)
    flat[sel] = pf
    return flat.reshape(p.shape)


# Numerical Recipes' erfc approximation (fractional error below 1.2e-7 everywhere):
# erfc(z) = t * exp(-z*z - 1.26551223 + t * P(t)) with t = 1 / (1 + z/2), z >= 0.
_ERFC = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
         0.09678418, 0.37409196, 1.00002368)


def erf(xp, x):
    dtype = x.dtype
    z = xp.abs(x)
    t = dtype.type(1) / (dtype.type(1) + dtype.type(0.5) * z)
    erfc = t * exp(xp, (-z * z + dtype.type(-1.26551223)) + t * horner(t, _ERFC, dtype))
    return xp.copysign(dtype.type(1) - erfc, x)


def erf_any(xp, v):
    """erf of a host scalar (computed with NumPy, stays a scalar) or of an `xp` array."""
    if isinstance(v, np.generic):
        return erf(np, np.asarray(v))[()]
    return erf(xp, v)
