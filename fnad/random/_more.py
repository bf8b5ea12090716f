"""The further distributions of `jax.random`, each with JAX's recipe (so the same key gives
JAX's numbers, `jax_threefry_partitionable=False`, up to the last bits of the math library):
exponential, laplace, logistic, cauchy, rademacher, t, beta, dirichlet, chisquare, f, pareto,
lognormal, maxwell, double_sided_maxwell, weibull_min, rayleigh, wald, triangular, geometric,
generalized_normal, ball, orthogonal, multivariate_normal; key_data, wrap_key_data, clone.

They are compositions of `uniform`/`normal`/`gamma` with `fnad.numpy`, so they are
differentiable in their parameters (scale, df, alpha, mean, cov, ...) and work under jit and
vmap. Unlike `uniform`/`normal`, they use the platform's log/exp/tan (the same key gives the
same numbers on one backend).
"""

import numpy as np

from .. import numpy as fnp
from .._core.tracer import Tracer
from ._distributions import bernoulli, normal, uniform
from ._gamma import gamma, loggamma
from ._threefry import check_key, shape_tuple, split

__all__ = ["exponential", "laplace", "logistic", "cauchy", "rademacher", "t", "beta",
           "dirichlet", "chisquare", "f", "pareto", "lognormal", "maxwell",
           "double_sided_maxwell", "weibull_min", "rayleigh", "wald", "triangular",
           "geometric", "generalized_normal", "ball", "orthogonal", "multivariate_normal",
           "key_data", "wrap_key_data", "clone"]


def _dt(dtype, fname):
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"fnad.random.{fname}: dtype must be a floating type, got {dtype}.")
    return dtype


def _param(v, dtype):
    """A distribution parameter in the draw's dtype (a tracer stays traced)."""
    if isinstance(v, Tracer):
        return v.astype(dtype) if v.dtype != dtype else v
    return fnp.asarray(v, dtype)


def _shape_of(shape, fname, *params):
    """`shape`, or the broadcast shape of the parameters when None."""
    if shape is None:
        return np.broadcast_shapes(*(tuple(np.shape(p)) for p in params))
    return shape_tuple(shape, fname)


# ----------------------------------------------------------------------------- keys

def key_data(keys):
    """The raw uint32 words of a key or an array of keys (fnad's keys are those words).

    Example:
      fnad.random.key_data(fnad.random.key(0))     # [0, 0]
    """
    if not hasattr(keys, "dtype") or keys.dtype != np.uint32 or keys.shape[-1:] != (2,):
        raise TypeError("fnad.random.key_data: keys must be uint32 arrays of shape (..., 2) "
                        f"(fnad's keys); got {getattr(keys, 'dtype', type(keys).__name__)} of "
                        f"shape {getattr(keys, 'shape', ())}.")
    return keys


def wrap_key_data(key_bits_array, *, impl=None):
    """Keys from raw uint32 words of shape (..., 2) (threefry2x32, fnad's only kind).

    Example:
      key = fnad.random.wrap_key_data(np.array([0, 42], np.uint32))
    """
    if impl not in (None, "threefry2x32"):
        raise ValueError(f"fnad.random.wrap_key_data: impl {impl!r} is not supported; fnad's "
                         "keys are threefry2x32 (impl=None).")
    return key_data(key_bits_array)


def clone(key):
    """The key itself (JAX's `clone`: fnad's keys are plain arrays, never consumed)."""
    return check_key(key, "clone")


# ----------------------------------------------------------------------------- from uniforms

def exponential(key, shape=(), dtype=np.float32):
    """Exponential(1) floats: -log1p(-u).

    Example:
      e = fnad.random.exponential(key, (3,))
    """
    u = uniform(key, shape, _dt(dtype, "exponential"))
    return -fnp.log1p(-u)


def laplace(key, shape=(), dtype=np.float32):
    """Laplace(0, 1) floats: sign(u) log1p(-|u|) for u uniform in (-1, 1)."""
    dtype = _dt(dtype, "laplace")
    u = uniform(key, shape, dtype, -1.0 + np.finfo(dtype).epsneg, 1.0)
    return fnp.sign(u) * fnp.log1p(-fnp.abs(u))


