"""More NumPy kernels for special functions (no SciPy at run time), in float64.

gamma: exact recurrences onto [1, 2) where lgamma's Taylor series about 2 is used, Stirling
beyond 30 and reflection below 0. erfcx: erfc(x) e^{x^2} by the continued fraction of
`_special_math` without its exponential. erfcinv: Halley steps on erfc from Winitzki's
starting point, formed from y so that the tail y -> 0 keeps its relative accuracy.
gammainc/gammaincc: the power series of P(a, x) for x < a + 1, the continued fraction of
Q(a, x) (modified Lentz) beyond, as in Numerical Recipes; their common prefactor is
exp(a log x - x - lgamma(a)). betainc: the continued fraction of I_x(a, b) (modified Lentz)
on the side x < (a + 1) / (a + b + 2), the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) otherwise.
"""

import math

import numpy as np

from . import _special_math as _m

__all__ = ["gamma", "rgamma", "erfcx", "erfcinv", "gammainc", "gammaincc", "betainc",
           "gammaincinv", "betaincinv"]

_SQRT_PI = math.sqrt(math.pi)
_TINY = 1e-300
_EPS = 2e-16


def _gamma_pos(x):
    """Gamma(x) for 0 < x < 30: Gamma(y) prod(y .. x - 1) with y = x - n in [1, 2), or
    Gamma(y + 1) / y for x < 1."""
    n = np.floor(x) - 1.0
    y = x - n  # in [1, 2) for x >= 1; in (1, 2) too for 0 < x < 1 (n = -1)
    base = np.where(y >= 1.5, np.exp(_m._lgamma_core(y - 2.0)),
                    np.exp(_m._lgamma_core(y - 1.0)) / y)
    prod = np.ones_like(x)
    for i in range(29):
        prod = prod * np.where(i < n, y + i, 1.0)
    return np.where(n < 0, base / x, base * prod)


def _gamma64(x):
    out = np.empty_like(x)
    big = x >= 30
    _m._apply(out, big, lambda v: np.exp(_m._lgamma_pos(v)), x)
    mid = (x > 0) & (x < 30)
    _m._apply(out, mid, _gamma_pos, x)
    neg = x <= 0

    def reflect(v):
        r = v - np.round(v)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            res = math.pi / (np.sin(math.pi * r) * np.where(np.round(v) % 2, -1.0, 1.0)
                             * _gamma64(1.0 - v))
        return np.where(r == 0, np.nan, res)
    _m._apply(out, neg & np.isfinite(x), reflect, x)
    out[x == np.inf] = np.inf
    out[(x == -np.inf) | np.isnan(x)] = np.nan
    out[x == 0] = np.copysign(np.inf, x[x == 0])
    return out


def gamma(x):
    """The gamma function (inf at 0 with 0's sign, NaN at negative integers, as SciPy)."""
    x, dt = _m._prepare(x)
    return _m._finish(_gamma64(x), dt)


def rgamma(x):
    """1 / Gamma(x), 0 at the poles 0, -1, -2, ..."""
    x, dt = _m._prepare(x)
    with np.errstate(divide="ignore"):
        out = np.asarray(1.0 / _gamma64(x))
    out[(x <= 0) & (x == np.round(x))] = 0.0
    out[x == np.inf] = 0.0
    return _m._finish(out, dt)


# ----------------------------------------------------------------------------- erfcx, erfcinv


def _erfcx_cf(x):
    """erfc(x) e^{x^2} for x >= 1 (the continued fraction of _special_math._erfc_cf)."""
    xs = np.minimum(x, 1e7)
    depth = 80 if x.size and x.min() < 2 else 40
    z = 2.0 * xs * xs
    k_frac = z + (1 + 4 * depth)
    for k in range(depth, 0, -1):
        k_frac = z + (1 + 4 * (k - 1)) - ((2 * k - 1) * (2 * k)) / k_frac
    return np.where(x > 1e7, 1.0 / (_SQRT_PI * x), 2.0 * xs / (_SQRT_PI * k_frac))


def _erfcx64(x):
    out = np.empty_like(x)
    _m._apply(out, x >= 1, _erfcx_cf, x)
    low = (x < 1) & (x > -26.7)
    with np.errstate(over="ignore"):
        _m._apply(out, low, lambda v: _m._erfc64(v) / _m._exp_neg_sq(np.abs(v)), x)
    out[x <= -26.7] = np.inf
    out[np.isnan(x)] = np.nan
    return out


def erfcx(x):
    """The scaled complementary error function exp(x^2) erfc(x) (inf below about -26.6)."""
    x, dt = _m._prepare(x)
    return _m._finish(_erfcx64(x), dt)


