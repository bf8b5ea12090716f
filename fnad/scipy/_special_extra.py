"""Gamma-family, normal-distribution and incomplete-integral special functions: primitives
with rules written in fnad.numpy (so higher derivatives work), and compositions of them.

NumPy arrays run the kernels of `_special_kernels`; CuPy arrays `cupyx.scipy.special`.
The incomplete gamma functions are differentiable in x to any order and in a to first order
(a series, or the continued fraction differentiated along its recurrence); the incomplete
beta functions in x only. Asking for a missing derivative raises NotImplementedError.
"""

import math

import numpy as np

from .. import numpy as fnp
from .._core.backend import array_module
from .._core.tracer import getval
from .._core.rules import defjvp, defvjp
from .._core.abstract import elementwise_rule
from .._batching.families import elementwise_batch
from .._core.rules import as_primitive, defabstract_eval, defbatch
from ..numpy._util import const_of, maybe_any, shape, unbroadcast, values_hidden, wrap
from . import _faddeeva, _special_kernels as _k
from ._special import (_arr, _bcast, _def_unary, _kernel, digamma, erfc, gammaln,
                       refuse_complex)

_SQRT2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0

gamma = wrap(_kernel("gamma", _k.gamma), "gamma")
rgamma = wrap(_kernel("rgamma", _k.rgamma), "rgamma")
erfcx = wrap(_kernel("erfcx", _k.erfcx, _faddeeva.erfcx), "erfcx")
erfcinv = wrap(_kernel("erfcinv", _k.erfcinv), "erfcinv")
gammainc = wrap(_kernel("gammainc", _k.gammainc), "gammainc")
gammaincc = wrap(_kernel("gammaincc", _k.gammaincc), "gammaincc")
betainc = wrap(_kernel("betainc", _k.betainc), "betainc")
gammaincinv = wrap(_kernel("gammaincinv", _k.gammaincinv), "gammaincinv")
# dP(a, x)/da: series / differentiated continued fraction (first order in a only).
_gammainc_da = wrap(_kernel("gammainc_da", _k.gammainc_da), "gammainc_da")  # device: host
betaincinv = wrap(_kernel("betaincinv", _k.betaincinv), "betaincinv")


def _gammasgn_impl(x):
    """The sign of Gamma(x): 1 for x > 0, +-1 at +-0, (-1)^ceil(-x) below, NaN at the poles
    and at -inf and NaN (as scipy.special.gammasgn); on either backend."""
    refuse_complex("gammasgn", (x,))
    xp = array_module(x)
    x = xp.asarray(x)
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        fl = xp.floor(x)
        below = xp.where(fl % 2 != 0, -1.0, 1.0)
        out = xp.where(x > 0, 1.0, xp.where(x == 0, xp.copysign(1.0, x),
                                            xp.where((x == fl) | xp.isnan(x), xp.nan, below)))
    return out.astype(dt, copy=False)[()]


gammasgn = wrap(_gammasgn_impl, "gammasgn", nondiff=True)


def _log_ndtr_kernel(x):
    """log of the standard normal CDF: log1p(-ndtr(-x)) for x > 0, and
    log(erfcx(z) / 2) - z^2 with z = -x / sqrt(2) below (no underflow in the far tail)."""
    x = np.asarray(x)
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x = x.astype(np.float64)
    z = -x / _SQRT2
    with np.errstate(divide="ignore", invalid="ignore"):
        tail = np.log(0.5 * _k.erfcx(z)) - z * z
        out = np.where(x > 0, np.log1p(-0.5 * np.asarray(_k._m.erfc(-z))), tail)
    return out.astype(dt, copy=False)[()]


log_ndtr = wrap(_kernel("log_ndtr", _log_ndtr_kernel, _faddeeva.log_ndtr), "log_ndtr")

# ----------------------------------------------------------------------------- rules


