"""NumPy kernels for Bessel functions (no SciPy at run time), in float64.

J_n, Y_0, Y_1 for |x| <= 25: Miller's backward recurrence for J_M, ..., J_0 normalised by
J_0 + 2 sum J_2k = 1, with Neumann's series for Y_0 and Y_1 from the same sequence.
Beyond 25: Hankel's asymptotic expansion (its smallest term is about e^(-2x)), with the
phase x - (2v + 1) pi / 4 formed from numpy's exactly reduced cos(x) and sin(x). J_n for
n < x > 25 and Y_n by the forward recurrence (stable in those directions).
I_v (real v) and its scaled form I_v(x) e^(-|x|): the power series of positive terms for
|x| <= max(30, v^2 / 2 + 10), accumulated in scaled form, and the asymptotic expansion
e^x / sqrt(2 pi x) sum (-1)^k a_k(v) / x^k beyond.
"""

import math

import numpy as np

from ._special_kernels import out_dtype
from ._special_math import _EULER, _apply, gammaln

_MILLER_X = 25.0
_HUGE = 1e250


def _prep(*args):
    """float64 broadcast copies of the orders and x, and the dtype of x (an order does not
    promote the result, as in SciPy's float32 loops)."""
    dt = out_dtype(args[-1])
    return np.broadcast_arrays(*[np.asarray(a, dtype=np.float64) for a in args]), dt


def _done(out, dt):
    return out.astype(dt, copy=False)[()]


# ----------------------------------------------------------------------------- J, Y: Miller


