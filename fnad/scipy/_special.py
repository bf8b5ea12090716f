"""Special functions as primitives, with rules written in fnad.numpy (so higher derivatives
work). NumPy arrays use the kernels of `_special_math` (SciPy is not a run-time dependency);
CuPy arrays go to `cupyx.scipy.special`."""

import math

import numpy as np

from .. import numpy as fnp
from .._core.backend import asarray_like, backend_of, is_device_array
from .._core.tracer import Tracer
from .._core.abstract import dtype_rule, elementwise_rule
from .._batching.families import axis_batch, elementwise_batch
from .._core.rules import as_primitive, defabstract_eval, defbatch, defjvp, defvjp
from .._core.shapes import shape, unbroadcast
from .._core.tracer import primitive
from ..numpy import logsumexp as logsumexp
from . import _faddeeva, _special_math as _m

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0


def _is_complex(a):
    """True for a complex array, Python complex, or list/tuple holding complex numbers."""
    dt = getattr(a, "dtype", None)
    if dt is not None:
        return dt.kind == "c"
    return isinstance(a, complex) or (isinstance(a, (list, tuple)) and np.iscomplexobj(a))


def refuse_complex(name, args):
    """Raise TypeError when an argument of fnad.scipy.special.`name` is complex: its kernels
    are real (casting would drop the imaginary part and return a wrong real value)."""
    for a in args:
        if _is_complex(a):
            dt = getattr(a, "dtype", "complex")
            raise TypeError(
                f"fnad.scipy.special.{name}: complex inputs (dtype {dt}) are not supported; "
                "it is implemented for real inputs only. Apply it to fnp.real(z), fnp.imag(z) "
                "or fnp.abs(z), or use scipy.special for values without derivatives.")


def _kernel(name, np_kernel, complex_kernel=None):
    """The backend function: `np_kernel` on NumPy values, cupyx.scipy.special's on CuPy;
    complex inputs go to `complex_kernel(*args, real_kernel)` (written for both backends),
    or are refused with a TypeError when there is none."""
    def impl(*args):
        if any(_is_complex(a) for a in args):
            if complex_kernel is None:
                refuse_complex(name, args)
            return complex_kernel(*args, real_kernel=impl)
        for a in args:
            backend = backend_of(a)
            if backend is not None:
                fn = getattr(backend.xpx.scipy.special, name, None)
                if fn is None:  # cupyx has no jn, iv, ive: the NumPy kernel, on host copies
                    host = [x.get() if is_device_array(x) else x for x in args]
                    return backend.xp.asarray(np_kernel(*host))
                return fn(*args)
        return np_kernel(*args)
    impl.__name__ = name
    impl.__doc__ = np_kernel.__doc__
    return impl


def _arr(x):
    if isinstance(x, Tracer):
        return x
    x = asarray_like(x)  # a 0-d host value as a NumPy scalar, which combines with device arrays
    return x[()] if type(x) is np.ndarray and x.ndim == 0 else x


def _bcast(r, ans):
    return r if shape(r) == shape(ans) else fnp.broadcast_to(r, shape(ans))


def _def_unary(f, d):
    defvjp(f, lambda g, ans, x: g * d(ans, x))
    defjvp(f, lambda t, ans, x: t * d(ans, x))


# ----------------------------------------------------------------------------- elementwise

erf = primitive(_kernel("erf", _m.erf, _faddeeva.erf), "erf")
erfc = primitive(_kernel("erfc", _m.erfc, _faddeeva.erfc), "erfc")
erfinv = primitive(_kernel("erfinv", _m.erfinv), "erfinv")
gammaln = primitive(_kernel("gammaln", _m.gammaln), "gammaln")
digamma = primitive(_kernel("digamma", _m.digamma), "digamma")
psi = digamma
polygamma = primitive(_kernel("polygamma", _m.polygamma), "polygamma")
wofz = primitive(_faddeeva.wofz, "wofz")  # complex output for real input too; both backends


def _expit_impl(x):
    refuse_complex("expit", (x,))
    e = np.exp(-np.abs(x))  # never overflows
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(e.dtype, copy=False)


def _logit_impl(p):
    refuse_complex("logit", (p,))
    with np.errstate(divide="ignore"):
        return np.log(p) - np.log1p(-p)


def _xlogy_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y))