def _pole(x):
    """True at the poles 0, -1, -2, ... of Gamma (constant: no derivative)."""
    v = const_of(x)
    return (v <= 0) & (v == fnp.round(v))


def _d_rgamma(ans, x):
    """-rgamma(x) psi(x); at a pole -n the limit (-1)^n n! (1/Gamma(x) ~ (-1)^n n! (x + n))."""
    pole = _pole(x)
    if not maybe_any(pole):
        return -ans * digamma(x)
    safe = fnp.where(pole, fnp.full_like(x, 0.5), x)
    n = -fnp.round(const_of(x))
    limit = fnp.where(n % 2 != 0, -1.0, 1.0) * fnp.exp(gammaln(n + 1.0))
    return fnp.where(pole, limit + 0 * x, -ans * digamma(safe))


_def_unary(gamma, lambda ans, x: ans * digamma(x))
_def_unary(rgamma, _d_rgamma)
_def_unary(erfcx, lambda ans, x: 2 * x * ans - _TWO_OVER_SQRT_PI)
_def_unary(erfcinv, lambda ans, x: -_SQRT_PI_OVER_TWO * fnp.exp(ans * ans))
# d log ndtr(x) = phi(x) / ndtr(x) = sqrt(2 / pi) / erfcx(-x / sqrt(2)), stable in both tails.
_def_unary(log_ndtr, lambda ans, x: _SQRT_2_OVER_PI / erfcx(-x / _SQRT2))


def _no_shape_derivative(fname, argname, argnum):
    def rule(*args, **kw):
        raise NotImplementedError(
            f"fnad.scipy.special.{fname}: the derivative in `{argname}` (argument {argnum}) is "
            "not implemented (it has no closed form); differentiate in x only, passing "
            f"`{argname}` as a constant (e.g. close over it, or use argnums).")
    return rule


def _raise_second_a():
    raise NotImplementedError(
        "fnad.scipy.special.gammainc/gammaincc: the second derivative in `a` (argument 0) is "
        "not implemented (first derivatives in a, and every order in x, are).")


def _d_gammainc(a, x):
    """x^(a-1) e^(-x) / Gamma(a), the density of P(a, .)."""
    return fnp.exp((a - 1) * fnp.log(x) - x - gammaln(a))


def _d_betainc(a, b, x):
    """x^(a-1) (1-x)^(b-1) / B(a, b), the density of I_.(a, b)."""
    return fnp.exp((a - 1) * fnp.log(x) + (b - 1) * fnp.log1p(-x) - betaln(a, b))


for _f, _sign in ((gammainc, 1.0), (gammaincc, -1.0)):
    defvjp(_f, lambda g, ans, a, x, _s=_sign: unbroadcast(_s * g * _gammainc_da(a, x), shape(a)),
           lambda g, ans, a, x, _s=_sign: unbroadcast(_s * g * _d_gammainc(a, x), shape(x)))
    defjvp(_f, lambda t, ans, a, x, _s=_sign: _bcast(_s * t * _gammainc_da(a, x), ans),
           lambda t, ans, a, x, _s=_sign: _bcast(_s * t * _d_gammainc(a, x), ans))
# d/dx dP/da = d/da of the density = density * (log x - digamma(a)); d^2 P/da^2 is not here.
defvjp(_gammainc_da, lambda *args, **kw: _raise_second_a(),
       lambda g, ans, a, x: unbroadcast(g * _d_gammainc(a, x) * (fnp.log(x) - digamma(a)),
                                        shape(x)))
defjvp(_gammainc_da, lambda *args, **kw: _raise_second_a(),
       lambda t, ans, a, x: _bcast(t * _d_gammainc(a, x) * (fnp.log(x) - digamma(a)), ans))
defvjp(betainc, _no_shape_derivative("betainc", "a", 0), _no_shape_derivative("betainc", "b", 1),
       lambda g, ans, a, b, x: unbroadcast(g * _d_betainc(a, b, x), shape(x)))