def _miller(x, nmax):
    """(J_0 .. J_nmax as a list, and the Neumann sums for Y_0 and Y_1), for 0 < x <= 25."""
    m = 2 * int((max(float(x.max()), nmax) + 30 + 4 * math.sqrt(float(x.max()))) / 2) + 2
    f_next = np.zeros_like(x)          # f_{k+1}
    f = np.full_like(x, 1e-300)        # f_k, k = m
    norm = np.zeros_like(x)            # f_0 + 2 sum f_2k
    s0 = np.zeros_like(x)              # sum_{k>=1} (-1)^k f_2k / k
    s1 = np.zeros_like(x)              # sum_{k>=1} (-1)^k (f_{2k-1} - f_{2k+1}) / k
    keep = [None] * (nmax + 1)
    for k in range(m, -1, -1):
        if k <= nmax:
            keep[k] = f.copy()
        if k % 2 == 0:
            norm = norm + (2.0 if k else 1.0) * f
            if k:
                s0 = s0 + (-1) ** (k // 2) * f / (k // 2)
        else:
            # f_k (k = 2j + 1) enters s1 as f_{2k'-1} (k' = j + 1) and f_{2k'+1} (k' = j)
            j = k // 2
            s1 = s1 + (-1) ** (j + 1) * (1.0 / (j + 1) + (1.0 / j if j else 0.0)) * f
        if k == 0:
            break
        f_new = (2.0 * k / x) * f - f_next
        f_next, f = f, f_new
        big = np.abs(f) > _HUGE
        if big.any():
            scale = np.where(big, 1.0 / _HUGE, 1.0)
            f, f_next, norm, s0, s1 = (v * scale for v in (f, f_next, norm, s0, s1))
            keep = [None if v is None else v * scale for v in keep]
    return [v / norm for v in keep], s0 / norm, s1 / norm


def _y01_small(x):
    js, s0, s1 = _miller(x, 1)
    lg = np.log(0.5 * x) + _EULER
    y0 = (2.0 / math.pi) * (lg * js[0] - 2.0 * s0)
    y1 = (2.0 / math.pi) * (lg * js[1] - js[0] / x + s1)
    return js[0], js[1], y0, y1


# ----------------------------------------------------------------------------- J, Y: Hankel


def _hankel(v, x):
    """(P, Q) of Hankel's expansion for order v (an int) at x > 25."""
    mu = 4.0 * v * v
    p = np.ones_like(x)
    q = np.zeros_like(x)
    term = np.ones_like(x)
    for k in range(1, 200):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        if k % 2:
            q = q + (-1) ** ((k - 1) // 2) * term
        else:
            p = p + (-1) ** (k // 2) * term
        if np.all(np.abs(term) < 1e-17 * np.abs(p)):
            break
    return p, q


def _jy01_large(x):
    amp = np.sqrt(2.0 / (math.pi * x))
    c, s = np.cos(x), np.sin(x)
    r = math.sqrt(0.5)
    cos0, sin0 = r * (c + s), r * (s - c)          # cos, sin of x - pi/4
    cos1, sin1 = r * (s - c), -r * (c + s)         # cos, sin of x - 3 pi/4
    p0, q0 = _hankel(0, x)
    p1, q1 = _hankel(1, x)
    return (amp * (p0 * cos0 - q0 * sin0), amp * (p1 * cos1 - q1 * sin1),
            amp * (p0 * sin0 + q0 * cos0), amp * (p1 * sin1 + q1 * cos1))


def _jy01(x):
    """(J0, J1, Y0, Y1) for x > 0."""
    outs = [np.empty_like(x) for _ in range(4)]
    small = x <= _MILLER_X
    for mask, fun in ((small, _y01_small), (~small, _jy01_large)):
        if mask.any():
            for o, v in zip(outs, fun(x[mask])):
                o[mask] = v
    return outs


def j0(x):
    """The Bessel function of the first kind of order 0."""
    (x,), dt = _prep(x)
    ax = np.abs(x)
    out = np.ones_like(x)
    pos = ax > 0
    _apply(out, pos & np.isfinite(ax), lambda v: _jy01(v)[0], ax)
    out[np.isinf(ax)] = 0.0
    out[np.isnan(x)] = np.nan
    return _done(out, dt)


def j1(x):
    """The Bessel function of the first kind of order 1 (odd)."""
    (x,), dt = _prep(x)
    ax = np.abs(x)
    out = np.zeros_like(x)
    _apply(out, (ax > 0) & np.isfinite(ax), lambda v: _jy01(v)[1], ax)
    out = np.where(x < 0, -out, out)
    out[np.isnan(x)] = np.nan
    return _done(out, dt)


def _y_edges(out, x):
    out[x == 0] = -np.inf
    out[x < 0] = np.nan
    out[x == np.inf] = 0.0
    out[np.isnan(x)] = np.nan
    return out


def y0(x):
    """The Bessel function of the second kind of order 0 (-inf at 0, NaN for x < 0)."""
    (x,), dt = _prep(x)
    out = np.empty_like(x)
    _apply(out, (x > 0) & np.isfinite(x), lambda v: _jy01(v)[2], x)
    return _done(_y_edges(out, x), dt)


def y1(x):
    """The Bessel function of the second kind of order 1 (-inf at 0, NaN for x < 0)."""
    (x,), dt = _prep(x)
    out = np.empty_like(x)
    _apply(out, (x > 0) & np.isfinite(x), lambda v: _jy01(v)[3], x)
    return _done(_y_edges(out, x), dt)


def _check_int(n, fname):
    if np.any(n != np.round(n)):
        raise ValueError(f"fnad.scipy.special.{fname}: the order n must hold integers, got "
                         f"{np.unique(n[n != np.round(n)])[:5].tolist()}; use iv/ive for real "
                         "orders of the modified functions.")
    return n.astype(np.int64)


def _jn_pos(n, x):
    """J_n(x) for integers n >= 0 and finite x > 0 (arrays of one shape)."""
    out = np.empty_like(x)
    nmax = int(n.max()) if n.size else 0
    miller = (x <= _MILLER_X) | (n >= x)
    if miller.any():
        js, _, _ = _miller(x[miller], nmax)
        stack = np.stack(js)
        out[miller] = np.take_along_axis(stack, n[miller][None], axis=0)[0]
    fwd = ~miller
    if fwd.any():
        xs, ns = x[fwd], n[fwd]
        a, b = _jy01_large(xs)[:2]
        res = np.where(ns == 0, a, b)
        for k in range(1, int(ns.max())):
            a, b = b, (2.0 * k / xs) * b - a
            res = np.where(ns == k + 1, b, res)
        out[fwd] = res
    return out


def jn(n, x):
    """J_n(x) for integer n (n and x broadcast); J_-n = (-1)^n J_n."""
    (n, x), dt = _prep(n, x)
    n = _check_int(n, "jn")
    an, ax = np.abs(n), np.abs(x)
    out = np.where(an == 0, 1.0, 0.0)
    ok = (ax > 0) & np.isfinite(ax)
    _apply(out, ok, _jn_pos, an, ax)
    sign = np.where(((n < 0) ^ (x < 0)) & (an % 2 == 1), -1.0, 1.0)
    out = np.asarray(out * sign)
    out[np.isinf(ax)] = 0.0
    out[np.isnan(x)] = np.nan
    return _done(out, dt)


def _yn_pos(n, x):
    _, _, a, b = _jy01(x)
    res = np.where(n == 0, a, b)
    for k in range(1, int(n.max()) if n.size else 0):
        with np.errstate(over="ignore"):
            a, b = b, (2.0 * k / x) * b - a
        res = np.where(n == k + 1, b, res)
    return res


def yn(n, x):
    """Y_n(x) for integer n (n and x broadcast); Y_-n = (-1)^n Y_n."""
    (n, x), dt = _prep(n, x)
    n = _check_int(n, "yn")
    an = np.abs(n)
    out = np.empty_like(x)
    _apply(out, (x > 0) & np.isfinite(x), _yn_pos, an, x)
    out = _y_edges(out, x)
    out = np.where((n < 0) & (an % 2 == 1), -out, out)
    return _done(out, dt)


# ----------------------------------------------------------------------------- I_v


def _ive_series(v, x):
    """I_v(x) e^(-x) for x > 0 by sum (x/2)^(2k+v) / (k! Gamma(k+v+1)), scaled."""
    g = gammaln(v + 1.0)
    sign = np.where((v + 1 <= 0) & (np.floor(v + 1) % 2 == 1), -1.0, 1.0)  # sign of Gamma
    pole = (v + 1 <= 0) & (v == np.round(v))
    with np.errstate(over="ignore", under="ignore"):
        term = np.where(pole, 0.0, sign * np.exp(v * np.log(0.5 * x) - x - g))
    total = term.copy()
    q = 0.25 * x * x
    for k in range(1, 5000):
        denom = k * (k + v)
        # at a pole of 1/Gamma(k + v + 1) the series starts later: restart from that term
        restart = pole & (np.round(k + v) == 0)
        term = np.where(denom == 0, 0.0, term * q / np.where(denom == 0, 1.0, denom))
        if restart.any():
            first = np.exp((2 * k + v) * np.log(0.5 * x) - x - gammaln(k + 1.0)
                           - gammaln(k + v + 1.0))
            term = np.where(restart, first, term)
        total = total + term
        if k > 2 * np.max(x) + 5 and np.all(np.abs(term) <= 1e-17 * np.abs(total)):
            break
    return total


def _ive_asym(v, x):
    mu = 4.0 * v * v
    term = np.ones_like(x)
    total = np.ones_like(x)
    for k in range(1, 400):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        total = total + term
        if np.all(np.abs(term) < 1e-17 * np.abs(total)):
            break
    return total / np.sqrt(2.0 * math.pi * x)


def _ive_pos(v, x):
    out = np.empty_like(x)
    asym = x > np.maximum(30.0, 0.5 * v * v + 10.0)
    _apply(out, asym, _ive_asym, v, x)
    _apply(out, ~asym, _ive_series, v, x)
    return out


def _ive_any(v, x):
    """I_v(x) e^(-|x|) with SciPy's conventions at x <= 0."""
    ax = np.abs(x)
    out = np.full_like(x, np.nan)
    integer = v == np.round(v)
    v_use = np.where(integer, np.abs(v), v)  # I_-n = I_n
    _apply(out, (ax > 0) & np.isfinite(ax) & ((x > 0) | integer), _ive_pos, v_use, ax)
    odd = integer & (np.abs(v) % 2 == 1) & (x < 0)
    out = np.where(odd, -out, out)
    zero = x == 0
    out[zero & (v == 0)] = 1.0
    out[zero & (v_use > 0)] = 0.0
    out[zero & (v_use < 0)] = np.inf
    return out


def ive(v, x):
    """The exponentially scaled modified Bessel function I_v(x) e^(-|x|), real order v."""
    (v, x), dt = _prep(v, x)
    out = _ive_any(v, x)
    out[(np.abs(x) == np.inf) & ~np.isnan(v)] = 0.0
    return _done(out, dt)


def iv(v, x):
    """The modified Bessel function of the first kind I_v(x), real order v."""
    (v, x), dt = _prep(v, x)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.asarray(_ive_any(v, x) * np.exp(np.abs(x)))
    inf = np.abs(x) == np.inf
    out[inf & (x > 0)] = np.inf
    return _done(out, dt)


def i0(x):
    return iv(np.zeros((), np.float32), x)


def i1(x):
    return iv(np.ones((), np.float32), x)


def i0e(x):
    return ive(np.zeros((), np.float32), x)


def i1e(x):
    return ive(np.ones((), np.float32), x)
