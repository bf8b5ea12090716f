"""Continuous families of fnad.scipy.stats as location-scale families of a standard form,
written with fnad.numpy and fnad.scipy.special (so every derivative comes from their rules).

Each family is given by functions of the standardised z = (x - loc) / scale and its shape
parameters; `_family` adds loc and scale (logpdf - log(scale), loc + scale ppf(q), ...).
Outside the support logpdf is -inf with a zero gradient: masked-out branches get safe inputs,
so no NaN leaks into gradients.
"""

import math


from .. import numpy as fnp
from .. import random as frandom
from .._core.tracer import Tracer
from . import special as sp
from ._stats_util import (NEG_INF, Family, arr, bad_scale, nan_where, safe, sample_shape,
                          std_gamma, std_normal, uniform01, val, where)

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_LOG2 = math.log(2.0)


def _log(x):
    """log(x), -inf (zero gradient) where x == 0."""
    x = arr(x)
    pos = val(x) > 0
    return where(pos, fnp.log(safe(x, pos, 1.0)), NEG_INF)


def _split(args, kwargs, shapes, fname):
    """(shape params, loc, scale) from scipy-style positional and keyword arguments."""
    names = list(shapes) + ["loc", "scale"]
    if len(args) > len(names):
        raise TypeError(f"fnad.scipy.stats.{fname}: got {len(args)} positional parameters, "
                        f"expected at most {len(names)} ({', '.join(names)}).")
    vals = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names or k in vals:
            raise TypeError(f"fnad.scipy.stats.{fname}: unexpected or repeated parameter "
                            f"{k!r}; the parameters are ({', '.join(names)}).")
        vals[k] = v
    missing = [n for n in shapes if n not in vals]
    if missing:
        raise TypeError(f"fnad.scipy.stats.{fname}: missing shape parameter(s) {missing}.")
    return ([arr(vals[n]) for n in shapes], arr(vals.get("loc", 0.0)),
            arr(vals.get("scale", 1.0)))


def _family(name, doc, shapes, std, rvs_std):
    """A Family from standard-form functions std[method](z or q, *shape_params)."""
    funcs = {}

    def make(method):
        def f(x, *args, **kwargs):
            sh, loc, scale = _split(args, kwargs, shapes, f"{name}.{method}")
            x = arr(x)
            if method in ("ppf", "isf"):
                out = loc + scale * std[method](x, *sh)
            else:
                out = std[method]((x - loc) / scale, *sh)
                if method == "logpdf":
                    out = out - fnp.log(safe(scale, ~bad_scale(scale), 1.0))
            return nan_where(bad_scale(scale), out)
        return f

    for method in std:
        funcs[method] = make(method)
    if "logpdf" in std:
        funcs["pdf"] = lambda x, *a, _lp=funcs["logpdf"], **k: fnp.exp(_lp(x, *a, **k))

    def rvs(key, *args, size=None, **kwargs):
        sh, loc, scale = _split(args, kwargs, shapes, f"{name}.rvs")
        s = sample_shape(size, *sh, loc, scale)
        return loc + scale * rvs_std(key, s, *sh)

    funcs["rvs"] = rvs
    return Family(name, doc, **funcs)


def _by_inverse(ppf):
    return lambda key, size, *sh: ppf(uniform01(key, size), *sh)


# ----------------------------------------------------------------------------- norm

_norm_std = {
    "logpdf": lambda z: -0.5 * z * z - _HALF_LOG_2PI,
    "cdf": lambda z: sp.ndtr(z),
    "logcdf": lambda z: sp.log_ndtr(z),
    "sf": lambda z: sp.ndtr(-z),
    "logsf": lambda z: sp.log_ndtr(-z),
    "ppf": lambda q: sp.ndtri(q),
    "isf": lambda q: -sp.ndtri(q),
}

# ----------------------------------------------------------------------------- expon


def _expon_cdf(z):
    pos = val(z) > 0
    return where(pos, -fnp.expm1(-safe(z, pos, 1.0)), 0.0)


def _expon_sf(z):
    pos = val(z) > 0
    return where(pos, fnp.exp(-safe(z, pos, 1.0)), 1.0)


