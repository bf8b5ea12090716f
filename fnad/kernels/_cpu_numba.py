"""The numba loops behind fnad.kernels.cpu (imported only when numba is; see _cpu.py).

Every loop is compiled for float32 and works on a range of rows `[lo, hi)` (or of elements,
for the elementwise ones) with the GIL released, so that fnad/kernels/_threads.py can run
the ranges of one call on several cores. They use no libm call: numba's pip build has no
vector math library, and a scalar `expf`/`erff` per element costs more than the rest of a
kernel, so `_exp` is written out (Cephes' range reduction and polynomial, 2^k assembled in
the exponent bits) and LLVM vectorizes it with the loop. Its relative error is below 2e-7
on [-87.3, 88]; below -87.3 it returns 0 (NumPy gives denormals there), above 88 inf (the
kernels only take the exponential of numbers <= 0), and it keeps NaN.
"""

import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["gelu_range", "gelu_grad_mul_range", "softmax_rows", "softmax_vjp_rows",
           "normalize_rows", "normalize_vjp_rows"]

_F = np.float32
_LOG2E, _LN2_HI, _LN2_LO = _F(1.44269504088896341), _F(0.693359375), _F(-2.12194440e-4)
_EXP_LO, _EXP_HI = _F(-87.33654), _F(88.0)  # 2^k stays a normal number between them
_P0, _P1, _P2 = _F(1.9875691500e-4), _F(1.3981999507e-3), _F(8.3334519073e-3)
_P3, _P4, _P5 = _F(4.1665795894e-2), _F(1.6666665459e-1), _F(5.0000001201e-1)
_ROUND = _F(1.5 * 2 ** 23)  # adding it rounds a float32 below 2^22 to an integer
_ZERO, _ONE, _HALF, _INF = _F(0), _F(1), _F(0.5), _F(np.inf)
_INV_SQRT2, _INV_SQRT_2PI = _F(1 / math.sqrt(2)), _F(1 / math.sqrt(2 * math.pi))
# erfc(z) ~ t exp(-z^2 + P(t)), t = 1 / (1 + z / 2), z >= 0 (Numerical Recipes' erfcc,
# relative error below 1.2e-7), the coefficients of P from the lowest degree
_E0, _E1, _E2, _E3, _E4 = (_F(-1.26551223), _F(1.00002368), _F(0.37409196), _F(0.09678418),
                           _F(-0.18628806))
_E5, _E6, _E7, _E8, _E9 = (_F(0.27886807), _F(-1.13520398), _F(1.48851587), _F(-0.82215223),
                           _F(0.17087277))

_JIT = dict(nogil=True, cache=True, fastmath={"contract"}, error_model="numpy")
# row reductions may reassociate, so that their sums vectorize too
_JIT_SUM = dict(_JIT, fastmath={"contract", "reassoc"})


@intrinsic
def _float32_from_bits(typingctx, bits):
    """The float32 whose bit pattern is the low 32 bits of the integer `bits`."""
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        v = args[0]
        if bits.bitwidth > 32:
            v = builder.trunc(v, ir.IntType(32))
        elif bits.bitwidth < 32:
            v = builder.sext(v, ir.IntType(32))
        return builder.bitcast(v, ir.FloatType())

    return types.float32(bits), codegen


@numba.njit(inline="always", **_JIT)
def _exp(x):
    c = _EXP_LO if x < _EXP_LO else x  # comparisons that keep a NaN
    c = _EXP_HI if c > _EXP_HI else c
    k = (c * _LOG2E + _ROUND) - _ROUND  # round to nearest without a libm call (floorf)
    r = c - k * _LN2_HI - k * _LN2_LO
    p = ((((_P0 * r + _P1) * r + _P2) * r + _P3) * r + _P4) * r + _P5
    p = p * r * r + r + _ONE
    y = p * _float32_from_bits((np.int32(k) + 127) << 23)
    y = _ZERO if x < _EXP_LO else y
    return _INF if x > _EXP_HI else y


@numba.njit(inline="always", **_JIT)
def _normal_cdf(v):
    """Phi(v): Phi(-|v|) from the erfc fit (accurate relative to itself in the lower tail),
    then 1 - that for v >= 0."""
    z = abs(v) * _INV_SQRT2
    t = _ONE / (_ONE + _HALF * z)
    q = (((((((((_E9 * t + _E8) * t + _E7) * t + _E6) * t + _E5) * t + _E4) * t + _E3) * t
           + _E2) * t + _E1) * t + _E0)
    a = _HALF * t * _exp(q - z * z)
    return a if v < _ZERO else _ONE - a


