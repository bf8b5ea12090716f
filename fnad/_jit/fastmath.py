"""numba helpers of `fnad.jit(f, fast_math=True)`: exp, tanh, log, erf and the logistic
sigmoid in arithmetic LLVM can vectorise (imported by the generated kernels' modules, so
numba is imported only when such a kernel is built).

numba computes `np.exp`/`np.tanh`/`np.log` one element at a time through libm (its pip
build has no SVML), 20x slower than NumPy's SIMD loops. These are written with
multiplications, additions, one division at most, selects and integer bit operations on
the float's bits (`_bitcast`), no branches and no calls, so the loop of a fused kernel that
reads them vectorises. Each is a range reduction and a polynomial (Taylor coefficients):

- exp: x = k ln2 + r, |r| <= ln2/2 (Cody-Waite split of ln2), exp(r) by its Taylor
  polynomial (degree 7 for float32, 13 for float64), times 2^(k//2) * 2^(k - k//2) built
  from the exponent bits (two factors: results down to the subnormals round once); below
  the range (-104, -746: a mask's -inf) 0 by a select, as an underflowing product costs a
  microcode assist per value.
- tanh: (e^2|x| - 1) / (e^2|x| + 1) from the same reduction, with e^y - 1 as s*q + (s - 1)
  (q the polynomial of e^r - 1), the sign restored, x itself below 2^-12 (2^-27).
- log: x = 2^e m, m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s), s = (m-1)/(m+1), by its
  odd Taylor series; e ln2 added in two parts; subnormal inputs scaled first.
- erf (float32 only): x P(x^2) (Taylor) below 1; 1 - t exp(-x^2 + Q(t)), t = 1/(1 + x/2),
  above (the Chebyshev fit of Numerical Recipes' erfcc, relative error below 1.2e-7).
- sigmoid: e = exp(-|x|), 1/(1 + e) for x >= 0 and e/(1 + e) below, as fnad's expit.
- `fastsum`: a row sum LLVM may reassociate (and so vectorise), for fast math's row kernels.

NaN in, NaN out; inf and zero as NumPy gives them (the sign of a zero result included
for tanh and erf). Their error against float64 (float32 ops) or long double (float64 ops)
references is measured by tests/core/test_fast_math.py and stated in docs/jit.md.
"""

import numpy as np
from numba import njit

from .rowlib import _bitcast

__all__ = ["exp32", "exp64", "tanh32", "tanh64", "log32", "log64", "erf32", "sigmoid32",
           "sigmoid64", "fastsum"]

# Not numba's inline="always": LLVM inlines these small functions into the kernels anyway
# (their loops still vectorise), while inlining at numba's IR level typed each one again at
# every call site: the plain GPT step's cold first call under fast math took 16.8-18.6 s
# with it, 13.0-14.0 s without (benchmarks/compile_time.py, docs/benchmarks.md).
_OPTS = {"cache": True, "error_model": "numpy", "nogil": True}

f4, f8, i4, i8 = np.float32, np.float64, np.int32, np.int64

# ----------------------------------------------------------------------------- float32
L2E4, LN2HI4, LN2LO4 = f4(1.4426950408889634), f4(0.693359375), f4(-2.12194440e-4)
MAGIC4 = f4(12582912.0)  # 1.5 * 2^23: x + MAGIC4 - MAGIC4 rounds x to an integer
MAGIC4_BITS = i4(0x4B400000)
ONE4, HALF4, TWO4, ZERO4 = f4(1.0), f4(0.5), f4(2.0), f4(0.0)
INF4, NAN4 = f4(np.inf), f4(np.nan)
E4 = tuple(f4(1.0 / c) for c in (2, 6, 24, 120, 720, 5040))


@njit(**_OPTS)
def _reduce4(x):
    """(k as a float, r) with x = k ln2 + r, |r| <= ln2/2, for |x| <= 104."""
    kf = (x * L2E4 + MAGIC4) - MAGIC4
    return kf, (x - kf * LN2HI4) - kf * LN2LO4


@njit(**_OPTS)
def _expm1_poly4(r):
    """e^r - 1 for |r| <= ln2/2."""
    return r + r * r * (E4[0] + r * (E4[1] + r * (E4[2] + r * (E4[3] + r * (E4[4]
                                                                          + r * E4[5])))))


@njit(**_OPTS)
def _pow2_4(kf):
    """2^k for an integer-valued float k in [-126, 127]."""
    k = i4(_bitcast(kf + MAGIC4) - MAGIC4_BITS)
    return _bitcast(i4((k + 127) << 23))