_expon_std = {
    "logpdf": lambda z: where(val(z) >= 0, -z, NEG_INF),
    "cdf": _expon_cdf,
    "logcdf": lambda z: _log(_expon_cdf(z)),
    "sf": _expon_sf,
    "logsf": lambda z: where(val(z) > 0, -z, 0.0),
    "ppf": lambda q: -fnp.log1p(-q),
    "isf": lambda q: -fnp.log(q),
}

# ----------------------------------------------------------------------------- laplace


def _laplace_cdf(z):
    h = 0.5 * fnp.exp(-fnp.abs(z))
    return fnp.where(val(z) < 0, h, 1 - h)


def _laplace_logcdf(z):
    neg = val(z) < 0
    return fnp.where(neg, z - _LOG2, fnp.log1p(-0.5 * fnp.exp(-fnp.abs(z))))


def _laplace_ppf(q):
    upper = val(q) > 0.5
    return fnp.where(upper, -fnp.log(2 - 2 * safe(q, upper, 0.75)),
                     fnp.log(2 * safe(q, ~upper, 0.25)))


_laplace_std = {
    "logpdf": lambda z: -fnp.abs(z) - _LOG2,
    "cdf": _laplace_cdf,
    "logcdf": _laplace_logcdf,
    "sf": lambda z: _laplace_cdf(-z),
    "logsf": lambda z: _laplace_logcdf(-z),
    "ppf": _laplace_ppf,
    "isf": lambda q: -_laplace_ppf(q),
}

# ----------------------------------------------------------------------------- logistic

_logistic_std = {
    "logpdf": lambda z: -fnp.abs(z) - 2 * fnp.log1p(fnp.exp(-fnp.abs(z))),
    "cdf": lambda z: sp.expit(z),
    "logcdf": lambda z: -fnp.logaddexp(0.0, -z),
    "sf": lambda z: sp.expit(-z),
    "logsf": lambda z: -fnp.logaddexp(0.0, z),
    "ppf": lambda q: sp.logit(q),
    "isf": lambda q: -sp.logit(q),
}

# ----------------------------------------------------------------------------- uniform


def _unif_cdf(z):
    return fnp.clip(z, 0.0, 1.0)


_uniform_std = {
    "logpdf": lambda z: where((val(z) >= 0) & (val(z) <= 1), 0 * z, NEG_INF),
    "cdf": _unif_cdf,
    "logcdf": lambda z: _log(_unif_cdf(z)),
    "sf": lambda z: 1 - _unif_cdf(z),
    "logsf": lambda z: _log(1 - _unif_cdf(z)),
    "ppf": lambda q: q + 0.0,
    "isf": lambda q: 1 - q,
}

# ----------------------------------------------------------------------------- cauchy

def _cauchy_ppf(q):
    """-cot(pi q), with the argument reduced to the nearer end so both tails keep their digits."""
    low = val(q) < 0.5
    out = fnp.where(low, -1 / fnp.tan(math.pi * safe(q, low, 0.25)),
                    1 / fnp.tan(math.pi * (1 - safe(q, ~low, 0.75))))
    return fnp.where(val(q) == 0.5, 0 * q, out)


_cauchy_std = {
    "logpdf": lambda z: -math.log(math.pi) - fnp.log1p(z * z),
    "cdf": lambda z: 0.5 + fnp.arctan(z) / math.pi,
    "logcdf": lambda z: fnp.log(0.5 + fnp.arctan(z) / math.pi),
    "sf": lambda z: 0.5 - fnp.arctan(z) / math.pi,
    "logsf": lambda z: fnp.log(0.5 - fnp.arctan(z) / math.pi),
    "ppf": _cauchy_ppf,
    "isf": lambda q: -_cauchy_ppf(q),
}

# ----------------------------------------------------------------------------- t


def _t_logpdf(z, df):
    return (sp.gammaln(0.5 * (df + 1)) - sp.gammaln(0.5 * df) - 0.5 * fnp.log(df * math.pi)
            - 0.5 * (df + 1) * fnp.log1p(z * z / df))