@numba.njit(**_JIT)
def gelu_range(lo, hi, x, out):
    """out[i] = x[i] Phi(x[i]) for i in [lo, hi) (flat float32 arrays)."""
    x, out = x[lo:hi], out[lo:hi]  # indices from 0 vectorize (a signed i may wrap around)
    for i in range(x.size):
        v = x[i]
        out[i] = v * _normal_cdf(v)


@numba.njit(**_JIT)
def gelu_grad_mul_range(lo, hi, g, x, out):
    """out[i] = g[i] (Phi(x[i]) + x[i] phi(x[i])): the cotangent of exact GELU."""
    g, x, out = g[lo:hi], x[lo:hi], out[lo:hi]
    for i in range(x.size):
        v = x[i]
        out[i] = g[i] * (_normal_cdf(v) + v * _INV_SQRT_2PI * _exp(-_HALF * v * v))


@numba.njit(**_JIT_SUM)
def softmax_rows(lo, hi, s, drop, scale, out):
    """Rows [lo, hi) of softmax(s * scale) over the last axis of 2-d `s`, with the positions
    where `drop[r % len(drop)]` is True removed (probability 0; a row with every position
    removed gives zeros). `drop` with no rows removes nothing."""
    n, m_rows = s.shape[1], drop.shape[0]
    for r in range(lo, hi):
        row, o = s[r], out[r]  # rows indexed from 0 vectorize
        top = -_INF
        if m_rows:
            d = drop[r % m_rows]
            for j in range(n):
                v = -_INF if d[j] else row[j] * scale
                o[j] = v
                top = max(top, v)
        else:
            for j in range(n):
                v = row[j] * scale
                o[j] = v
                top = max(top, v)
        if top == -_INF:
            top = _ZERO
        total = _ZERO
        for j in range(n):
            e = _exp(o[j] - top)
            o[j] = e
            total += e
        if total == _ZERO:
            total = _ONE
        for j in range(n):
            o[j] = o[j] / total


@numba.njit(**_JIT_SUM)
def softmax_vjp_rows(lo, hi, g, p, scale, out):
    """Rows [lo, hi) of scale * p * (g - sum(g * p)) over the last axis."""
    n = g.shape[1]
    for r in range(lo, hi):
        gr, pr, o = g[r], p[r], out[r]
        dot = _ZERO
        for j in range(n):
            dot += gr[j] * pr[j]
        for j in range(n):
            o[j] = (gr[j] - dot) * pr[j] * scale


@numba.njit(**_JIT_SUM)
def normalize_rows(lo, hi, x, eps, out, rstd):
    """Rows [lo, hi) of (x - mean) / sqrt(var + eps) over the last axis; rstd[r] gets
    1 / sqrt(var + eps)."""
    n = x.shape[1]
    inv_n = _ONE / _F(n)
    for r in range(lo, hi):
        xr, o = x[r], out[r]
        total = _ZERO
        for j in range(n):
            total += xr[j]
        mean = total * inv_n
        sq = _ZERO
        for j in range(n):
            c = xr[j] - mean
            o[j] = c
            sq += c * c
        k = _ONE / math.sqrt(sq * inv_n + eps)
        rstd[r] = k
        for j in range(n):
            o[j] = o[j] * k


@numba.njit(**_JIT_SUM)
def normalize_vjp_rows(lo, hi, g, xhat, x, eps, out):
    """Rows [lo, hi) of rstd * (g - mean(g) - xhat * mean(g * xhat)) over the last axis,
    with rstd = 1 / sqrt(var(x) + eps) computed again from x (its row is in cache)."""
    n = g.shape[1]
    inv_n = _ONE / _F(n)
    for r in range(lo, hi):
        gr, hr, xr, o = g[r], xhat[r], x[r], out[r]
        total = _ZERO
        for j in range(n):
            total += xr[j]
        mean = total * inv_n
        sq = _ZERO
        m1 = _ZERO
        m2 = _ZERO
        for j in range(n):
            c = xr[j] - mean
            sq += c * c
            m1 += gr[j]
            m2 += gr[j] * hr[j]
        k = _ONE / math.sqrt(sq * inv_n + eps)
        m1 *= inv_n
        m2 *= inv_n
        for j in range(n):
            o[j] = (gr[j] - m1 - hr[j] * m2) * k