def _erfcinv_tail(y):
    """erfcinv(y) for 0 < y < 0.5: Winitzki's start with w = log(y (2 - y)), then Halley."""
    w = np.log(y * (2.0 - y))
    c = 2.0 / (math.pi * 0.147) + 0.5 * w
    x = np.sqrt(np.sqrt(c * c - w / 0.147) - c)
    return _m._halley(x, y, lambda x, y: y - _m._erfc64(x), 4)


def erfcinv(y):
    """The inverse of erfc on [0, 2] (+inf at 0, -inf at 2, NaN outside)."""
    y, dt = _m._prepare(y)
    out = np.full_like(y, np.nan)
    _m._apply(out, (y > 0) & (y < 0.5), _erfcinv_tail, y)
    _m._apply(out, (y >= 0.5) & (y <= 1.5), lambda v: _m._erfinv64(1.0 - v), y)
    _m._apply(out, (y > 1.5) & (y < 2), lambda v: -_erfcinv_tail(2.0 - v), y)
    out[y == 0] = np.inf
    out[y == 2] = -np.inf
    return _m._finish(out, dt)


# ----------------------------------------------------------------------------- gammainc


def _log_prefactor(a, x):
    """log(x^a e^{-x} / Gamma(a))."""
    with np.errstate(divide="ignore"):
        return a * np.log(x) - x - _m.gammaln(a)


def _p_series(a, x):
    """P(a, x) by sum x^n / ((a + 1) ... (a + n)), times x^a e^{-x} / Gamma(a + 1)."""
    term = np.ones_like(x)
    total = np.ones_like(x)
    for n in range(1, 5000):
        term = term * x / (a + n)
        total = total + term
        if not np.any(term >= _EPS * total):
            break
    return np.exp(_log_prefactor(a, x)) * total / a


