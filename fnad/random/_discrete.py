"""`choice` and `poisson` with JAX's recipes (`jax_threefry_partitionable=False`): choice by
randint, permutation, an inverse CDF or Gumbel top-k; Poisson by Knuth's product of
uniforms below rate 10 and by transformed rejection (Hormann) above."""

import math
import operator

import numpy as np

from .. import numpy as fnp
from .._core.backend import array_module
from .._core.tracer import getval
from ._distributions import gumbel, permutation, randint, uniform
from ._primitive import random_primitive
from ._threefry import check_key, shape_tuple, split

__all__ = ["choice", "poisson"]


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Random entries of `a` (or of range(a) for an int) along `axis`.

    Args:
      a: an int n or an array. shape: the draws' shape. replace: draw with replacement.
      p: probabilities of each of the n entries (None: uniform).

    Example:
      idx = fnad.random.choice(key, 10, (3,), replace=False)
      x = fnad.random.choice(key, np.array([1.0, 2.0]), (5,), p=np.array([0.9, 0.1]))
    """
    k = check_key(key, "choice")
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"fnad.random.choice: shape must be a sequence, got {shape!r} (write "
                        f"({shape},) for a 1-d draw).")
    shape = tuple(shape)
    scalar = not hasattr(a, "shape") or len(a.shape) == 0
    if scalar:
        n = operator.index(getval(a)) if not isinstance(getval(a), np.ndarray) else int(a)
    else:
        axis = axis % len(a.shape)
        n = a.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return fnp.zeros(shape, np.int32 if scalar else a.dtype)
    if n <= 0:
        raise ValueError("fnad.random.choice: a must be greater than 0 unless no samples are "
                         "taken.")
    if not replace and n_draws > n:
        raise ValueError(f"fnad.random.choice: cannot take {n_draws} samples from a "
                         f"population of {n} with replace=False.")
    if p is None:
        if replace:
            ind = randint(k, shape, 0, n)
        else:
            ind = permutation(k, n)[:n_draws].astype(np.int32)
    else:
        p = fnp.asarray(getval(p))
        p = p if p.dtype.kind == "f" else p.astype(np.float32)
        if tuple(p.shape) != (n,):
            raise ValueError(f"fnad.random.choice: p must be a 1-d vector of size "
                             f"{n} (a's length along axis), got shape {tuple(p.shape)}.")
        if replace:
            cum = fnp.cumsum(p)
            r = cum[-1] * (1 - uniform(k, shape, cum.dtype))
            ind = fnp.searchsorted(cum, r).astype(np.int32)
        else:
            g = gumbel(k, (n,), p.dtype) + fnp.log(p)
            ind = fnp.argsort(-g, stable=True)[:n_draws].astype(np.int32)
    if scalar:
        return fnp.reshape(ind, shape)
    out = fnp.take(a, fnp.reshape(ind, (-1,)), axis=axis)
    return fnp.reshape(out, tuple(a.shape[:axis]) + shape + tuple(a.shape[axis + 1:]))


def _lgamma(x):
    """log|Gamma(x)| on the host; +inf at x <= 0 (those counts are rejected anyway)."""
    x = x.astype(np.float64)
    ok = x > 0
    out = np.frompyfunc(math.lgamma, 1, 1)(np.where(ok, x, 1.0)).astype(np.float64)
    return np.where(ok | np.isnan(x), out, np.inf)


def _knuth(k, lam, shape):
    xp = array_module(lam)
    count = xp.zeros(shape, np.int64)
    log_prod = xp.zeros(shape, np.float32)
    while (log_prod > -lam).any():
        k, sub = split(k)
        count = xp.where(log_prod > -lam, count + 1, count)
        log_prod = log_prod + xp.log(uniform(sub, shape, np.float32))
    return count - 1


def _rejection(k, lam, shape):
    xp = array_module(lam)
    log_lam = xp.log(lam)
    b = np.float32(0.931) + np.float32(2.53) * xp.sqrt(lam)
    a = np.float32(-0.059) + np.float32(0.02483) * b
    inv_alpha = np.float32(1.1239) + np.float32(1.1328) / (b - np.float32(3.4))
    v_r = np.float32(0.9277) - np.float32(3.6224) / (b - np.float32(2))
    out = xp.full(shape, -1.0, np.float32)
    accepted = xp.zeros(shape, bool)
    while not accepted.all():
        k, k0, k1 = split(k, 3)
        u = uniform(k0, shape, np.float32) - np.float32(0.5)
        v = uniform(k1, shape, np.float32)
        us = np.float32(0.5) - xp.abs(u)
        kk = xp.floor((2 * a / us + b) * u + lam + np.float32(0.43))
        with np.errstate(divide="ignore", invalid="ignore"):
            s = xp.log(v * inv_alpha / (a / (us * us) + b))
            lg = xp.asarray(_lgamma(np.asarray(getattr(kk, "get", lambda: kk)()) + 1))
            t = -lam + kk * log_lam - lg.astype(np.float32)
        accept1 = (us >= np.float32(0.07)) & (v <= v_r)
        reject = (kk < 0) | ((us < np.float32(0.013)) & (v > us))
        accept = accept1 | (~reject & (s <= t))
        out = xp.where(accept, kk, out)
        accepted = accepted | accept
    return out


@random_primitive
def _poisson(key, lam, shape, dtype):
    xp = array_module(key, lam)
    lam = xp.broadcast_to(xp.asarray(lam, np.float32), shape)
    knuth = xp.isnan(lam) | (lam < 10)
    with np.errstate(invalid="ignore"):
        small = _knuth(key, xp.where(knuth, lam, np.float32(0)), shape)
        large = _rejection(key, xp.where(knuth, np.float32(1e5), lam), shape)
    out = xp.where(knuth, small, large)
    return xp.where(lam == 0, 0, out).astype(dtype)


def poisson(key, lam, shape=None, dtype=np.int32):
    """Poisson(lam) integers.

    Args:
      lam: rates >= 0, broadcastable to `shape` (None: lam's shape). dtype: an integer type.

    Example:
      counts = fnad.random.poisson(key, 3.5, (1000,))
    """
    k = check_key(key, "poisson")
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        raise TypeError(f"fnad.random.poisson: dtype must be an integer type, got {dtype}.")
    shape = tuple(np.shape(lam)) if shape is None else shape_tuple(shape, "poisson")
    return _poisson(k, lam, shape, dtype)