def _xlog1py_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log1p(y))


expit = primitive(_expit_impl, "expit")
logit = primitive(_logit_impl, "logit")
xlogy = primitive(_xlogy_impl, "xlogy")
xlog1py = primitive(_xlog1py_impl, "xlog1py")

_DOCS = {
    erf: "The error function 2/sqrt(pi) int_0^x exp(-t^2) dt, as scipy.special.erf (real or "
         "complex x; complex derivatives are holomorphic).",
    erfc: "The complementary error function 1 - erf(x) (accurate for large x; real or "
          "complex x).",
    erfinv: "The inverse of erf on [-1, 1] (+-inf at +-1, NaN outside).",
    wofz: "The Faddeeva function w(z) = exp(-z^2) erfc(-iz), as scipy.special.wofz (complex "
          "output, also for real input).",
    gammaln: "log|Gamma(x)|, as scipy.special.gammaln (inf at non-positive integers).",
    digamma: "The digamma function d gammaln / dx, as scipy.special.digamma (alias psi).",
    polygamma: "polygamma(n, x): the n-th derivative of digamma (n an integer, no derivative).",
    expit: "The logistic sigmoid 1 / (1 + exp(-x)), computed without overflow.",
    logit: "log(p / (1 - p)), the inverse of expit.",
    xlogy: "x * log(y), 0 where x == 0 (unless y is NaN); its gradients vanish with x.",
    xlog1py: "x * log1p(y), 0 where x == 0 (unless y is NaN); its gradients vanish with x.",
}
for _f, _doc in _DOCS.items():
    _f.__doc__ = (f"{_doc}\n\nDifferentiable (VJP and JVP, any order); runs the NumPy kernel "
                  "or cupyx.scipy.special directly on plain arrays.\n\nExample:\n  "
                  f"fnad.grad(lambda x: fnp.sum(fnad.scipy.special.{_f.__name__}("
                  + ("1, " if _f is polygamma else "") + "x)))(x)\n")
del _f, _doc

_def_unary(erf, lambda ans, x: _TWO_OVER_SQRT_PI * fnp.exp(-x * x))
_def_unary(erfc, lambda ans, x: -_TWO_OVER_SQRT_PI * fnp.exp(-x * x))
_def_unary(erfinv, lambda ans, x: _SQRT_PI_OVER_TWO * fnp.exp(ans * ans))
_def_unary(wofz, lambda ans, x: 1j * _TWO_OVER_SQRT_PI - 2 * x * ans)
_def_unary(gammaln, lambda ans, x: digamma(x))
_def_unary(digamma, lambda ans, x: polygamma(1, x))
_def_unary(expit, lambda ans, x: ans * (1 - ans))
_def_unary(logit, lambda ans, x: 1 / (x * (1 - x)))
# polygamma(n, x): n is an integer order and carries no derivative.
defvjp(polygamma, None, lambda g, ans, n, x: unbroadcast(g * polygamma(n + 1, x), shape(x)))
defjvp(polygamma, None, lambda t, ans, n, x: _bcast(t * polygamma(n + 1, x), ans))


def _safe_where_x(x, v):
    """v where x != 0, else 0 (the x log y terms vanish with x, as PyTorch's xlogy)."""
    return fnp.where(x != 0, v, fnp.zeros_like(v))


def _safe_log(x, y, log):
    """log(y) where x != 0, else 0 (no log(0) warning where the term vanishes)."""
    return _safe_where_x(x, log(fnp.where(x != 0, y, fnp.ones_like(y))))


def _safe_div(x, y):
    """x / y, taken as 0 where x == y == 0 (so xlogy(0, 0) has a zero gradient). Where only
    x is 0 it stays x / y (= 0), so its derivative in x is 1 / y, as PyTorch's."""
    edge = (x == 0) & (y == 0)
    return fnp.where(edge, fnp.zeros_like(x / 1), x / fnp.where(edge, fnp.ones_like(y), y))


defvjp(xlogy, lambda g, ans, x, y: unbroadcast(g * _safe_log(x, y, fnp.log), shape(x)),
              lambda g, ans, x, y: unbroadcast(g * _safe_div(x, y), shape(y)))
defjvp(xlogy, lambda t, ans, x, y: _bcast(t * _safe_log(x, y, fnp.log), ans),
              lambda t, ans, x, y: _bcast(t * _safe_div(x, y), ans))
