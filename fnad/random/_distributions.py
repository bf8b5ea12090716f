"""Draws from distributions: uniform, normal, truncated normal, Bernoulli, Gumbel,
categorical, integers and permutations, each from a key (fnad/random/_threefry.py)."""

import math
import operator

import numpy as np

from .. import numpy as fnp
from .._core.backend import array_module
from .._core.tracer import Tracer, getval
from ._math import erf_any, erfinv, log
from ._primitive import random_primitive
from ._threefry import MASK32, check_key, random_bits, shape_tuple, split

__all__ = ["uniform", "normal", "truncated_normal", "bernoulli", "gumbel", "categorical",
           "randint", "permutation"]


# ----------------------------------------------------------------------------- float helpers

def _float_dtype(dtype, fname):
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"fnad.random.{fname}: dtype must be a floating type (float16, float32, "
                        f"float64), got {dtype}.")
    return dtype


@random_primitive
def _unit_floats(k, shape, dtype):
    """Floats in [0, 1) from the top mantissa-many random bits (exact, JAX's recipe)."""
    nbits = dtype.itemsize * 8
    utype = np.dtype(f"uint{nbits}")
    nmant = np.finfo(dtype).nmant
    b = random_bits(k, nbits, shape)
    one = np.array(1.0, dtype).view(utype)
    f = ((b >> utype.type(nbits - nmant)) | utype.type(one)).view(dtype)
    return f - dtype.type(1.0)


def _traced_bound(v, dtype):
    """A bound of `uniform` in the draw's dtype (a Python scalar stays weakly typed)."""
    if hasattr(v, "dtype") and v.dtype != dtype:
        return v.astype(dtype)
    return v


def _compute_dtype(dtype):
    return np.dtype(np.float32) if dtype.itemsize < 4 else dtype


def _plain(v, xp, dtype):
    """A bound or probability as a NumPy scalar (scalars, 0-d NumPy arrays) or an `xp` array."""
    v = getval(v)
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v[()]
    if hasattr(v, "dtype") and not isinstance(v, np.generic):
        return v.astype(dtype, copy=False)
    return dtype.type(v)



# ----------------------------------------------------------------------------- distributions