def logistic(key, shape=(), dtype=np.float32):
    """Logistic(0, 1) floats: log(u) - log1p(-u)."""
    dtype = _dt(dtype, "logistic")
    u = uniform(key, shape, dtype, np.finfo(dtype).tiny, 1.0)
    return fnp.log(u) - fnp.log1p(-u)


def cauchy(key, shape=(), dtype=np.float32):
    """Standard Cauchy floats: tan(pi (u - 1/2))."""
    dtype = _dt(dtype, "cauchy")
    u = uniform(key, shape, dtype, np.finfo(dtype).eps, 1.0)
    return fnp.tan(dtype.type(np.pi) * (u - dtype.type(0.5)))


def rademacher(key, shape=(), dtype=np.int32):
    """-1 or +1 with equal probability.

    Example:
      s = fnad.random.rademacher(key, (4,))     # e.g. [1, -1, -1, 1]
    """
    b = bernoulli(key, 0.5, shape_tuple(shape, "rademacher")).astype(dtype)
    return (2 * b - 1).astype(dtype)


def pareto(key, b, shape=None, dtype=np.float32):
    """Pareto(b) floats: exp(e / b) for e exponential."""
    dtype = _dt(dtype, "pareto")
    b = _param(b, dtype)
    return fnp.exp(exponential(key, _shape_of(shape, "pareto", b), dtype) / b)


def lognormal(key, sigma=1.0, shape=None, dtype=np.float32):
    """exp(sigma N(0, 1))."""
    dtype = _dt(dtype, "lognormal")
    sigma = _param(sigma, dtype)
    return fnp.exp(normal(key, _shape_of(shape, "lognormal", sigma), dtype) * sigma)


def maxwell(key, shape=(), dtype=np.float32):
    """Maxwell floats: the norm of three standard normals."""
    n = normal(key, shape_tuple(shape, "maxwell") + (3,), _dt(dtype, "maxwell"))
    return fnp.linalg.norm(n, axis=-1)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=np.float32):
    """A Maxwell draw with a random sign, scaled and shifted."""
    dtype = _dt(dtype, "double_sided_maxwell")
    params = np.broadcast_shapes(np.shape(loc), np.shape(scale))
    shape = shape_tuple(shape, "double_sided_maxwell") or ()
    shape = shape + params
    k1, k2 = split(key)
    return rademacher(k2, shape, dtype) * maxwell(k1, shape, dtype) * scale + loc


def weibull_min(key, scale, concentration, shape=(), dtype=np.float32):
    """Weibull floats: (-log1p(-u))^(1/concentration) scale."""
    u = uniform(key, shape, _dt(dtype, "weibull_min"), 0.0, 1.0)
    return fnp.power(-fnp.log1p(-u), 1.0 / concentration) * scale


def rayleigh(key, scale, shape=None, dtype=np.float32):
    """Rayleigh floats: scale sqrt(-2 log u)."""
    dtype = _dt(dtype, "rayleigh")
    scale = _param(scale, dtype)
    shape = _shape_of(shape, "rayleigh", scale)
    u = uniform(key, shape, dtype)
    return fnp.broadcast_to(scale, shape) * fnp.sqrt(fnp.log(u) * dtype.type(-2))


def wald(key, mean, shape=None, dtype=np.float32):
    """Wald (inverse Gaussian) floats of the given mean (Michael, Schucany and Haas)."""
    dtype = _dt(dtype, "wald")
    mean = _param(mean, dtype)
    shape = _shape_of(shape, "wald", mean)
    k1, k2 = split(key)
    mean = fnp.broadcast_to(mean, shape)
    v, z = normal(k1, shape, dtype), uniform(k2, shape, dtype)
    y = v * v
    mean_sq = mean * mean
    x = mean + mean_sq * y / 2 - mean / 2 * fnp.sqrt(4 * mean * y + mean_sq * (y * y))
    return fnp.where(z <= mean / (mean + x), x, mean_sq / x)


