"""Gamma draws (Marsaglia and Tsang's rejection method, JAX's key schedule) and their
implicit reparameterisation gradient dx/da = -(dP(a, x)/da) / p(x; a).

JAX draws each entry from its own key (`split(key, size)`), and rejection-samples with
scalar draws from keys split off in turn; here every entry runs that same schedule at once
(threefry on a batch of keys), so the numbers are JAX's (`jax_threefry_partitionable=False`)
up to the last bits of `log` and `pow`.
"""

import math

import numpy as np

from .. import numpy as fnp
from .._ad.transforms import stop_gradient
from .._core.backend import array_module
from .._core.tracer import Tracer
from ._math import erfinv
from ._primitive import random_primitive
from ._threefry import _threefry_words, check_key, shape_tuple, split

__all__ = ["gamma", "loggamma"]


# ----------------------------------------------------------------------------- batched keys

def _hash(keys, x0, x1):
    """threefry of counters (x0, x1) under each key of `keys` (n, 2): (n, m) pairs of words."""
    xp = array_module(keys)
    return _threefry_words(xp, keys[:, 0:1], keys[:, 1:2], x0, x1)


def _split_rows(keys, num):
    """`split(key, num)` for each row of `keys`: shape (n, num, 2)."""
    xp = array_module(keys)
    y0, y1 = _hash(keys, xp.arange(num, dtype=xp.uint32)[None],
                   xp.arange(num, 2 * num, dtype=xp.uint32)[None])
    return xp.concatenate([y0, y1], axis=1).reshape(len(keys), num, 2)


def _unit_rows(keys, dtype):
    """`uniform(key, (), dtype)` for each row of `keys` (the top mantissa bits, in [0, 1))."""
    xp = array_module(keys)
    zero = xp.zeros((1, 1), xp.uint32)
    if dtype.itemsize == 8:
        hi, lo = _hash(keys, zero, zero + xp.uint32(1))
        b = (hi[:, 0].astype(xp.uint64) << xp.uint64(32)) | lo[:, 0].astype(xp.uint64)
    else:
        b = _hash(keys, zero, zero)[0][:, 0]
        if dtype.itemsize == 2:
            b = (b >> xp.uint32(16)).astype(xp.uint16)
    nbits = dtype.itemsize * 8
    utype = np.dtype(f"uint{nbits}")
    one = np.array(1.0, dtype).view(utype)
    f = ((b >> utype.type(nbits - np.finfo(dtype).nmant)) | utype.type(one)).view(dtype)
    return f - dtype.type(1.0)


def _normal_rows(keys, dtype):
    """`normal(key, (), dtype)` for each row of `keys`."""
    xp = array_module(keys)
    cd = np.dtype(np.float32) if dtype.itemsize < 4 else dtype
    lo = np.nextafter(cd.type(-1.0), cd.type(0.0))
    f = _unit_rows(keys, cd)
    u = xp.maximum(lo, f * (cd.type(1.0) - lo) + lo)
    return (cd.type(math.sqrt(2)) * erfinv(xp, u)).astype(dtype, copy=False)


# ----------------------------------------------------------------------------- the draw

def _marsaglia_tsang(keys, d, c):
    """V of the accepted (X, V, U) per entry (JAX's loop: keys split in 3, a normal drawn
    until v > 0, the squeeze then the log test)."""
    xp = array_module(keys)
    dtype = d.dtype
    one, zero = dtype.type(1), dtype.type(0)
    n = len(keys)
    X, V, U = xp.zeros(n, dtype), xp.ones(n, dtype), xp.full(n, 2, dtype)
    keys = keys.copy()
    todo = xp.arange(n)
    while len(todo):
        k3 = _split_rows(keys[todo], 3)
        keys[todo] = k3[:, 0]
        xkeys, ukeys, cs = k3[:, 1], k3[:, 2], c[todo]
        x, v = xp.zeros(len(todo), dtype), xp.full(len(todo), -1, dtype)
        again = xp.arange(len(todo))
        while len(again):  # normals until v = 1 + x c > 0
            k2 = _split_rows(xkeys[again], 2)
            xkeys[again] = k2[:, 0]
            x[again] = _normal_rows(k2[:, 1], dtype)
            v[again] = one + x[again] * cs[again]
            again = again[v[again] <= zero]
        X[todo], V[todo], U[todo] = x * x, v * v * v, _unit_rows(ukeys, dtype)
        Xt, Vt, Ut, dt = X[todo], V[todo], U[todo], d[todo]
        with np.errstate(divide="ignore", invalid="ignore"):
            rejected = (Ut >= one - dtype.type(0.0331) * (Xt * Xt)) & (
                xp.log(Ut) >= Xt * dtype.type(0.5) + dt * ((one - Vt) + xp.log(Vt)))
        todo = todo[rejected]
    return V


