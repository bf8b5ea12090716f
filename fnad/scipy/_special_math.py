"""NumPy kernels for special functions (no SciPy at run time), accurate to about 1e-15.

erf/erfc: the everywhere-convergent series erf(x) = 2x/sqrt(pi) e^{-x^2} sum (2x^2)^n/(2n+1)!!
for |x| < 2 and the even continued fraction of erfc beyond; e^{-x^2} is split so that no
rounding of x^2 is amplified. erfinv: an initial guess refined by Halley steps on erf/erfc.
gammaln/digamma: the Taylor series of lgamma and digamma about 2 (coefficients zeta(k) - 1),
reached by exact recurrences, Stirling's series for x >= 10 and reflection for x <= 0.
polygamma: the Hurwitz zeta function by Euler-Maclaurin summation.

Every kernel computes in float64 and returns the input's float dtype (float64 for integers).
"""

import math
from fractions import Fraction

import numpy as np

__all__ = ["erf", "erfc", "erfinv", "gammaln", "digamma", "polygamma", "hurwitz_zeta"]

_SQRT_PI = math.sqrt(math.pi)
_EULER = 0.57721566490153286061
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
# Bernoulli numbers B_2, B_4, ..., B_20.
_B2J = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66),
        Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510), Fraction(43867, 798),
        Fraction(-174611, 330)]


def _prepare(x):
    """`x` as a float64 array, and the dtype to return."""
    x = np.asarray(x)
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    return x.astype(np.float64), dt


def _finish(out, dt):
    return out.astype(dt, copy=False)[()]


def _apply(out, mask, fun, *args):
    """out[mask] = fun(*(a[mask] for a in args)), skipping empty selections."""
    if mask.any():
        out[mask] = fun(*(a[mask] for a in args))


def _exp_neg_sq(x):
    """exp(-x*x) for 0 <= x <= 30 without the error of rounding x*x."""
    hi = x.astype(np.float32).astype(np.float64)  # 24 bits: hi*hi is exact
    return np.exp(-hi * hi) * np.exp(-(x - hi) * (x + hi))


# ----------------------------------------------------------------------------- erf, erfc


def _series_terms(xmax):
    """Terms of the erf series needed at |x| <= xmax: the tail (a geometric-like sum
    of positive terms, each below the last) falls under 1e-17 of the sum (which is >= 1)."""
    z, term, n = 2.0 * xmax * xmax, 1.0, 0
    while term > 1e-18 or 2 * n + 1 < z:
        n += 1
        term *= z / (2 * n + 1)
    return n + 1


def _erf_series(x):
    """erf(x) for |x| < 2 (at most 32 terms, fewer for smaller |x|)."""
    z = 2.0 * x * x
    term = np.ones_like(x)
    total = np.ones_like(x)
    for n in range(1, _series_terms(float(np.abs(x).max())) if x.size else 1):
        term = term * z / (2 * n + 1)
        total = total + term
    return (2.0 / _SQRT_PI) * x * np.exp(-x * x) * total


def _erfc_cf(x):
    """erfc(x) for x >= 1 by the even continued fraction
    erfc(x) = 2x e^{-x^2}/sqrt(pi) / (2x^2+1 - 1*2/(2x^2+5 - 3*4/(2x^2+9 - ...)))."""
    x = np.minimum(x, 30.0)  # erfc(30) underflows to 0
    depth = 80 if x.size and x.min() < 2 else 40
    z = 2.0 * x * x
    k_frac = z + (1 + 4 * depth)
    for k in range(depth, 0, -1):
        k_frac = z + (1 + 4 * (k - 1)) - ((2 * k - 1) * (2 * k)) / k_frac
    return 2.0 * x * _exp_neg_sq(x) / (_SQRT_PI * k_frac)