@njit(**_OPTS)
def exp32(x):
    # below -104 (a mask's -inf) the result is 0: computed from exp(0) and selected, since a
    # product that underflows to zero costs a microcode assist, 4x the whole exp
    inside = x > f4(-104.0)
    xc = x if inside else ZERO4
    xc = xc if xc < f4(89.0) else f4(89.0)  # NaN: 0; fixed below
    kf, r = _reduce4(xc)
    p = ONE4 + _expm1_poly4(r)
    h = (kf * HALF4 + MAGIC4) - MAGIC4   # k/2 rounded: two normal factors 2^h 2^(k-h)
    res = (p * _pow2_4(h)) * _pow2_4(kf - h)
    res = res if inside else ZERO4
    return res if x == x else x


@njit(**_OPTS)
def tanh32(x):
    ax = abs(x)
    y = TWO4 * (ax if ax < f4(9.5) else f4(9.5))
    kf, r = _reduce4(y)
    s = _pow2_4(kf)
    e = s * _expm1_poly4(r) + (s - ONE4)  # e^y - 1
    t = e / (e + TWO4)
    t = t if x >= ZERO4 else -t
    t = x if ax < f4(2.0 ** -12) else t
    return t if x == x else x


# log(m) = 2 atanh(s) = 2 s + 2 s^3/3 + ...: the coefficients 2/(2i+1) of s^(2i+1), i >= 1
L4 = tuple(f4(2.0 / (2 * i + 1)) for i in range(1, 6))
SQRT2_4, MIN4 = f4(1.4142135623730951), f4(1.1754943508222875e-38)


@njit(**_OPTS)
def log32(x):
    tiny = x < MIN4
    xs = x * f4(8388608.0) if tiny else x  # subnormals scaled by 2^23
    b = _bitcast(xs)
    e = i4(((b >> 23) & 0xFF) - (150 if tiny else 127))
    m = _bitcast(i4((b & 0x7FFFFF) | 0x3F800000))
    big = m > SQRT2_4
    m = m * HALF4 if big else m
    ef = f4(e + 1 if big else e)
    f = m - ONE4
    s = f / (m + ONE4)
    z = s * s
    hf = HALF4 * f * f
    R = z * (L4[0] + z * (L4[1] + z * (L4[2] + z * (L4[3] + z * L4[4]))))
    res = ef * LN2HI4 + (f - (hf - (s * (hf + R) + ef * LN2LO4)))
    res = x if (x != x or x == INF4) else res
    res = -INF4 if x == ZERO4 else res
    return NAN4 if x < ZERO4 else res


# erf(x) = 2/sqrt(pi) sum_n (-1)^n x^(2n+1) / (n! (2n+1)), |x| < 1
_ERF_T = []
_fact = 1.0
for _n in range(12):
    _fact *= max(_n, 1)
    _ERF_T.append(2.0 / np.sqrt(np.pi) * (-1) ** _n / (_fact * (2 * _n + 1)))
T4 = tuple(f4(c) for c in _ERF_T)
NR4 = tuple(f4(c) for c in (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
                            0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277))


@njit(**_OPTS)
def erf32(x):
    ax = abs(x)
    z = x * x
    small = x * (T4[0] + z * (T4[1] + z * (T4[2] + z * (T4[3] + z * (T4[4] + z * (
        T4[5] + z * (T4[6] + z * (T4[7] + z * (T4[8] + z * (T4[9] + z * (
            T4[10] + z * T4[11])))))))))))
    a = ax if ax < f4(10.0) else f4(10.0)
    t = ONE4 / (ONE4 + HALF4 * a)
    q = NR4[0] + t * (NR4[1] + t * (NR4[2] + t * (NR4[3] + t * (NR4[4] + t * (
        NR4[5] + t * (NR4[6] + t * (NR4[7] + t * (NR4[8] + t * NR4[9]))))))))
    large = ONE4 - t * exp32(q - a * a)
    large = large if x >= ZERO4 else -large
    res = small if ax < ONE4 else large
    return res if x == x else x


@njit(**_OPTS)
def sigmoid32(x):
    e = exp32(-abs(x))
    s = ONE4 / (ONE4 + e)
    res = s if x >= ZERO4 else e * s
    return res if x == x else x