def uniform(key, shape=(), dtype=np.float32, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval).

    Args:
      key: a key. shape: the output shape. dtype: a float dtype (float32 as in JAX).
      minval, maxval: bounds broadcastable to `shape`; may be traced (the result is
        differentiable in them).

    Example:
      u = fnad.random.uniform(key, (2, 3), minval=-1.0, maxval=1.0)
    """
    k = check_key(key, "uniform")
    dtype = _float_dtype(dtype, "uniform")
    shape = shape_tuple(shape, "uniform")
    f = _unit_floats(k, shape, dtype)
    if any(isinstance(v, Tracer) for v in (f, minval, maxval)):  # staged, batched or traced
        lo, hi = _traced_bound(minval, dtype), _traced_bound(maxval, dtype)
        out = fnp.maximum(lo, f * (hi - lo) + lo)
        return out if tuple(out.shape) == shape else fnp.broadcast_to(out, shape)
    xp = array_module(k, minval, maxval)
    lo, hi = _plain(minval, xp, dtype), _plain(maxval, xp, dtype)
    out = xp.maximum(lo, f * (hi - lo) + lo)
    return xp.broadcast_to(out, shape) if out.shape != shape else out


@random_primitive
def normal(key, shape=(), dtype=np.float32):
    """Standard normal floats: sqrt(2) * erfinv(u) for u uniform in (-1, 1), as in JAX.

    Example:
      w = 0.02 * fnad.random.normal(key, (784, 256))
    """
    k = check_key(key, "normal")
    dtype = _float_dtype(dtype, "normal")
    shape = shape_tuple(shape, "normal")
    xp = array_module(k)
    cd = _compute_dtype(dtype)
    lo = np.nextafter(cd.type(-1.0), cd.type(0.0))
    u = uniform(k, shape, cd, lo, 1.0)
    return (cd.type(math.sqrt(2)) * erfinv(xp, u)).astype(dtype, copy=False)


@random_primitive
def truncated_normal(key, lower, upper, shape=None, dtype=np.float32):
    """Standard normal floats conditioned on lower < x < upper (JAX's inverse-CDF method).

    Args:
      lower, upper: bounds (scalars or arrays broadcastable to `shape`; may be infinite).
      shape: the output shape; None means the broadcast shape of the bounds.

    Example:
      w = fnad.random.truncated_normal(key, -2.0, 2.0, (256, 256))
    """
    k = check_key(key, "truncated_normal")
    dtype = _float_dtype(dtype, "truncated_normal")
    xp = array_module(k, lower, upper)
    cd = _compute_dtype(dtype)
    lo, hi = _plain(lower, xp, cd), _plain(upper, xp, cd)
    if shape is None:
        shape = np.broadcast_shapes(np.shape(lo), np.shape(hi))
    shape = shape_tuple(shape, "truncated_normal")
    sqrt2 = cd.type(math.sqrt(2))
    a, b = erf_any(xp, lo / sqrt2), erf_any(xp, hi / sqrt2)
    u = uniform(k, shape, cd, a, b)
    out = sqrt2 * erfinv(xp, u)
    lo_in = (np if isinstance(lo, np.generic) else xp).nextafter(lo, cd.type(np.inf))
    hi_in = (np if isinstance(hi, np.generic) else xp).nextafter(hi, cd.type(-np.inf))
    out = xp.minimum(xp.maximum(out, lo_in), hi_in)
    return out.astype(dtype, copy=False)


@random_primitive
def bernoulli(key, p=0.5, shape=None):
    """Random booleans, True with probability `p`.

    Args:
      p: a probability or an array of them (broadcastable to `shape`).
      shape: the output shape; None means p's shape.

    Example:
      keep = fnad.random.bernoulli(key, 0.9, x.shape)      # dropout mask
    """
    k = check_key(key, "bernoulli")
    p = getval(p)
    xp = array_module(k, p)
    dtype = p.dtype if hasattr(p, "dtype") and p.dtype.kind == "f" else np.dtype(np.float32)
    shape = np.shape(p) if shape is None else shape_tuple(shape, "bernoulli")
    return uniform(k, shape, dtype) < _plain(p, xp, dtype)


@random_primitive
def gumbel(key, shape=(), dtype=np.float32):
    """Standard Gumbel floats: -log(-log(u)) for u uniform in [tiny, 1)."""
    k = check_key(key, "gumbel")
    dtype = _float_dtype(dtype, "gumbel")
    xp = array_module(k)
    cd = _compute_dtype(dtype)
    u = uniform(k, shape_tuple(shape, "gumbel"), cd, np.finfo(cd).tiny, 1.0)
    return (-log(xp, -log(xp, u))).astype(dtype, copy=False)


@random_primitive
def categorical(key, logits, axis=-1, shape=None):
    """Sample indices along `axis` with probabilities softmax(logits) (Gumbel-max, as JAX).

    Args:
      logits: unnormalised log-probabilities; the other axes are batch axes.
      axis: the category axis.
      shape: the output shape; None means logits' shape without `axis`. Otherwise it
        must end with that batch shape; leading axes draw independent samples.

    Example:
      tokens = fnad.random.categorical(key, logits)          # logits: (batch, vocab)
    """
    k = check_key(key, "categorical")
    lg = getval(logits)
    xp = array_module(k, lg)
    lg = xp.asarray(lg)
    if lg.dtype.kind != "f":
        lg = lg.astype(np.float32)
    axis = axis % lg.ndim if lg.ndim else 0
    batch = lg.shape[:axis] + lg.shape[axis + 1:]
    shape = batch if shape is None else shape_tuple(shape, "categorical")
    if shape[len(shape) - len(batch):] != batch:
        raise ValueError(f"fnad.random.categorical: shape {shape} must end with the logits' "
                         f"batch shape {batch} (logits shape {lg.shape}, axis {axis}).")
    prefix = shape[:len(shape) - len(batch)]
    full = prefix + lg.shape
    g = gumbel(k, full, lg.dtype)
    return xp.argmax(g + lg, axis=len(prefix) + axis)


@random_primitive
def randint(key, shape, minval, maxval, dtype=np.int32):
    """Uniform integers in [minval, maxval).

    Bounds are clipped to the dtype's range (maxval may be one past its maximum); where
    maxval <= minval the result is minval. Each number comes from 64 random bits
    reduced modulo the span (bias below 2**-32 for spans under 2**32).

    Example:
      idx = fnad.random.randint(key, (32,), 0, n_examples)
    """
    k = check_key(key, "randint")
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        raise TypeError(f"fnad.random.randint: dtype must be an integer type, got {dtype}.")
    shape = shape_tuple(shape, "randint")
    info = np.iinfo(dtype)
    minval, maxval = getval(minval), getval(maxval)
    xp = array_module(k, minval, maxval)
    bits = random_bits(k, 64, shape)
    if np.ndim(minval) == 0 and np.ndim(maxval) == 0 and not (
            hasattr(minval, "device") or hasattr(maxval, "device")):
        lo = min(max(int(minval), info.min), info.max)
        hi = min(max(int(maxval), info.min), info.max + 1)
        span, base = max(hi - lo, 1), np.uint64(lo % 2**64)
        offset = bits if span == 2**64 else bits % np.uint64(span)  # 2**64: every bit pattern
        return (base + offset).astype(dtype)
    wide = np.uint64 if dtype == np.uint64 else np.int64
    lo = xp.clip(xp.asarray(minval).astype(wide), info.min, info.max)
    hi = xp.asarray(maxval)
    past = hi > info.max  # maxval one past the dtype's maximum (only 64-bit dtypes overflow)
    hi = xp.where(past, info.max, xp.clip(hi.astype(wide), info.min, info.max))
    span = hi.astype(np.uint64) - lo.astype(np.uint64) + past.astype(np.uint64)  # mod 2**64
    span = xp.where((hi <= lo) & ~past, np.uint64(1), span)
    full = span == 0  # the whole 64-bit range: 2**64 wrapped to 0
    offset = xp.where(full, bits, bits % xp.where(full, np.uint64(1), span))
    base = lo.astype(np.uint64)
    return (base + offset).astype(dtype)


def permutation(key, x, axis=0, independent=False):
    """A random permutation of `x` along `axis`, or of `arange(x)` for an integer `x`.

    Args:
      x: an int n (permute range(n)) or an array.
      axis: the axis to shuffle.
      independent: if True, each slice along `axis` is shuffled independently.

    Example:
      order = fnad.random.permutation(key, n_examples)
    """
    k = check_key(key, "permutation")
    xp = array_module(k)
    if not hasattr(x, "shape") and not isinstance(x, Tracer):
        n = operator.index(x)
        return _shuffle(k, xp.arange(n), 0)
    nd = len(x.shape)
    if nd == 0:
        raise TypeError("fnad.random.permutation: x must be an int or an array with at least "
                        "one axis, got a 0-d array; pass int(x) to permute range(x).")
    axis = axis % nd
    if independent or nd == 1:
        order = _shuffle(k, xp.broadcast_to(_iota_along(xp, x.shape, axis), x.shape), axis)
        return fnp.take_along_axis(x, order, axis=axis)
    order = _shuffle(k, xp.arange(x.shape[axis]), 0)
    return fnp.take(x, order, axis=axis)


def _iota_along(xp, shape, axis):
    view = [1] * len(shape)
    view[axis] = shape[axis]
    return xp.arange(shape[axis]).reshape(view)


@random_primitive
def _shuffle(k, x, axis):
    """JAX's shuffle: sort by random 32-bit keys, ceil(3 ln n / ln(2**32 - 1)) rounds.

    Ties are broken by position (the 32-bit key is the high half of a 64-bit sort key), so
    every backend's sort gives the same order as a stable sort.
    """
    xp = array_module(k)
    rounds = int(math.ceil(3 * math.log(max(1, x.size)) / math.log(MASK32)))
    pos = xp.broadcast_to(_iota_along(xp, x.shape, axis), x.shape).astype(xp.uint64)
    for _ in range(rounds):
        k, sub = split(k)
        sort_keys = (random_bits(sub, 32, x.shape).astype(xp.uint64) << xp.uint64(32)) | pos
        x = xp.take_along_axis(x, xp.argsort(sort_keys, axis=axis), axis=axis)
    return x