def _erf64(x):
    out = np.empty_like(x)
    small = np.abs(x) < 2
    _apply(out, small, _erf_series, x)
    big = ~small
    _apply(out, big, lambda v: np.copysign(1.0 - _erfc_cf(np.abs(v)), v), x)
    return out


def _erfc64(x):
    out = np.empty_like(x)
    mid = (x > -2) & (x < 1)
    _apply(out, mid, lambda v: 1.0 - _erf_series(v), x)
    _apply(out, x >= 1, _erfc_cf, x)
    low = x <= -2
    _apply(out, low, lambda v: 2.0 - _erfc_cf(-v), x)
    _apply(out, np.isnan(x), lambda v: v, x)
    return out


def erf(x):
    """The error function on a NumPy array (float64 accuracy about 1e-16)."""
    x, dt = _prepare(x)
    return _finish(_erf64(x), dt)


def erfc(x):
    """The complementary error function 1 - erf(x), accurate in relative terms for large x."""
    x, dt = _prepare(x)
    return _finish(_erfc64(x), dt)


def _halley(x, a, residual, steps):
    """Halley steps on residual(x, a) = erf(x) - a: cubic convergence takes the starting
    relative error (2e-3, worse towards |a| = 1) to ~1e-8, then below rounding."""
    for _ in range(steps):
        r = residual(x, a) / ((2.0 / _SQRT_PI) * np.exp(-x * x))
        x = x - r / (1.0 + x * r)
    return x


def _erfinv64(y):
    a = np.abs(y)
    # Winitzki's approximation (relative error < 2e-3) as the starting point.
    w = np.log((1.0 - a) * (1.0 + a))
    c = 2.0 / (math.pi * 0.147) + 0.5 * w
    x = np.sqrt(np.sqrt(c * c - w / 0.147) - c)
    out = np.empty_like(y)
    upper = a > 0.5  # there erf(x) - a is computed as (1 - a) - erfc(x), without cancellation
    _apply(out, upper, lambda x, a: _halley(x, a, lambda x, a: (1.0 - a) - _erfc64(x), 3), x, a)
    _apply(out, ~upper, lambda x, a: _halley(x, a, lambda x, a: _erf64(x) - a, 2), x, a)
    return np.copysign(out, y)


def erfinv(y):
    """The inverse error function on [-1, 1] (+-inf at +-1, NaN outside)."""
    y, dt = _prepare(y)
    out = np.full_like(y, np.nan)
    inside = np.abs(y) < 1
    _apply(out, inside, _erfinv64, y)
    out[np.abs(y) == 1] = np.copysign(np.inf, y[np.abs(y) == 1])
    return _finish(out, dt)


# ----------------------------------------------------------------------------- zeta


def _rising(s, n):
    """s (s+1) ... (s+n-1) as an exact integer (s a positive integer)."""
    return math.prod(range(s, s + n))