def _t_cdf(z, df):
    """1 - I_x(df/2, 1/2) / 2 for z > 0 with x = df / (df + z^2), its mirror below 0."""
    h = 0.5 * sp.betainc(0.5 * df, 0.5, df / (df + z * z))
    return fnp.where(val(z) < 0, h, 1 - h)


def _t_rvs(key, size, df):
    _no_traced(df, "t.rvs", "df")
    k1, k2 = frandom.split(key)
    chi2 = 2.0 * std_gamma(k2, 0.5 * val(df), size)
    return std_normal(k1, size) / fnp.sqrt(chi2 / df)


def _t_ppf(q, df):
    """-sqrt(df (1 - x) / x) with x = I^-1_{2q}(df/2, 1/2) for q < 1/4; nearer the centre
    y = 1 - x = I^-1_{1-2q}(1/2, df/2) directly (so 1 - x never cancels); odd about 1/2."""
    qv = val(q)
    lower = qv > 0.5
    qq = fnp.where(lower, 1 - q, q)  # the lower-half probability, in (0, 1/2]
    tail = val(qq) < 0.25
    x = sp.betaincinv(0.5 * df, 0.5, 2 * safe(qq, tail, 0.1))
    y = sp.betaincinv(0.5, 0.5 * df, 1 - 2 * safe(qq, ~tail, 0.4))
    t2 = fnp.where(tail, df * (1 - x) / x, df * y / (1 - y))
    mag = fnp.sqrt(t2)
    return fnp.where(lower, mag, -mag)


_t_std = {
    "logpdf": _t_logpdf,
    "ppf": _t_ppf,
    "cdf": _t_cdf,
    "sf": lambda z, df: _t_cdf(-z, df),
}

# ----------------------------------------------------------------------------- gamma, chi2


def _log_tails(cdf, sf):
    """(logcdf, logsf): log of the smaller tail, log1p(-other tail) for the larger one,
    so neither loses digits where its tail is close to 1."""
    def logcdf(z, *sh):
        c = cdf(z, *sh)
        small = val(c) < 0.5
        return fnp.where(small, _log(safe(c, small, 0.25)),
                         fnp.log1p(-safe(sf(z, *sh), ~small, 0.25)))

    def logsf(z, *sh):
        s = sf(z, *sh)
        small = val(s) < 0.5
        return fnp.where(small, _log(safe(s, small, 0.25)),
                         fnp.log1p(-safe(cdf(z, *sh), ~small, 0.25)))
    return logcdf, logsf



def _no_traced(p, fname, pname):
    if isinstance(p, Tracer):
        raise NotImplementedError(
            f"fnad.scipy.stats.{fname}: sampling is not differentiable in `{pname}` (the "
            "rejection sampler has no reparameterisation here); pass it as a constant. loc "
            "and scale remain differentiable.")


def _gamma_logpdf(z, a):
    inside = val(z) >= 0
    zs = safe(z, inside, 1.0)
    return where(inside, sp.xlogy(a - 1, zs) - zs - sp.gammaln(a), NEG_INF)


def _gamma_cdf(z, a):
    inside = val(z) > 0
    return where(inside, sp.gammainc(a, safe(z, inside, 1.0)), 0.0)


def _gamma_sf(z, a):
    inside = val(z) > 0
    return where(inside, sp.gammaincc(a, safe(z, inside, 1.0)), 1.0)


def _gamma_rvs(key, size, a):
    _no_traced(a, "gamma.rvs", "a")
    return std_gamma(key, val(a), size)


_gamma_std = {
    "logpdf": _gamma_logpdf,
    "ppf": lambda q, a: sp.gammaincinv(a, q),
    "cdf": _gamma_cdf,
    "sf": _gamma_sf,
}


def _chi2_rvs(key, size, df):
    _no_traced(df, "chi2.rvs", "df")
    return 2.0 * std_gamma(key, 0.5 * val(df), size)


_chi2_std = {
    "ppf": lambda q, df: 2 * sp.gammaincinv(0.5 * df, q),
    "logpdf": lambda z, df: _gamma_logpdf(0.5 * z, 0.5 * df) - _LOG2,
    "cdf": lambda z, df: _gamma_cdf(0.5 * z, 0.5 * df),
    "sf": lambda z, df: _gamma_sf(0.5 * z, 0.5 * df),
}