@random_primitive
def _gamma_draw(key, a, log_space):
    """Gamma(a) draws of a's shape and dtype (log-draws with `log_space`)."""
    xp = array_module(key, a)
    a = xp.asarray(a)
    dtype, shape = a.dtype, a.shape
    n = a.size
    if n == 0:
        return xp.zeros(shape, dtype)
    keys = split(key, n)
    alpha0 = a.reshape(-1)
    one = dtype.type(1)
    boost = alpha0 >= one
    alpha = xp.where(boost, alpha0, alpha0 + one)
    d = alpha - dtype.type(1 / 3)
    with np.errstate(invalid="ignore", divide="ignore"):
        c = dtype.type(1 / 3) / xp.sqrt(d)
    k2 = _split_rows(keys, 2)
    V = _marsaglia_tsang(k2[:, 0], d, c)
    u = _unit_rows(k2[:, 1], dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        if log_space:
            log_u = xp.log1p(-u)  # -exponential(subkey)
            log_boost = xp.where(boost | (log_u == 0), dtype.type(0), log_u * (one / alpha0))
            out = (xp.log(d) + xp.log(V)) + log_boost
        else:
            b = xp.where(boost, one, xp.power(one - u, one / alpha0))
            out = (d * V) * b
    return out.reshape(shape)


# ----------------------------------------------------------------------------- gradient

def _digamma(z):
    """psi(z) for z > 0 (float64): recurrence up to 6, then the asymptotic series."""
    acc = np.zeros_like(z)
    for _ in range(6):
        small = z < 6
        acc = acc - np.where(small, 1 / z, 0.0)
        z = np.where(small, z + 1, z)
    r = 1 / (z * z)
    tail = r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r / 132))))
    return acc + np.log(z) - 0.5 / z - tail


def _dx_da(a, x):
    """dx/da of a Gamma(a) draw x (implicit reparameterisation), from the series
    P(a, x) = x^a e^-x / Gamma(a + 1) S, S = sum_n x^n / ((a + 1) ... (a + n)):
    dx/da = -(S (log x - psi(a + 1)) + dS/da) x / a (the prefactor cancels with the pdf)."""
    a = np.asarray(a, np.float64)
    x = np.maximum(np.asarray(x, np.float64), np.finfo(np.float64).tiny)
    term, harmonic = np.ones_like(x), np.zeros_like(x)
    s, ds = np.ones_like(x), np.zeros_like(x)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for n in range(1, 100_000):
            term = term * x / (a + n)
            harmonic = harmonic + 1 / (a + n)
            s, ds = s + term, ds - term * harmonic
            if n > 8 and not ((term * (1 + harmonic) > 1e-17 * (s + np.abs(ds)))
                              & np.isfinite(term)).any():
                break
        g = -(s * (np.log(x) - _digamma(a + 1)) + ds) * x / a
    return np.where(np.isfinite(g), g, 0.0)


def _host(v):
    return v.get() if hasattr(v, "get") and not isinstance(v, np.ndarray) else np.asarray(v)


@random_primitive
def _gamma_grad(a, x, log_space):
    """dx/da (or d log x / da with `log_space`, x then a log-draw), in x's dtype (computed
    in float64 on the host)."""
    xp = array_module(a, x)
    xh, ah = _host(x), _host(a)
    if log_space:
        xv = np.exp(xh.astype(np.float64))
        g = _dx_da(ah, xv) / np.maximum(xv, np.finfo(np.float64).tiny)
    else:
        g = _dx_da(ah, xh)
    return xp.asarray(g.astype(xh.dtype))


# ----------------------------------------------------------------------------- public

def _float(dtype, fname):
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"fnad.random.{fname}: dtype must be a floating type, got {dtype}.")
    return dtype


def _gamma(key, a, shape, dtype, log_space, fname):
    k = check_key(key, fname)
    dtype = _float(dtype, fname)
    a = a.astype(dtype) if isinstance(a, Tracer) else fnp.asarray(a, dtype)
    shape = tuple(a.shape) if shape is None else shape_tuple(shape, fname)
    if tuple(a.shape) != shape:
        try:
            np.broadcast_shapes(tuple(a.shape), shape)
        except ValueError:
            raise ValueError(f"fnad.random.{fname}: a of shape {tuple(a.shape)} does not "
                             f"broadcast to shape {shape}.") from None
        a = fnp.broadcast_to(a, shape)
    x = _gamma_draw(k, a, log_space)
    if isinstance(a, Tracer):  # differentiable in a: x + (a - stop(a)) dx/da
        a0 = stop_gradient(a)
        x = x + (a - a0) * _gamma_grad(a0, stop_gradient(x), log_space)
    return x


def gamma(key, a, shape=None, dtype=np.float32):
    """Gamma(a, 1) floats (JAX's `jax.random.gamma`; divide by a rate to change the scale).

    Differentiable in `a` by implicit reparameterisation: dx/da = -(dF/da) / f for the CDF F
    and density f at the draw, as JAX.

    Args:
      a: shape parameter(s) > 0, broadcastable to `shape`. shape: None means a's shape.
      dtype: a float dtype (float32 as in JAX).

    Example:
      x = fnad.random.gamma(key, 2.0, (1000,))
      fnad.grad(lambda a: fnad.random.gamma(key, a).sum())(2.0)
    """
    return _gamma(key, a, shape, dtype, False, "gamma")


def loggamma(key, a, shape=None, dtype=np.float32):
    """log of Gamma(a, 1) draws, accurate for small `a` where the draws underflow.

    Example:
      lx = fnad.random.loggamma(key, 0.01, (10,))
    """
    return _gamma(key, a, shape, dtype, True, "loggamma")
