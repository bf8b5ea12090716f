"""Helpers shared by the fnad.scipy.stats families: argument conversion, the family
namespace objects, masking that keeps gradients finite, and sampling from fnad.random keys."""

import sys
import functools

import numpy as np

from .. import numpy as fnp
from .. import random as frandom
from .._core.backend import is_device_array
from .._core.tracer import Tracer, getval
from ..numpy._util import const_of, maybe_any, shape

NEG_INF = -np.inf


def arr(x):
    """`x` as a float array (tracers and device arrays kept; integer and Python inputs become
    float64); a 0-d host value becomes a NumPy scalar, which combines with arrays of any
    device (a 0-d NumPy array would not combine with a device array)."""
    if isinstance(x, Tracer):
        return x
    if not is_device_array(x):
        x = np.asarray(x)
    x = x if x.dtype.kind == "f" else x.astype(np.float64)
    return x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x


def where(cond, x, fill):
    """x where cond, else the constant `fill`, broadcast to the common shape."""
    x = arr(x)
    out_shape = np.broadcast_shapes(np.shape(cond), shape(x))
    out = fnp.where(cond, x, fill)  # `fill` a Python scalar: x's dtype, on their device
    return out if shape(out) == out_shape else fnp.broadcast_to(out, out_shape)


def safe(x, ok, value):
    """x where ok, else `value`: an input that keeps a masked-out branch finite (so no NaN
    reaches its gradient)."""
    return where(ok, x, value)


def val(x):
    """The plain values of `x` (tracers unwrapped), as an array; a batched value (vmap)
    stays batched, a staged one (jit) staged and a device one on its device, for comparisons
    and fnp.where; a 0-d host value is a NumPy scalar (it combines with device arrays)."""
    v = const_of(x)
    if isinstance(v, Tracer) or is_device_array(v):
        return v
    v = np.asarray(v)
    return v[()] if v.ndim == 0 else v


def standardize(x, loc, scale):
    x, loc, scale = arr(x), arr(loc), arr(scale)
    return (x - loc) / scale, scale


def bad_scale(scale):
    """True where scipy's scale parameter is invalid (NaN results there)."""
    return ~(val(scale) > 0)


def nan_where(bad, out):
    """NaN where `bad` (invalid parameters), as SciPy."""
    if not maybe_any(bad):
        return out
    return where(fnp.logical_not(bad), out, np.nan)


def sample_shape(size, *params):
    if size is None:
        return np.broadcast_shapes(*(shape(p) for p in params))
    return (size,) if isinstance(size, (int, np.integer)) else tuple(size)


def uniform01(key, size):
    """Uniform float64 draws in (0, 1) (never exactly 0), from a fnad.random key."""
    return frandom.uniform(key, size, np.float64, np.finfo(np.float64).tiny, 1.0)


def std_normal(key, size):
    return frandom.normal(key, size, np.float64)


def std_gamma(key, a, size):
    """Gamma(a, 1) draws (a > 0, plain values) by Marsaglia and Tsang's method; a < 1 draws
    Gamma(a + 1) U^(1 / a). Rejected entries are redrawn with fresh keys derived by fold_in."""
    a = np.broadcast_to(np.asarray(getval(a), np.float64), size)
    boost = a < 1
    d = np.where(boost, a + 1.0, a) - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    out = np.full(size, np.nan)
    todo = np.ones(size, dtype=bool)
    for i in range(1000):
        k1, k2 = frandom.split(frandom.fold_in(key, i))
        z = np.asarray(std_normal(k1, size))
        u = np.asarray(uniform01(k2, size))
        v = (1.0 + c * z) ** 3
        with np.errstate(invalid="ignore", divide="ignore"):
            ok = (v > 0) & (np.log(u) < 0.5 * z * z + d - d * v + d * np.log(v))
        take = todo & ok
        out[take] = (d * v)[take]
        todo &= ~ok
        if not todo.any():
            break
    if boost.any():
        u = np.asarray(uniform01(frandom.fold_in(key, 10_000), size))
        out = np.where(boost, out * u ** (1.0 / np.where(boost, a, 1.0)), out)
    return out


def _quiet(fun):
    """`fun` without NumPy's warnings for the infinities and NaNs SciPy returns silently
    (log(0) = -inf outside a support, ppf(1) = inf, NaN for invalid parameters)."""
    @functools.wraps(fun)
    def quiet(*args, **kwargs):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return fun(*args, **kwargs)
    return quiet


class Family:
    """A distribution family's functions as attributes (`norm.logpdf`, `norm.cdf`, ...),
    as `scipy.stats.norm`. Its methods are plain functions of arrays and parameters."""

    def __init__(self, name, doc, **functions):
        self.name = name
        self.__doc__ = doc
        for fname, fun in functions.items():
            fun = _quiet(fun)
            fun.__name__ = fname
            fun.__qualname__ = f"{name}.{fname}"
            setattr(self, fname, fun)
        self._functions = tuple(functions)

    def __repr__(self):
        return f"<fnad.scipy.stats.{self.name}: {', '.join(self._functions)}>"


def stand_in_for_module(name, family):
    """Make `family` what `import <name>` gives (fnad/scipy/stats/<family>.py): JAX's
    `jax.scipy.stats.norm` is a module of functions, fnad's the object with those methods."""
    sys.modules[name] = family