def _q_cf(a, x):
    """Q(a, x) by the continued fraction 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/...)) (Lentz)."""
    b = x + 1.0 - a
    c = np.full_like(x, 1.0 / _TINY)
    d = 1.0 / b
    h = d
    live = np.ones(x.shape, dtype=bool)
    for i in range(1, 5000):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = np.where(np.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        d = 1.0 / d
        delta = d * c
        h = np.where(live, h * delta, h)
        live &= np.abs(delta - 1.0) > _EPS
        if not live.any():
            break
    return np.exp(_log_prefactor(a, x)) * h


def out_dtype(*args):
    """The float dtype of a result, with Python scalars weak (NumPy 2): gammainc(2.0, x32)
    is float32; integers only give float64."""
    dt = np.result_type(*args)
    return dt if dt.kind == "f" else np.dtype(np.float64)


def _gammainc_pair(a, x, upper):
    dt = out_dtype(a, x)
    a, x = np.broadcast_arrays(_m._prepare(a)[0], _m._prepare(x)[0])
    out = np.full(a.shape, np.nan)
    ok = (a > 0) & (x > 0) & np.isfinite(a)
    series = ok & (x < a + 1) & np.isfinite(x)
    cf = ok & ~(x < a + 1) & np.isfinite(x)
    _m._apply(out, series, lambda a, x: _p_series(a, x) if not upper else
              1.0 - _p_series(a, x), a, x)
    _m._apply(out, cf, lambda a, x: _q_cf(a, x) if upper else 1.0 - _q_cf(a, x), a, x)
    out[(a > 0) & (x == 0)] = 1.0 if upper else 0.0
    out[(a > 0) & (x == np.inf)] = 0.0 if upper else 1.0
    return _m._finish(out, dt)


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x) (a > 0, x >= 0)."""
    return _gammainc_pair(a, x, False)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _gammainc_pair(a, x, True)


# ----------------------------------------------------------------------------- betainc


def _beta_cf(a, b, x):
    """I_x(a, b) for x < (a + 1) / (a + b + 2) by the continued fraction (Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)
    h = d
    live = np.ones(x.shape, dtype=bool)
    for m in range(1, 5000):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)
            c = 1.0 + aa / c
            c = np.where(np.abs(c) < _TINY, _TINY, c)
            delta = d * c
            h = np.where(live, h * delta, h)
        live &= np.abs(delta - 1.0) > _EPS
        if not live.any():
            break
    with np.errstate(divide="ignore"):
        log_front = (a * np.log(x) + b * np.log1p(-x) - _m.gammaln(a) - _m.gammaln(b)
                     + _m.gammaln(a + b))
    return np.exp(log_front) * h / a


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b) (a, b > 0, 0 <= x <= 1)."""
    dt = out_dtype(a, b, x)
    a, b, x = np.broadcast_arrays(*(_m._prepare(v)[0] for v in (a, b, x)))
    out = np.full(x.shape, np.nan)
    ok = (a > 0) & (b > 0) & (x > 0) & (x < 1)
    direct = ok & (x < (a + 1.0) / (a + b + 2.0))
    _m._apply(out, direct, _beta_cf, a, b, x)
    _m._apply(out, ok & ~direct, lambda a, b, x: 1.0 - _beta_cf(b, a, 1.0 - x), a, b, x)
    out[(a > 0) & (b > 0) & (x == 0)] = 0.0
    out[(a > 0) & (b > 0) & (x == 1)] = 1.0
    return _m._finish(out, dt)


# ----------------------------------------------------------------------------- inverses


def _solve_log(logf, dlogf, logp, lo, hi, x):
    """Solve logf(x) = logp (logf increasing) inside [lo, hi]: Newton steps on the log
    (good far in the tails), bisection (geometric once lo > 0) when a step leaves the
    bracket. Only the entries not yet converged are evaluated."""
    x, lo, hi = x.copy(), lo.copy(), hi.copy()
    live = np.arange(x.size)
    for _ in range(200):
        xl, lol, hil, lp = x[live], lo[live], hi[live], logp[live]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            r = logf(xl, live) - lp
            lol = np.where(r < 0, xl, lol)
            hil = np.where(r > 0, xl, hil)
            new = xl - r / dlogf(xl, live)
        mid = np.where(lol > 0, np.sqrt(lol * hil), 0.5 * (lol + hil))
        bad = ~((new > lol) & (new < hil))
        new = np.where(bad, mid, new)
        # converged: log f(x) = log p to rounding (keep x: a rounded-away Newton step would
        # fall back to bisection), or a step within rounding
        at_root = np.abs(r) <= 2e-16
        new = np.where(at_root, xl, new)
        x[live], lo[live], hi[live] = new, lol, hil
        done = at_root | (np.abs(new - xl) <= 2e-16 * np.abs(new)) | (hil - lol <= 0)
        live = live[~done]
        if not live.size:
            break
    return x


def _gammaincinv_core(a, p, upper):
    """x with P(a, x) = p (upper=False) or Q(a, x) = p (upper=True), 0 < p <= 0.5."""
    def logf(x, i):
        return np.log(gammaincc(a[i], x) if upper else gammainc(a[i], x))

    def dlogf(x, i):
        lpdf = (a[i] - 1.0) * np.log(x) - x - _m.gammaln(a[i])
        return (-1.0 if upper else 1.0) * np.exp(lpdf - logf(x, i))

    hi = np.maximum(2.0 * a, 1.0)
    for _ in range(200):  # grow the bracket until it holds the root
        short = (gammaincc(a, hi) > p) if upper else (gammainc(a, hi) < p)
        if not short.any():
            break
        hi = np.where(short, 2.0 * hi, hi)
    # lower tail: P ~ x^a / Gamma(a + 1) as x -> 0
    x0 = np.exp((np.log(p) + _m.gammaln(a + 1.0)) / a) if not upper else 0.5 * hi
    x0 = np.where((x0 > 0) & (x0 < hi), x0, 0.5 * hi)
    lo = np.zeros_like(p)
    if upper:  # Q decreases: solve -log Q increasing in x
        return _solve_log(lambda x, i: -logf(x, i), lambda x, i: -dlogf(x, i), -np.log(p),
                          lo, hi, x0)
    return _solve_log(logf, dlogf, np.log(p), lo, hi, x0)


def gammaincinv(a, p):
    """The inverse of gammainc in x: P(a, gammaincinv(a, p)) = p (a > 0, 0 <= p <= 1)."""
    (a, p), dt = _bcast_f64(a, p)
    out = np.full(p.shape, np.nan)
    ok = (a > 0) & (p > 0) & (p < 1)
    low = ok & (p <= 0.5)
    _m._apply(out, low, lambda a, p: _gammaincinv_core(a, p, False), a, p)
    _m._apply(out, ok & ~low, lambda a, p: _gammaincinv_core(a, 1.0 - p, True), a, p)
    out[(a > 0) & (p == 0)] = 0.0
    out[(a > 0) & (p == 1)] = np.inf
    return _m._finish(out, dt)


def _betaincinv_core(a, b, p):
    """x in (0, 1) with I_x(a, b) = p, 0 < p <= 0.5."""
    def logf(x, i):
        return np.log(betainc(a[i], b[i], x))

    def dlogf(x, i):
        lpdf = ((a[i] - 1.0) * np.log(x) + (b[i] - 1.0) * np.log1p(-x) - _m.gammaln(a[i])
                - _m.gammaln(b[i]) + _m.gammaln(a[i] + b[i]))
        return np.exp(lpdf - logf(x, i))

    # lower tail: I_x ~ x^a / (a B(a, b)) as x -> 0
    log_b = _m.gammaln(a) + _m.gammaln(b) - _m.gammaln(a + b)
    x0 = np.exp((np.log(p) + np.log(a) + log_b) / a)
    x0 = np.where((x0 > 0) & (x0 < 1), x0, 0.5)
    return _solve_log(logf, dlogf, np.log(p), np.zeros_like(p), np.ones_like(p), x0)


def betaincinv(a, b, p):
    """The inverse of betainc in x: I_x(a, b) = p (a, b > 0, 0 <= p <= 1)."""
    (a, b, p), dt = _bcast_f64(a, b, p)
    out = np.full(p.shape, np.nan)
    ok = (a > 0) & (b > 0) & (p > 0) & (p < 1)
    low = ok & (p <= 0.5)
    _m._apply(out, low, _betaincinv_core, a, b, p)
    _m._apply(out, ok & ~low, lambda a, b, p: 1.0 - _betaincinv_core(b, a, 1.0 - p), a, b, p)
    out[(a > 0) & (b > 0) & (p == 0)] = 0.0
    out[(a > 0) & (b > 0) & (p == 1)] = 1.0
    return _m._finish(out, dt)


def _bcast_f64(*args):
    return np.broadcast_arrays(*(_m._prepare(a)[0] for a in args)), out_dtype(*args)


# ----------------------------------------------------------------------------- d/da gammainc


def _dp_da_series(a, x):
    """dP/da for x < a + 1, from P = e^(a log x - x) / Gamma(a + 1) sum_n t_n,
    t_n = x^n / ((a + 1) ... (a + n)): dt_n/da = -t_n sum_{j<=n} 1 / (a + j)."""
    term = np.ones_like(x)
    total = np.ones_like(x)
    dterm_sum = np.zeros_like(x)
    harmonic = np.zeros_like(x)
    for n in range(1, 5000):
        term = term * x / (a + n)
        harmonic = harmonic + 1.0 / (a + n)
        total = total + term
        dterm_sum = dterm_sum - term * harmonic
        if not np.any(term * np.maximum(harmonic, 1.0) >= _EPS * total):
            break
    with np.errstate(divide="ignore"):
        lp = a * np.log(x) - x - _m.gammaln(a + 1.0)
        dlp = np.log(x) - _m.digamma(a + 1.0)
    return np.exp(lp) * (dlp * total + dterm_sum)


def _dq_da_cf(a, x):
    """dQ/da for x >= a + 1: the Lentz recurrence of _q_cf carried with its a-derivatives."""
    b, db = x + 1.0 - a, -1.0
    c, dc = np.full_like(x, 1.0 / _TINY), np.zeros_like(x)
    d, dd = 1.0 / b, 1.0 / (b * b)
    h, dh = d, dd
    live = np.ones(x.shape, dtype=bool)
    for i in range(1, 5000):
        an, dan = -i * (i - a), float(i)
        b = b + 2.0
        d_raw = an * d + b
        dd_raw = dan * d + an * dd + db
        c_new = b + an / c
        dc = db + dan / c - (an / c) * (dc / c)
        c = c_new
        d, dd = 1.0 / d_raw, -dd_raw / (d_raw * d_raw)
        delta, ddelta = d * c, dd * c + d * dc
        h, dh = np.where(live, h * delta, h), np.where(live, dh * delta + h * ddelta, dh)
        live &= (np.abs(delta - 1.0) > _EPS) | (np.abs(h * ddelta) > _EPS * np.abs(dh))
        if not live.any():
            break
    lp = _log_prefactor(a, x)
    dlp = np.log(x) - _m.digamma(a)
    return np.exp(lp) * (dlp * h + dh)


def gammainc_da(a, x):
    """dP(a, x)/da (a > 0, x > 0; 0 at x = 0 and x = inf)."""
    dt = out_dtype(a, x)
    a, x = np.broadcast_arrays(_m._prepare(a)[0], _m._prepare(x)[0])
    out = np.full(a.shape, np.nan)
    ok = (a > 0) & (x > 0) & np.isfinite(x)
    series = ok & (x < a + 1)
    _m._apply(out, series, _dp_da_series, a, x)
    _m._apply(out, ok & ~series, lambda a, x: -_dq_da_cf(a, x), a, x)
    out[(a > 0) & ((x == 0) | (x == np.inf))] = 0.0
    return _m._finish(out, dt)