# ----------------------------------------------------------------------------- beta


def _beta_logpdf(z, a, b):
    inside = (val(z) >= 0) & (val(z) <= 1)
    zs = safe(z, inside, 0.5)
    return where(inside, sp.xlogy(a - 1, zs) + sp.xlog1py(b - 1, -zs) - sp.betaln(a, b),
                 NEG_INF)


def _beta_cdf(z, a, b):
    inside = (val(z) > 0) & (val(z) < 1)
    out = where(inside, sp.betainc(a, b, safe(z, inside, 0.5)), 0.0)
    return fnp.where(val(z) >= 1, 1.0, out)


def _beta_sf(z, a, b):
    inside = (val(z) > 0) & (val(z) < 1)
    out = where(inside, sp.betainc(b, a, 1 - safe(z, inside, 0.5)), 0.0)
    return fnp.where(val(z) <= 0, 1.0, out)


def _beta_rvs(key, size, a, b):
    _no_traced(a, "beta.rvs", "a")
    _no_traced(b, "beta.rvs", "b")
    k1, k2 = frandom.split(key)
    x, y = std_gamma(k1, val(a), size), std_gamma(k2, val(b), size)
    return x / (x + y)


_beta_std = {
    "logpdf": _beta_logpdf,
    "ppf": lambda q, a, b: sp.betaincinv(a, b, q),
    "cdf": _beta_cdf,
    "sf": _beta_sf,
}
for _std in (_t_std, _gamma_std, _chi2_std, _beta_std):
    _std["logcdf"], _std["logsf"] = _log_tails(_std["cdf"], _std["sf"])
del _std

# ----------------------------------------------------------------------------- families

_DOC = ("The {what}, as `scipy.stats.{name}`: {methods} with the parameters ({params}), "
        "positional or by keyword, broadcast together. Differentiable in x and {diff}. "
        "rvs(key, {params}, size=None) samples with a fnad.random key.\n\n"
        "Example:\n  fnad.scipy.stats.{name}.logpdf(x{example})\n")


def _doc(name, what, shapes, diff, example="", std=None):
    params = ", ".join(list(shapes) + ["loc=0", "scale=1"])
    methods = ", ".join(sorted(std or ()) + ["pdf"])
    return _DOC.format(what=what, name=name, methods=methods, params=params, diff=diff,
                       example=example)


def _make(name, what, shapes, std, rvs_std, diff="every parameter", example=""):
    return _family(name, _doc(name, what, shapes, diff, example, std), shapes, std, rvs_std)


norm = _make("norm", "normal distribution", (), _norm_std, lambda k, s: std_normal(k, s))
expon = _make("expon", "exponential distribution", (), _expon_std,
              _by_inverse(_expon_std["isf"]))
laplace = _make("laplace", "Laplace distribution", (), _laplace_std,
                _by_inverse(_laplace_std["ppf"]))
logistic = _make("logistic", "logistic distribution", (), _logistic_std,
                 _by_inverse(_logistic_std["ppf"]))
uniform = _make("uniform", "uniform distribution on [loc, loc + scale]", (), _uniform_std,
                _by_inverse(_uniform_std["ppf"]))
cauchy = _make("cauchy", "Cauchy distribution", (), _cauchy_std,
               _by_inverse(_cauchy_std["ppf"]))
t = _make("t", "Student t distribution", ("df",), _t_std, _t_rvs,
          "every parameter except df in cdf/sf/ppf (betainc's shape derivative)", ", df")
gamma = _make("gamma", "gamma distribution", ("a",), _gamma_std, _gamma_rvs,
              "every parameter (a to first order in cdf/sf/ppf)", ", a")
chi2 = _make("chi2", "chi-squared distribution", ("df",), _chi2_std, _chi2_rvs,
             "every parameter (df to first order in cdf/sf/ppf)", ", df")
beta = _make("beta", "beta distribution", ("a", "b"), _beta_std, _beta_rvs,
             "every parameter except a, b in cdf/sf/ppf (betainc's shape derivative)",
             ", a, b")

__all__ = ["norm", "expon", "laplace", "logistic", "uniform", "cauchy", "t", "gamma", "chi2",
           "beta"]