def hurwitz_zeta(s, x):
    """Hurwitz zeta sum_{k>=0} (x + k)^{-s} for an integer s >= 2 and float64 array x
    (x not a non-positive integer), by shifting x to >= 10 + s and Euler-Maclaurin."""
    x = np.asarray(x, dtype=np.float64)
    target = 10.0 + s
    finite = np.isfinite(x)
    n_shift = np.where(finite, np.maximum(np.ceil(target - np.where(finite, x, target)), 0), 0)
    total = np.zeros_like(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(int(n_shift.max()) if x.size else 0):
            total = total + np.where(k < n_shift, np.power(x + k, -float(s)), 0.0)
        a = x + n_shift
        total = total + np.power(a, 1.0 - s) / (s - 1) + 0.5 * np.power(a, -float(s))
        inv_a2 = 1.0 / (a * a)
        power = np.power(a, -(s + 1.0))  # a^{-s-2j+1} for j = 1
        for j, b in enumerate(_B2J, start=1):
            coef = float(b / math.factorial(2 * j) * _rising(s, 2 * j - 1))
            total = total + coef * power
            power = power * inv_a2
    return np.where(x == np.inf, 0.0, total)


# zeta(k) - 1 = hurwitz_zeta(k, 2) for k = 2 .. 45: the Taylor coefficients about 2.
_ZETA_M1 = np.array([float(hurwitz_zeta(k, np.array(2.0))) for k in range(2, 46)])
# lgamma(2 + z) = (1 - gamma) z + sum_{k>=2} (-1)^k (zeta(k) - 1) z^k / k
_LGAMMA_COEF = np.array([(-1) ** k * _ZETA_M1[k - 2] / k for k in range(2, 34)])
# digamma(2 + z) = (1 - gamma) + sum_{k>=2} (-1)^k (zeta(k) - 1) z^(k-1)
_DIGAMMA_COEF = np.array([(-1) ** k * _ZETA_M1[k - 2] for k in range(2, 46)])


def _horner(coef, z):
    acc = np.zeros_like(z)
    for c in coef[::-1]:
        acc = acc * z + c
    return acc


def _lgamma_core(z):
    """lgamma(2 + z) for |z| <= 0.5."""
    return z * ((1.0 - _EULER) + z * _horner(_LGAMMA_COEF, z))


def _digamma_core(z):
    """digamma(2 + z) for |z| <= 0.6."""
    return (1.0 - _EULER) + z * _horner(_DIGAMMA_COEF, z)


# ----------------------------------------------------------------------------- gammaln


def _lgamma_stirling(x):
    inv = 1.0 / x
    inv2 = inv * inv
    corr = np.zeros_like(x)
    for k in range(8, 0, -1):
        corr = corr * inv2 + float(_B2J[k - 1] / (2 * k * (2 * k - 1)))
    return (x - 0.5) * np.log(x) - x + _HALF_LOG_2PI + corr * inv


def _lgamma_mid(x):
    """2.5 <= x < 10: lgamma(y) + log(y (y+1) ... (x-1)) with y = x - n in [1.5, 2.5)."""
    n = np.floor(x - 1.5)
    y = x - n
    prod = np.ones_like(x)
    for i in range(8):
        prod = prod * np.where(i < n, y + i, 1.0)
    return _lgamma_core(y - 2.0) + np.log(prod)


def _lgamma_pos(x):
    """lgamma for x > 0 (inf and NaN included)."""
    out = np.empty_like(x)
    _apply(out, ~(x < 10), _lgamma_stirling, x)
    _apply(out, (x >= 2.5) & (x < 10), _lgamma_mid, x)
    _apply(out, (x >= 1.5) & (x < 2.5), lambda v: _lgamma_core(v - 2.0), x)
    _apply(out, (x >= 0.5) & (x < 1.5), lambda v: _lgamma_core(v - 1.0) - np.log1p(v - 1.0), x)
    _apply(out, (x > 0) & (x < 0.5), lambda v: _lgamma_core(v) - np.log1p(v) - np.log(v), x)
    out[x == np.inf] = np.inf
    return out


def _sinpi_abs(x):
    """|sin(pi x)| with exact argument reduction."""
    return np.abs(np.sin(math.pi * (x - np.round(x))))


def _lgamma_neg(x):
    with np.errstate(divide="ignore"):
        return np.log(math.pi / _sinpi_abs(x)) - _lgamma_pos(1.0 - x)


def gammaln(x):
    """log|Gamma(x)| on a NumPy array (inf at non-positive integers, as SciPy)."""
    x, dt = _prepare(x)
    out = np.empty_like(x)
    pos = ~(x <= 0)
    _apply(out, pos, _lgamma_pos, x)
    neg = (x <= 0) & np.isfinite(x)
    _apply(out, neg, _lgamma_neg, x)
    out[x == -np.inf] = -np.inf
    return _finish(out, dt)


# ----------------------------------------------------------------------------- digamma


def _digamma_asymptotic(x):
    inv2 = 1.0 / (x * x)
    corr = np.zeros_like(x)
    for k in range(8, 0, -1):
        corr = corr * inv2 + float(_B2J[k - 1] / (2 * k))
    return np.log(x) - 0.5 / x - corr * inv2


def _digamma_mid(x):
    """2.6 <= x < 10: digamma(y) + sum 1/(y + i) with y = x - n in [1.4, 2.4)."""
    n = np.floor(x - 1.4)
    y = x - n
    acc = np.zeros_like(x)
    for i in range(9):
        acc = acc + np.where(i < n, 1.0 / (y + i), 0.0)
    return _digamma_core(y - 2.0) + acc


# The positive zero of digamma as hi + lo, and the Taylor coefficients about it,
# psi^(k)(x0) / k! = (-1)^(k+1) zeta(k + 1, x0): near the zero the result is z * (...) with
# z = x - x0 formed exactly, so it stays relatively accurate where psi is tiny.
_X0_HI = 1.4616321449683622
_X0_LO = float(Fraction("1.4616321449683623412626595423257213284681962040064") - Fraction(_X0_HI))
_ROOT_COEF = np.array([(-1) ** (k + 1) * float(hurwitz_zeta(k + 1, np.array(_X0_HI)))
                       for k in range(1, 20)])


def _digamma_root(x):
    """digamma for |x - x0| < 0.1 (19 terms: (0.1 / 1.46)^19 < 1e-22)."""
    z = (x - _X0_HI) - _X0_LO
    return z * _horner(_ROOT_COEF, z)


def _digamma_pos(x):
    out = np.empty_like(x)
    _apply(out, ~(x < 10), _digamma_asymptotic, x)
    _apply(out, (x >= 2.6) & (x < 10), _digamma_mid, x)
    _apply(out, (x >= 1.4) & (x < 2.6), lambda v: _digamma_core(v - 2.0), x)
    _apply(out, (x >= 0.4) & (x < 1.4), lambda v: _digamma_core(v - 1.0) - 1.0 / v, x)
    _apply(out, (x > 0) & (x < 0.4),
           lambda v: _digamma_core(v) - 1.0 / v - 1.0 / (v + 1.0), x)
    _apply(out, np.abs(x - _X0_HI) < 0.1, _digamma_root, x)
    return out


def _digamma_neg(x):
    r = x - np.round(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        res = _digamma_pos(1.0 - x) - math.pi / np.tan(math.pi * r)
    return np.where(r == 0, np.nan, res)


def digamma(x):
    """The digamma function psi = d lgamma / dx (NaN at negative integers, -inf at +0)."""
    x, dt = _prepare(x)
    out = np.empty_like(x)
    _apply(out, ~(x <= 0), _digamma_pos, x)
    _apply(out, x < 0, _digamma_neg, x)
    zero = x == 0
    out[zero] = np.copysign(np.inf, -x[zero])  # -inf at +0, +inf at -0
    return _finish(out, dt)


# ----------------------------------------------------------------------------- polygamma


def polygamma(n, x):
    """The n-th derivative of digamma, for integer n >= 0 (n and x broadcast)."""
    n = np.asarray(n)
    x, dt = _prepare(x)
    if n.dtype.kind == "f" and np.any(n != np.floor(n)):
        raise ValueError("fnad.scipy.special.polygamma: n must hold integers, got "
                         f"{n.tolist()}.")
    n, x = np.broadcast_arrays(n.astype(np.int64), x)
    out = np.empty(x.shape, dtype=np.float64)
    for k in np.unique(n):
        sel = n == k
        if k < 0:
            out[sel] = np.nan
        elif k == 0:
            out[sel] = digamma(x[sel])
        else:
            sign = 1.0 if k % 2 else -1.0
            out[sel] = sign * math.factorial(int(k)) * hurwitz_zeta(int(k) + 1, x[sel])
    return _finish(out, dt)