defjvp(betainc, _no_shape_derivative("betainc", "a", 0), _no_shape_derivative("betainc", "b", 1),
       lambda t, ans, a, b, x: _bcast(t * _d_betainc(a, b, x), ans))
# The inverses in p: dx/dp = 1 / density at x = ans.
# In a: P(a, x(a)) = p gives dx/da = -(dP/da) / density.
defvjp(gammaincinv,
       lambda g, ans, a, p: unbroadcast(-g * _gammainc_da(a, ans) / _d_gammainc(a, ans),
                                        shape(a)),
       lambda g, ans, a, p: unbroadcast(g / _d_gammainc(a, ans), shape(p)))
defjvp(gammaincinv,
       lambda t, ans, a, p: _bcast(-t * _gammainc_da(a, ans) / _d_gammainc(a, ans), ans),
       lambda t, ans, a, p: _bcast(t / _d_gammainc(a, ans), ans))
defvjp(betaincinv, _no_shape_derivative("betaincinv", "a", 0),
       _no_shape_derivative("betaincinv", "b", 1),
       lambda g, ans, a, b, p: unbroadcast(g / _d_betainc(a, b, ans), shape(p)))
defjvp(betaincinv, _no_shape_derivative("betaincinv", "a", 0),
       _no_shape_derivative("betaincinv", "b", 1),
       lambda t, ans, a, b, p: _bcast(t / _d_betainc(a, b, ans), ans))
del _f, _sign

# ----------------------------------------------------------------------------- compositions


def betaln(a, b):
    """log|B(a, b)|, as scipy.special.betaln: log|Gamma(a) Gamma(b) / Gamma(a + b)| where
    |a|, |b|, |a + b| < 30 (no cancellation between large logs), else
    gammaln(a) + gammaln(b) - gammaln(a + b).

    Example:
      fnad.scipy.special.betaln(2.0, 3.0)   # log(1/12)
    """
    a, b = _arr(a), _arr(b)
    va, vb = const_of(a), const_of(b)
    small = (fnp.abs(va) < 30) & (fnp.abs(vb) < 30) & (fnp.abs(va + vb) < 30)
    by_logs = gammaln(a) + gammaln(b) - gammaln(a + b)
    if not maybe_any(small):
        return by_logs
    sa, sb = fnp.where(small, a, 1.0), fnp.where(small, b, 1.0)
    direct = fnp.log(fnp.abs(gamma(sa) * gamma(sb) * rgamma(sa + sb)))
    out = fnp.where(small, direct, by_logs)
    # scalars give a NumPy scalar, as SciPy's (a 0-d array would not combine with device arrays)
    return out[()] if type(out) is np.ndarray and out.ndim == 0 else out


