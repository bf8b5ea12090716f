"""Discrete families of fnad.scipy.stats: poisson, bernoulli, binom.

pmf/logpmf/cdf/sf are written with fnad.numpy and fnad.scipy.special, so they are
differentiable in the (continuous) parameters mu and p; k is an integer (piecewise constant,
no derivative). cdf/sf go through the incomplete gamma and beta functions with constant
shape arguments. ppf searches the integers by bisection on the values (it is piecewise
constant) and rvs is ppf of uniform draws from a fnad.random key.
"""

import numpy as np

from .. import numpy as fnp
from .._core.tracer import Tracer
from . import _special_kernels as _k
from . import special as sp
from ._stats_util import NEG_INF, Family, arr, safe, sample_shape, uniform01, val, where


def _log(x):
    pos = val(x) > 0
    return where(pos, fnp.log(safe(x, pos, 1.0)), NEG_INF)


def _integer_support(k, hi=None):
    kv = val(k)
    ok = (kv >= 0) & (kv == np.floor(kv))
    return ok if hi is None else ok & (kv <= val(hi))


def _ppf_search(q, cdf_at, hi, top=np.inf):
    """The smallest integer k >= 0 with cdf_at(k) >= q (bisection between -1 and hi, where
    cdf_at(hi) >= q); -1 at q = 0, the support's end `top` at q = 1, NaN outside [0, 1]."""
    q = np.asarray(val(q), np.float64)
    hi = np.broadcast_to(np.asarray(hi, np.float64), q.shape).copy()
    lo = np.full(q.shape, -1.0)
    for _ in range(2000):
        mid = np.floor(0.5 * (lo + hi))
        go = hi - lo > 1
        if not go.any():
            break
        below = cdf_at(mid) < q
        lo = np.where(go & below, mid, lo)
        hi = np.where(go & ~below, mid, hi)
    out = np.where(q == 0, -1.0, hi)
    out = np.where(q == 1, top, out)
    return np.where((q >= 0) & (q <= 1), out, np.nan)


def _family(name, doc, shapes, funcs):
    """Add pmf, logcdf, logsf, rvs and loc handling (x - loc) to the standard functions."""
    def shift(method):
        def f(k, *params, loc=0):
            params = [arr(p) for p in params]
            if len(params) != len(shapes):
                raise TypeError(f"fnad.scipy.stats.{name}.{method}: expected the parameters "
                                f"({', '.join(shapes)}), got {len(params)} values.")
            if method == "ppf":
                return funcs["ppf"](k, *params) + val(loc)
            return funcs[method](arr(k) - val(loc), *params)
        return f

    out = {m: shift(m) for m in funcs}
    out["pmf"] = lambda k, *p, loc=0: fnp.exp(out["logpmf"](k, *p, loc=loc))
    out["logcdf"] = lambda k, *p, loc=0: _log(out["cdf"](k, *p, loc=loc))
    out["logsf"] = lambda k, *p, loc=0: _log(out["sf"](k, *p, loc=loc))

    def rvs(key, *params, loc=0, size=None):
        s = sample_shape(size, *params, arr(loc))
        return out["ppf"](uniform01(key, s), *params, loc=loc)
    out["rvs"] = rvs
    return Family(name, doc, **out)


# ----------------------------------------------------------------------------- poisson


def _poisson_logpmf(k, mu):
    ok = _integer_support(k)
    ks = safe(k, ok, 0.0)
    return where(ok, sp.xlogy(ks, mu) - mu - sp.gammaln(ks + 1), NEG_INF)


def _poisson_cdf(k, mu):
    fk = np.floor(val(k))
    ok = fk >= 0
    return where(ok, sp.gammaincc(np.where(ok, fk, 0.0) + 1, mu), 0.0)


def _poisson_sf(k, mu):
    fk = np.floor(val(k))
    ok = fk >= 0
    return where(ok, sp.gammainc(np.where(ok, fk, 0.0) + 1, mu), 1.0)


def _poisson_ppf(q, mu):
    m = val(mu)
    return _ppf_search(q, lambda k: _k.gammaincc(np.maximum(k, 0) + 1, m) * (k >= 0),
                       m + 40 * np.sqrt(m) + 50)


poisson = _family("poisson", (
    "The Poisson distribution, as `scipy.stats.poisson`: logpmf, pmf, cdf, logcdf, sf, logsf, "
    "ppf (k, mu, loc=0) and rvs(key, mu, loc=0, size=None). Differentiable in mu.\n\n"
    "Example:\n  fnad.scipy.stats.poisson.logpmf(k, mu)\n"), ("mu",),
    {"logpmf": _poisson_logpmf, "cdf": _poisson_cdf, "sf": _poisson_sf, "ppf": _poisson_ppf})