defvjp(xlog1py, lambda g, ans, x, y: unbroadcast(g * _safe_log(x, y, fnp.log1p), shape(x)),
                lambda g, ans, x, y: unbroadcast(g * _safe_div(x, 1 + y), shape(y)))
defjvp(xlog1py, lambda t, ans, x, y: _bcast(t * _safe_log(x, y, fnp.log1p), ans),
                lambda t, ans, x, y: _bcast(t * _safe_div(x, 1 + y), ans))

# ----------------------------------------------------------------------------- softmax
# One pass for the shift, one exp in place, one sum, one division in place. The shift is
# max(x) where that is finite, else 0 (no inf - inf: a row of -inf gives NaN, as SciPy).
# Complex inputs work (the Jacobian is holomorphic: the same rules hold).


def _shifted(x, axis):
    """`x - shift` as a fresh float array we own, and whether every shift was finite (then
    each sum of exponentials is at least 1: no log(0)). A complex `x` is shifted by the
    max of its real part (a real shift: the imaginary parts are phases)."""
    m = np.max(x.real if x.dtype.kind == "c" else x, axis=axis, keepdims=True)
    # one cheap test; rare rows of infinities shift by 0 (on a device, reading the test back
    # would cost a synchronisation: always the general form)
    finite = isinstance(m, np.ndarray) and math.isfinite(m.sum())
    if not finite:
        m = np.where(np.isfinite(m), m, 0).astype(m.dtype, copy=False)
    s = x - m
    if isinstance(s, np.generic):  # a 0-d input: an array, so that ufuncs can write into it
        s = np.array(s)
    return (s if s.dtype.kind in "fc" else s.astype(np.float64)), finite


def _softmax_impl(x, axis=None):
    e, _ = _shifted(x, axis)
    np.exp(e, out=e)
    e /= np.sum(e, axis=axis, keepdims=True)
    return e


def _log_softmax_impl(x, axis=None):
    s, finite = _shifted(x, axis)
    if finite:
        s -= np.log(np.sum(np.exp(s), axis=axis, keepdims=True))
        return s
    with np.errstate(divide="ignore"):
        s -= np.log(np.sum(np.exp(s), axis=axis, keepdims=True))
    return s


_softmax_p = primitive(_softmax_impl, "softmax")
_log_softmax_p = primitive(_log_softmax_impl, "log_softmax")


def _vjp_softmax(g, ans, x, axis=None):
    return ans * (g - fnp.sum(g * ans, axis=axis, keepdims=True))


defvjp(_softmax_p, _vjp_softmax)
defjvp(_softmax_p, _vjp_softmax)  # the Jacobian is symmetric
defvjp(_log_softmax_p, lambda g, ans, x, axis=None:
       g - fnp.exp(ans) * fnp.sum(g, axis=axis, keepdims=True))
defjvp(_log_softmax_p, lambda t, ans, x, axis=None:
       t - fnp.sum(fnp.exp(ans) * t, axis=axis, keepdims=True))


def _axis_arg(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) over `axis` (all axes when None), as `scipy.special.softmax`.

    Example:
      fnad.scipy.special.softmax(np.array([1e4, 1e4]))   # [0.5, 0.5]
    """
    return _softmax_p(_arr(x), _axis_arg(axis))


def log_softmax(x, axis=None):
    """x - logsumexp(x) over `axis`, computed stably, as `scipy.special.log_softmax`.

    Example:
      fnad.scipy.special.log_softmax(np.array([0.0, -1e4]), axis=0)
    """
    return _log_softmax_p(_arr(x), _axis_arg(axis))

# ----------------------------------------------------------------------------- abstract evaluation

for _f in (erf, erfc, erfinv, gammaln, digamma, polygamma, expit, logit, xlogy, xlog1py, wofz):
    defabstract_eval(_f, elementwise_rule(as_primitive(_f).impl))
    defbatch(_f, elementwise_batch(_f))
defabstract_eval(_softmax_p, dtype_rule(_softmax_impl))
defabstract_eval(_log_softmax_p, dtype_rule(_log_softmax_impl))
defbatch(_softmax_p, axis_batch(_softmax_p))
defbatch(_log_softmax_p, axis_batch(_log_softmax_p))
del _f