def beta(a, b):
    """The beta function Gamma(a) Gamma(b) / Gamma(a + b), as scipy.special.beta.

    Computed as sign * exp(betaln(a, b)), so large arguments do not overflow.

    Example:
      fnad.scipy.special.beta(2.0, 3.0)   # 1/12
    """
    a, b = _arr(a), _arr(b)
    va, vb = const_of(a), const_of(b)
    sign = fnp.sign(gamma(va)) * fnp.sign(gamma(vb)) * fnp.sign(gamma(va + vb))
    return sign * fnp.exp(betaln(a, b))


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension `d`, as
    scipy.special.multigammaln: d(d-1)/4 log(pi) + sum_j gammaln(a - (j - 1) / 2).

    Args:
      a: array with every entry > (d - 1) / 2.
      d: a positive integer (not differentiable).

    Example:
      fnad.scipy.special.multigammaln(3.0, 2)
    """
    if int(d) != d or d < 1:
        raise ValueError(f"fnad.scipy.special.multigammaln: d must be a positive integer, got "
                         f"{d!r}.")
    a, d = _arr(a), int(d)
    refuse_complex("multigammaln", (a,))
    if not values_hidden(a) and np.any(getval(a) <= 0.5 * (d - 1)):  # jit, device: unread
        raise ValueError("fnad.scipy.special.multigammaln: every entry of a must be > "
                         f"(d - 1) / 2 = {0.5 * (d - 1)}, got min {np.min(getval(a))}.")
    out = 0.25 * d * (d - 1) * math.log(math.pi)
    for j in range(d):
        out = out + gammaln(a - 0.5 * j)
    return out


def ndtr(x):
    """The standard normal CDF (1 + erf(x / sqrt 2)) / 2, computed as erfc(-x / sqrt 2) / 2
    so the lower tail keeps its relative accuracy.

    Example:
      fnad.scipy.special.ndtr(0.0)   # 0.5
    """
    return 0.5 * erfc(-_arr(x) / _SQRT2)


def ndtri(p):
    """The inverse of ndtr: -sqrt(2) erfcinv(2 p) (-inf at 0, inf at 1, NaN outside [0, 1]).

    Example:
      fnad.scipy.special.ndtri(0.975)   # 1.959963984540054
    """
    return -_SQRT2 * erfcinv(2 * _arr(p))


_DOCS = {
    gamma: "The gamma function, as scipy.special.gamma (inf at 0, NaN at negative integers).",
    rgamma: "1 / gamma(x), 0 at the poles of gamma, as scipy.special.rgamma.",
    erfcx: "The scaled complementary error function exp(x^2) erfc(x), as scipy.special.erfcx "
           "(real or complex x).",
    erfcinv: "The inverse of erfc on [0, 2], accurate for tiny arguments.",
    log_ndtr: "log(ndtr(x)), accurate far into both tails (x = -1e5 included); complex x takes "
              "SciPy's branch.",
    gammainc: "The regularized lower incomplete gamma function P(a, x) (a > 0, x >= 0). "
              "Differentiable in x (any order) and in a (first order).",
    gammaincc: "The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x). "
               "Differentiable in x (any order) and in a (first order).",
    betainc: "The regularized incomplete beta function I_x(a, b) (a, b > 0, 0 <= x <= 1). "
             "Differentiable in x only.",
    gammaincinv: "The inverse of gammainc(a, .): x with P(a, x) = p. Differentiable in p "
                 "(any order) and in a (first order).",
    betaincinv: "The inverse of betainc(a, b, .): x with I_x(a, b) = p. Differentiable in p "
                "only.",
}
for _f, _doc in _DOCS.items():
    _nargs = {gammainc: "a, ", gammaincc: "a, ", betainc: "a, b, ", gammaincinv: "a, ",
              betaincinv: "a, b, "}.get(_f, "")
    _f.__doc__ = (f"{_doc}\n\nDifferentiable (VJP and JVP, any order); runs the NumPy kernel "
                  "or cupyx.scipy.special directly on plain arrays.\n\nExample:\n  "
                  f"fnad.grad(lambda x: fnp.sum(fnad.scipy.special.{_f.__name__}({_nargs}x)))(x)\n")
del _f, _doc, _nargs
gammasgn.__doc__ = (
    "The sign of gamma(x) (NaN at its poles), as scipy.special.gammasgn.\n\nIts derivative "
    "is zero wherever it exists, so its output carries none (a gradient through it is "
    "zero).\n\nExample:\n  fnad.scipy.special.gammasgn(np.array([-0.5, 1.5]))   # [-1., 1.]\n")

# ----------------------------------------------------------------------------- abstract evaluation

for _f in (gamma, gammasgn, rgamma, erfcx, erfcinv, gammainc, gammaincc, betainc, gammaincinv,
           _gammainc_da, betaincinv, log_ndtr):
    defabstract_eval(_f, elementwise_rule(as_primitive(_f).impl))
    defbatch(_f, elementwise_batch(_f))
del _f