def triangular(key, left, mode, right, shape=None, dtype=np.float32):
    """Triangular floats on [left, right] peaking at mode (inverse CDF)."""
    dtype = _dt(dtype, "triangular")
    left, mode, right = (_param(v, dtype) for v in (left, mode, right))
    shape = _shape_of(shape, "triangular", left, mode, right)
    left, mode, right = (fnp.broadcast_to(v, shape) for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = uniform(key, shape, dtype)
    out1 = left + fnp.sqrt(u * (right - left) * (mode - left))
    out2 = right - fnp.sqrt((1 - u) * (right - left) * (right - mode))
    return fnp.where(u < fc, out1, out2)


def geometric(key, p, shape=None, dtype=np.int32):
    """Geometric integers >= 1: trials up to the first success of probability p."""
    if isinstance(p, (int, float)):  # a Python number: float32, as JAX's weak types
        p = np.float32(p)
    p = fnp.asarray(p) if not isinstance(p, Tracer) else p
    pd = p.dtype if p.dtype.kind == "f" else np.dtype(np.float32)
    shape = _shape_of(shape, "geometric", p)
    u = uniform(key, shape, pd)
    u = fnp.where(u == 0, 1, u)
    g = fnp.floor(fnp.log(u) / fnp.broadcast_to(fnp.log1p(-p), shape)) + 1
    return g.astype(dtype)


# ----------------------------------------------------------------------------- from gammas

def t(key, df, shape=None, dtype=np.float32):
    """Student's t floats with `df` degrees of freedom: n sqrt((df/2) / g), g ~ Gamma(df/2).

    Example:
      x = fnad.random.t(key, 3.0, (1000,))
    """
    dtype = _dt(dtype, "t")
    df = _param(df, dtype)
    shape = _shape_of(shape, "t", df)
    key_n, key_g = split(key)
    n = normal(key_n, shape, dtype)
    half_df = df / 2
    return n * fnp.sqrt(half_df / gamma(key_g, half_df, shape, dtype))


def chisquare(key, df, shape=None, dtype=np.float32):
    """Chi-square floats with `df` degrees of freedom: 2 Gamma(df/2)."""
    dtype = _dt(dtype, "chisquare")
    df = _param(df, dtype)
    return fnp.exp(loggamma(key, df / 2, _shape_of(shape, "chisquare", df), dtype)) * 2


def f(key, dfnum, dfden, shape=None, dtype=np.float32):
    """F floats: (chi2(dfnum) / dfnum) / (chi2(dfden) / dfden)."""
    dtype = _dt(dtype, "f")
    dfnum, dfden = _param(dfnum, dtype), _param(dfden, dtype)
    shape = _shape_of(shape, "f", dfnum, dfden)
    key_dfd, key_dfn = split(key)
    num = chisquare(key_dfn, dfnum, shape, dtype) / dfnum
    return num / (chisquare(key_dfd, dfden, shape, dtype) / dfden)


def beta(key, a, b, shape=None, dtype=np.float32):
    """Beta(a, b) floats from two log-gamma draws (stable for small a, b); differentiable
    in a and b.

    Example:
      p = fnad.random.beta(key, 2.0, 5.0, (100,))
    """
    dtype = _dt(dtype, "beta")
    a, b = _param(a, dtype), _param(b, dtype)
    shape = _shape_of(shape, "beta", a, b)
    key_a, key_b = split(key)
    la = loggamma(key_a, fnp.broadcast_to(a, shape), shape, dtype)
    lb = loggamma(key_b, fnp.broadcast_to(b, shape), shape, dtype)
    top = fnp.maximum(la, lb)
    ga, gb = fnp.exp(la - top), fnp.exp(lb - top)
    return ga / (ga + gb)


def dirichlet(key, alpha, shape=None, dtype=np.float32):
    """Dirichlet(alpha) vectors along alpha's last axis (softmax of log-gamma draws).

    Args:
      alpha: concentrations, shape (..., k). shape: the batch shape (None: alpha's).

    Example:
      w = fnad.random.dirichlet(key, np.ones(3), (5,))      # (5, 3), rows sum to 1
    """
    dtype = _dt(dtype, "dirichlet")
    alpha = _param(alpha, dtype)
    if alpha.ndim < 1:
        raise ValueError("fnad.random.dirichlet: alpha needs at least one axis (the "
                         f"categories), got shape {tuple(alpha.shape)}.")
    shape = tuple(alpha.shape[:-1]) if shape is None else shape_tuple(shape, "dirichlet")
    lg = loggamma(key, alpha, shape + tuple(alpha.shape[-1:]), dtype)
    e = fnp.exp(lg - fnp.max(lg, axis=-1, keepdims=True))
    return e / fnp.sum(e, axis=-1, keepdims=True)


def generalized_normal(key, p, shape=(), dtype=np.float32):
    """Generalized normal floats of power p: sign * Gamma(1/p)^(1/p)."""
    dtype = _dt(dtype, "generalized_normal")
    k1, k2 = split(key)
    g = gamma(k1, 1 / p, shape, dtype)
    return rademacher(k2, shape, dtype) * g ** (1 / p)


def ball(key, d, p=2, shape=(), dtype=np.float32):
    """Points uniformly distributed in the unit p-norm ball of dimension d.

    Example:
      x = fnad.random.ball(key, 3, shape=(100,))     # (100, 3), norms <= 1
    """
    dtype = _dt(dtype, "ball")
    shape = shape_tuple(shape, "ball")
    k1, k2 = split(key)
    g = generalized_normal(k1, p, shape + (d,), dtype)
    e = exponential(k2, shape, dtype)
    return g / ((fnp.sum(fnp.abs(g) ** p, axis=-1) + e) ** (1 / p))[..., None]


# ----------------------------------------------------------------------------- linear algebra

def orthogonal(key, n, shape=(), dtype=np.float32, m=None):
    """Haar-random orthogonal (n, n) matrices, or (n, m) with orthonormal columns or rows.

    Example:
      q = fnad.random.orthogonal(key, 3)       # q @ q.T == I
    """
    dtype = _dt(dtype, "orthogonal")
    m = n if m is None else m
    z = normal(key, shape_tuple(shape, "orthogonal") + (max(n, m), min(n, m)), dtype)
    q, r = fnp.linalg.qr(z)
    d = fnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * fnp.expand_dims(fnp.sign(d), -2)
    return fnp.swapaxes(x, -1, -2) if n < m else x


def multivariate_normal(key, mean, cov, shape=None, dtype=np.float32, method="cholesky"):
    """Draws from N(mean, cov): mean + factor @ z, factor from cholesky, eigh or svd.

    Args:
      mean: (..., n). cov: (..., n, n). shape: batch shape (None: broadcast of the batches).
      method: "cholesky" (default), "eigh" or "svd" (for singular covariances).

    Example:
      x = fnad.random.multivariate_normal(key, np.zeros(2), np.eye(2), (100,))
    """
    dtype = _dt(dtype, "multivariate_normal")
    mean, cov = _param(mean, dtype), _param(cov, dtype)
    if mean.ndim < 1 or cov.ndim < 2 or tuple(cov.shape[-2:]) != (mean.shape[-1],) * 2:
        raise ValueError("fnad.random.multivariate_normal: mean must be (..., n) and cov "
                         f"(..., n, n); got {tuple(mean.shape)} and {tuple(cov.shape)}.")
    if method not in ("cholesky", "eigh", "svd"):
        raise ValueError(f"fnad.random.multivariate_normal: method {method!r} is not one of "
                         "'cholesky', 'eigh', 'svd'.")
    if shape is None:
        shape = np.broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    shape = shape_tuple(shape, "multivariate_normal")
    if method == "svd":
        u, s, _ = fnp.linalg.svd(cov)
        factor = u * fnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = fnp.linalg.eigh(cov)
        factor = v * fnp.sqrt(w[..., None, :])
    else:
        factor = fnp.linalg.cholesky(cov)
    z = normal(key, shape + tuple(mean.shape[-1:]), dtype)
    return mean + fnp.einsum("...ij,...j->...i", factor, z)
