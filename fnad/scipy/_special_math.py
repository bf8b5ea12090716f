"""NumPy kernels for special functions (no SciPy at run time), accurate to about 1e-15.

erf/erfc: W. J. Cody's rational approximations (erf near 0, erfc beyond 0.5); for erfc
e^{-x^2} is split so that no rounding of x^2 is amplified. This is fnad's one erf: fnad_nn's
exact GELU uses it too (fnad.random has its own float32 one, built from correctly rounded
operations only, so that its numbers are the same bits on CPU and GPU).
erfinv: an initial guess refined by Halley steps on erf/erfc.
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


def _poly(c, z):
    """Horner's rule, coefficients highest degree first."""
    r = np.full_like(z, c[0])
    for ci in c[1:]:
        r = r * z + ci
    return r


# W. J. Cody, "Rational Chebyshev approximations for the error function" (Math. Comp. 1969),
# highest degree first: erf(x) = x A(x^2)/B(x^2) for |x| < 0.5; erfc(x) = e^{-x^2} C(x)/D(x)
# on [0.5, 4); erfc(x) = e^{-x^2}/x (1/sqrt(pi) + P(1/x^2)/(x^2 Q(1/x^2))) beyond.
_ERF_A = [1.857777061846031526730e-1, 3.161123743870565596947e0, 1.138641541510501556495e2,
          3.774852376853020208137e2, 3.209377589138469472562e3]
_ERF_B = [1.0, 2.360129095234412093499e1, 2.440246379344441733056e2,
          1.282616526077372275645e3, 2.844236833439170622273e3]
_ERF_C = [2.15311535474403846343e-8, 5.64188496988670089180e-1, 8.88314979438837594118e0,
          6.61191906371416294775e1, 2.98635138197400131132e2, 8.81952221241769090411e2,
          1.71204761263407058314e3, 2.05107837782607146532e3, 1.23033935479799725272e3]
_ERF_D = [1.0, 1.57449261107098347253e1, 1.17693950891312499305e2, 5.37181101862009857509e2,
          1.62138957456669018874e3, 3.29079923573345962678e3, 4.36261909014324715820e3,
          3.43936767414372163696e3, 1.23033935480374942043e3]
_ERF_P = [-1.63153871373020978498e-2, -3.05326634961232344035e-1, -3.60344899949804439429e-1,
          -1.25781726111229246204e-1, -1.60837851487422766278e-2, -6.58749161529837803157e-4]
_ERF_Q = [1.0, 2.56852019228982242072e0, 1.87295284992346725209e0, 5.27905102951428412248e-1,
          6.05183413124413191178e-2, 2.33520497626869185443e-3]


def _erf_small(x):
    """erf(x) for |x| < 0.5."""
    z2 = x * x
    return x * _poly(_ERF_A, z2) / _poly(_ERF_B, z2)


def _erfc_pos(z, exact_exp):
    """erfc(z) for z >= 0.5 (or NaN). With `exact_exp`, e^{-z^2} without the error of
    rounding z*z (erfc's relative accuracy needs it; erf = 1 - erfc does not)."""
    ex = _exp_neg_sq if exact_exp else (lambda v: np.exp(-v * v))
    out = np.empty_like(z)
    mid = z < 4.0
    _apply(out, mid, lambda v: ex(v) * _poly(_ERF_C, v) / _poly(_ERF_D, v), z)
    _apply(out, ~mid, lambda v: _erfc_big(np.minimum(v, 30.0), ex), z)  # erfc(30) is 0
    return out


def _erfc_big(v, ex):
    iz2 = 1.0 / (v * v)
    return ex(v) / v * (1.0 / _SQRT_PI + iz2 * _poly(_ERF_P, iz2) / _poly(_ERF_Q, iz2))


def _erf64(x):
    out = np.empty_like(x)
    a = np.abs(x)
    small = a < 0.5
    _apply(out, small, _erf_small, x)
    _apply(out, ~small, lambda v, a: np.copysign(1.0 - _erfc_pos(a, False), v), x, a)
    return out


def _erfc64(x):
    out = np.empty_like(x)
    small = np.abs(x) < 0.5
    _apply(out, small, lambda v: 1.0 - _erf_small(v), x)
    _apply(out, x >= 0.5, lambda v: _erfc_pos(v, True), x)
    _apply(out, x <= -0.5, lambda v: 2.0 - _erfc_pos(-v, True), x)
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