# ----------------------------------------------------------------------------- bernoulli


def _bernoulli_logpmf(k, p):
    kv = val(k)
    ok = (kv == 0) | (kv == 1)
    ks = safe(k, ok, 0.0)
    return where(ok, sp.xlogy(ks, p) + sp.xlog1py(1 - ks, -p), NEG_INF)


def _bernoulli_cdf(k, p):
    kv = val(k)
    mid = where((kv >= 0) & (kv < 1), 1 - p, 0.0)
    return fnp.where(kv >= 1, 1.0, mid)


def _bernoulli_sf(k, p):
    kv = val(k)
    mid = where((kv >= 0) & (kv < 1), p + 0.0, 0.0)
    return fnp.where(kv < 0, 1.0, mid)


def _bernoulli_ppf(q, p):
    qv, pv = np.asarray(val(q), np.float64), val(p)
    out = np.where(qv > 1 - pv, 1.0, 0.0)
    out = np.where(qv == 0, -1.0, out)
    return np.where((qv >= 0) & (qv <= 1), out, np.nan)


bernoulli = _family("bernoulli", (
    "The Bernoulli distribution, as `scipy.stats.bernoulli`: logpmf, pmf, cdf, logcdf, sf, "
    "logsf, ppf (k, p, loc=0) and rvs(key, p, loc=0, size=None). Differentiable in p.\n\n"
    "Example:\n  fnad.scipy.stats.bernoulli.logpmf(k, p)\n"), ("p",),
    {"logpmf": _bernoulli_logpmf, "cdf": _bernoulli_cdf, "sf": _bernoulli_sf,
     "ppf": _bernoulli_ppf})

# ----------------------------------------------------------------------------- binom


def _binom_logpmf(k, n, p):
    ok = _integer_support(k, n)
    ks = safe(k, ok, 0.0)
    return where(ok, sp.gammaln(n + 1) - sp.gammaln(ks + 1) - sp.gammaln(n - ks + 1)
                 + sp.xlogy(ks, p) + sp.xlog1py(n - ks, -p), NEG_INF)


def _constant_n(n, fname):
    if isinstance(n, Tracer):
        raise NotImplementedError(
            f"fnad.scipy.stats.binom.{fname}: the derivative in n is not implemented (the "
            "incomplete beta function has no closed-form shape derivative); pass n as a "
            "constant. p remains differentiable.")


def _binom_cdf(k, n, p):
    """I_{1-p}(n - k, k + 1) for 0 <= k < n (k floored)."""
    _constant_n(n, "cdf")
    fk, nv = np.floor(val(k)), val(n)
    mid = (fk >= 0) & (fk < nv)
    fk_s = np.where(mid, fk, 0.0)
    out = where(mid, sp.betainc(np.where(mid, nv - fk_s, 1.0), fk_s + 1, 1 - p), 0.0)
    return fnp.where(fk >= nv, 1.0, out)


def _binom_sf(k, n, p):
    _constant_n(n, "sf")
    fk, nv = np.floor(val(k)), val(n)
    mid = (fk >= 0) & (fk < nv)
    fk_s = np.where(mid, fk, 0.0)
    out = where(mid, sp.betainc(fk_s + 1, np.where(mid, nv - fk_s, 1.0), p), 0.0)
    return fnp.where(fk < 0, 1.0, out)


def _binom_ppf(q, n, p):
    nv, pv = val(n), val(p)

    def cdf_at(k):
        mid = (k >= 0) & (k < nv)
        c = _k.betainc(np.where(mid, nv - k, 1.0), np.where(mid, k, 0.0) + 1, 1 - pv)
        return np.where(k >= nv, 1.0, np.where(mid, c, 0.0))
    return _ppf_search(q, cdf_at, nv, nv)


binom = _family("binom", (
    "The binomial distribution, as `scipy.stats.binom`: logpmf, pmf, cdf, logcdf, sf, logsf, "
    "ppf (k, n, p, loc=0) and rvs(key, n, p, loc=0, size=None). Differentiable in p (and in "
    "n for logpmf).\n\nExample:\n  fnad.scipy.stats.binom.logpmf(k, n, p)\n"), ("n", "p"),
    {"logpmf": _binom_logpmf, "cdf": _binom_cdf, "sf": _binom_sf, "ppf": _binom_ppf})

__all__ = ["poisson", "bernoulli", "binom"]