# ----------------------------------------------------------------------------- float64
L2E8, LN2HI8, LN2LO8 = f8(1.4426950408889634), f8(6.93147180369123816490e-01), \
    f8(1.90821492927058770002e-10)
MAGIC8 = f8(6755399441055744.0)  # 1.5 * 2^52
MAGIC8_BITS = i8(0x4338000000000000)
ONE8, HALF8, TWO8, ZERO8 = f8(1.0), f8(0.5), f8(2.0), f8(0.0)
INF8, NAN8 = f8(np.inf), f8(np.nan)
_F = [1.0]
for _n in range(1, 15):
    _F.append(_F[-1] * _n)
E8 = tuple(f8(1.0 / _F[n]) for n in range(2, 14))


@njit(**_OPTS)
def _reduce8(x):
    kf = (x * L2E8 + MAGIC8) - MAGIC8
    return kf, (x - kf * LN2HI8) - kf * LN2LO8


@njit(**_OPTS)
def _expm1_poly8(r):
    return r + r * r * (E8[0] + r * (E8[1] + r * (E8[2] + r * (E8[3] + r * (E8[4] + r * (
        E8[5] + r * (E8[6] + r * (E8[7] + r * (E8[8] + r * (E8[9] + r * (
            E8[10] + r * E8[11])))))))))))


@njit(**_OPTS)
def _pow2_8(kf):
    k = _bitcast(kf + MAGIC8) - MAGIC8_BITS
    return _bitcast(i8((k + 1023) << 52))


@njit(**_OPTS)
def exp64(x):
    inside = x > f8(-746.0)  # below: 0, without an underflowing product (as exp32)
    xc = x if inside else ZERO8
    xc = xc if xc < f8(710.0) else f8(710.0)
    kf, r = _reduce8(xc)
    p = ONE8 + _expm1_poly8(r)
    h = (kf * HALF8 + MAGIC8) - MAGIC8
    res = (p * _pow2_8(h)) * _pow2_8(kf - h)
    res = res if inside else ZERO8
    return res if x == x else x


@njit(**_OPTS)
def tanh64(x):
    ax = abs(x)
    y = TWO8 * (ax if ax < f8(19.5) else f8(19.5))
    kf, r = _reduce8(y)
    s = _pow2_8(kf)
    e = s * _expm1_poly8(r) + (s - ONE8)
    t = e / (e + TWO8)
    t = t if x >= ZERO8 else -t
    t = x if ax < f8(2.0 ** -27) else t
    return t if x == x else x


L8 = tuple(f8(2.0 / (2 * i + 1)) for i in range(1, 12))
SQRT2_8, MIN8 = f8(1.4142135623730951), f8(2.2250738585072014e-308)


@njit(**_OPTS)
def log64(x):
    tiny = x < MIN8
    xs = x * f8(4503599627370496.0) if tiny else x  # 2^52
    b = _bitcast(xs)
    e = ((b >> 52) & 0x7FF) - (1075 if tiny else 1023)
    m = _bitcast((b & 0xFFFFFFFFFFFFF) | 0x3FF0000000000000)
    big = m > SQRT2_8
    m = m * HALF8 if big else m
    ef = f8(e + 1 if big else e)
    f = m - ONE8
    s = f / (m + ONE8)
    z = s * s
    hf = HALF8 * f * f
    R = z * (L8[0] + z * (L8[1] + z * (L8[2] + z * (L8[3] + z * (L8[4] + z * (L8[5] + z * (
        L8[6] + z * (L8[7] + z * (L8[8] + z * (L8[9] + z * L8[10]))))))))))
    res = ef * LN2HI8 + (f - (hf - (s * (hf + R) + ef * LN2LO8)))
    res = x if (x != x or x == INF8) else res
    res = -INF8 if x == ZERO8 else res
    return NAN8 if x < ZERO8 else res


@njit(**_OPTS)
def sigmoid64(x):
    e = exp64(-abs(x))
    s = ONE8 / (ONE8 + e)
    res = s if x >= ZERO8 else e * s
    return res if x == x else x


# ----------------------------------------------------------------------------- sums
@njit(cache=True, error_model="numpy", nogil=True, fastmath={"reassoc", "contract"})
def fastsum(a, lo, n):
    """sum(a[lo:lo+n]) (n >= 1) in the order LLVM vectorises it (lanes of partial sums
    added at the end), not NumPy's pairwise order: fast math's row sums."""
    s = a[lo]
    for i in range(lo + 1, lo + n):
        s += a[i]
    return s
