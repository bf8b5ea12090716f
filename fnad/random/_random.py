"""Counter-based pseudo-random numbers with JAX's semantics (threefry2x32).

A key is a uint32 array of shape (2,). Functions never change a key: the same key
always gives the same numbers, and `split` / `fold_in` derive new, independent keys.
The generator is JAX's original (non-"partitionable") threefry scheme, so keys and raw
bits equal `jax.random`'s with `jax_threefry_partitionable=False`; e.g.
`split(PRNGKey(0))` is [[4146024105, 967050713], [2718843009, 1272950319]].

Everything is written in array operations on the key's backend (`xp` is NumPy or CuPy),
so a key on the GPU gives numbers on the GPU. The operations are integer arithmetic
and IEEE-754 correctly rounded float arithmetic only (+, -, *, /, sqrt, frexp): the
logarithm and exponential needed by `normal`, `truncated_normal` and `categorical` are
computed here from those, not taken from the platform's math library, so the same key
gives bit-identical numbers on CPU and GPU.
"""

import functools
import inspect
import math
import operator

import numpy as np

from .._core.abstract import is_aval
from .._core.backend import array_module
from .._batching.trace import BatchTracer
from .._batching.trace import stack as batch_stack
from .._core.tracer import Primitive, Tracer, bind_traced, getval

__all__ = ["PRNGKey", "key", "split", "fold_in", "bits", "uniform", "normal", "bernoulli",
           "categorical", "randint", "permutation", "truncated_normal", "gumbel",
           "threefry_2x32"]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA
_MASK32 = 0xFFFFFFFF


# ----------------------------------------------------------------------------- staging
# Inside jit a key (or a seed, or fold_in's data) is staged: it has no values. Each function
# that consumes one is then a primitive of its own, without derivative, which runs the
# function itself on the concrete values when the staged program runs (so the numbers are
# the same bit for bit); its abstract evaluation runs it on zeros of the inputs' shapes.


def _zeros_like_aval(a):
    if not is_aval(a):
        return a
    if a.weak_type and a.shape == ():
        return {"b": False, "i": 0, "u": 0}.get(a.dtype.kind, 0.0)
    return np.zeros(a.shape, a.dtype)


def _stageable(fun):
    sig = inspect.signature(fun)
    prim = Primitive(f"random_{fun.__name__.strip('_')}", fun, nondiff=True)

    def abstract(*args):
        from .._core.abstract import _as_avals  # noqa: PLC0415
        return _as_avals(fun(*[_zeros_like_aval(a) for a in args]), np)

    prim.abstract_eval = abstract

    @functools.wraps(fun)
    def staged_or_not(*args, **kwargs):
        for a in args + tuple(kwargs.values()):
            if isinstance(a, Tracer) and isinstance(getval(a), Tracer):
                return bind_traced(prim, sig.bind(*args, **kwargs).args, {})
        return fun(*args, **kwargs)

    staged_or_not.primitive = prim
    return staged_or_not


# ----------------------------------------------------------------------------- the hash

def _rotl(xp, v, r):
    return (v << xp.uint32(r)) | (v >> xp.uint32(32 - r))


def _threefry_words(xp, k0, k1, x0, x1):
    """Threefry-2x32 with 20 rounds on uint32 arrays `x0`, `x1` under key words k0, k1."""
    ks = (k0, k1, k0 ^ k1 ^ xp.uint32(_PARITY))
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = _rotl(xp, x1, r) ^ x0
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + xp.uint32(i + 1)
    return x0, x1


def threefry_2x32(key, count):
    """Hash the uint32 array `count` under `key` (JAX's `threefry_2x32`).

    The flattened count is cut into two halves (padded with a zero when its size is
    odd), the halves are hashed pairwise, and the result is put back in count's shape.
    """
    k = _check_key(key, "threefry_2x32")
    xp = array_module(k)
    count = xp.asarray(count, dtype=xp.uint32)
    flat = count.reshape(-1)
    odd = flat.size % 2
    if odd:
        flat = xp.concatenate([flat, xp.zeros(1, xp.uint32)])
    half = flat.size // 2
    y0, y1 = _threefry_words(xp, k[0:1], k[1:2], flat[:half], flat[half:])
    out = xp.concatenate([y0, y1])
    return (out[:-1] if odd else out).reshape(count.shape)


# ----------------------------------------------------------------------------- keys

def _check_key(key, fname):
    if isinstance(key, Tracer):
        key = getval(key)
    if not hasattr(key, "dtype") or key.dtype != np.uint32 or tuple(key.shape) != (2,):
        what = (f"a {key.dtype} array of shape {tuple(key.shape)}" if hasattr(key, "dtype")
                else f"a {type(key).__name__}")
        raise TypeError(f"fnad.random.{fname}: key must be a uint32 array of shape (2,) made by "
                        f"fnad.random.PRNGKey, split or fold_in; got {what}. For several keys "
                        "from split(key, n), pass one row at a time: keys[i].")
    return key


@_stageable
def PRNGKey(seed):
    """A new key from an integer seed (JAX's `jax.random.PRNGKey`).

    Args:
      seed: a Python or NumPy integer; 64-bit seeds use both key words
        ([seed >> 32, seed & 0xFFFFFFFF]), so seeds in [0, 2**32) give [0, seed].

    Returns:
      A NumPy uint32 array of shape (2,); move it with `fnad.device_put(key, "gpu")`
      to draw on the GPU.

    Example:
      key = fnad.random.PRNGKey(0)
      x = fnad.random.normal(key, (3,))
    """
    s = getval(seed)
    if isinstance(s, (np.ndarray, np.generic)) or hasattr(s, "dtype"):
        if tuple(getattr(s, "shape", ())) != () or s.dtype.kind not in "iub":
            raise TypeError(f"fnad.random.PRNGKey: seed must be a scalar integer, got a "
                            f"{s.dtype} value of shape {tuple(getattr(s, 'shape', ()))}.")
        s = int(s)
    if isinstance(s, bool) or not isinstance(s, int):
        raise TypeError(f"fnad.random.PRNGKey: seed must be an integer, got "
                        f"{type(seed).__name__}.")
    if not -2**63 <= s < 2**64:
        raise ValueError(f"fnad.random.PRNGKey: seed {s} does not fit in 64 bits.")
    s &= 2**64 - 1
    return np.array([s >> 32, s & _MASK32], dtype=np.uint32)


key = PRNGKey


@_stageable
def split(key, num=2):
    """`num` new independent keys from `key`, as a uint32 array of shape (num, 2).

    Example:
      key, subkey = fnad.random.split(key)
      keys = fnad.random.split(key, 8)      # keys[i] is a key
    """
    k = _check_key(key, "split")
    num = operator.index(num)
    xp = array_module(k)
    return threefry_2x32(k, xp.arange(num * 2, dtype=xp.uint32)).reshape(num, 2)


@_stageable
def fold_in(key, data):
    """A new key from `key` and an integer `data` (e.g. a step or layer number).

    Example:
      step_key = fnad.random.fold_in(key, step)
    """
    k = _check_key(key, "fold_in")
    xp = array_module(k)
    d = int(getval(data)) & _MASK32
    return threefry_2x32(k, xp.asarray([0, d], dtype=xp.uint32))


# ----------------------------------------------------------------------------- raw bits

def _shape_tuple(shape, fname):
    if shape is None:
        return None
    if isinstance(shape, int) or hasattr(shape, "__index__"):
        return (operator.index(shape),)
    try:
        return tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"fnad.random.{fname}: shape must be a tuple of ints, got "
                        f"{shape!r}.") from None


def _random_bits(k, bit_width, shape):
    xp = array_module(k)
    size = math.prod(shape)
    if size >= 2**31:
        raise ValueError(f"fnad.random: cannot draw {size} numbers with one key; split the "
                         "key and draw in chunks of fewer than 2**31.")
    if bit_width == 64:
        b = threefry_2x32(k, xp.arange(2 * size, dtype=xp.uint32))
        hi, lo = b[:size].astype(xp.uint64), b[size:].astype(xp.uint64)
        return ((hi << xp.uint64(32)) | lo).reshape(shape)
    b = threefry_2x32(k, xp.arange(size, dtype=xp.uint32)).reshape(shape)
    if bit_width == 32:
        return b
    if bit_width == 16:
        return (b >> xp.uint32(16)).astype(xp.uint16)
    if bit_width == 8:
        return (b >> xp.uint32(24)).astype(xp.uint8)
    raise ValueError(f"fnad.random: bit width {bit_width} is not one of 8, 16, 32, 64.")


@_stageable
def bits(key, shape=(), dtype=np.uint32):
    """Uniformly random unsigned integers (all bits random) of `dtype` (uint8 ... uint64).

    Example:
      b = fnad.random.bits(key, (4,))      # PRNGKey(0): [4146024105, 967050713, ...]
    """
    k = _check_key(key, "bits")
    dtype = np.dtype(dtype)
    if dtype.kind != "u":
        raise TypeError(f"fnad.random.bits: dtype must be an unsigned integer type, got {dtype}.")
    return _random_bits(k, dtype.itemsize * 8, _shape_tuple(shape, "bits"))


# ----------------------------------------------------------------------------- float helpers

def _float_dtype(dtype, fname):
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"fnad.random.{fname}: dtype must be a floating type (float16, float32, "
                        f"float64), got {dtype}.")
    return dtype


@_stageable
def _unit_floats(k, shape, dtype):
    """Floats in [0, 1) from the top mantissa-many random bits (exact, JAX's recipe)."""
    nbits = dtype.itemsize * 8
    utype = np.dtype(f"uint{nbits}")
    nmant = np.finfo(dtype).nmant
    b = _random_bits(k, nbits, shape)
    one = np.array(1.0, dtype).view(utype)
    f = ((b >> utype.type(nbits - nmant)) | utype.type(one)).view(dtype)
    return f - dtype.type(1.0)


def _horner(x, coeffs, dtype):
    p = dtype.type(coeffs[0])
    for c in coeffs[1:]:
        p = p * x + dtype.type(c)
    return p


_LN2_HI, _LN2_LO = 0.693145751953125, 1.4286068203094173e-06  # hi has 16 significant bits


def _log(xp, x):
    """Natural log of positive finite `x` from frexp and +-*/ only (bit-reproducible)."""
    dtype = x.dtype
    m, e = xp.frexp(x)
    small = m < dtype.type(math.sqrt(0.5))
    m = xp.where(small, m * dtype.type(2), m)
    e = (e - small.astype(e.dtype)).astype(dtype)
    s = (m - dtype.type(1)) / (m + dtype.type(1))  # |s| <= 0.1716
    s2 = s * s
    nterms = 12 if dtype == np.float64 else 6
    poly = _horner(s2, [1.0 / (2 * j + 1) for j in range(nterms - 1, -1, -1)], dtype)
    return e * dtype.type(_LN2_HI) + (e * dtype.type(_LN2_LO) + dtype.type(2) * s * poly)


def _exp(xp, x):
    """exp(x) for finite `x` from rint, ldexp and +-*/ only (bit-reproducible)."""
    dtype = x.dtype
    lim = 700.0 if dtype == np.float64 else 87.0
    x = xp.clip(x, dtype.type(-lim), dtype.type(lim))
    kf = xp.rint(x * dtype.type(1 / math.log(2)))
    r = (x - kf * dtype.type(_LN2_HI)) - kf * dtype.type(_LN2_LO)  # |r| <= 0.35
    nterms = 14 if dtype == np.float64 else 8
    p = _horner(r, [1.0 / math.factorial(j) for j in range(nterms - 1, -1, -1)], dtype)
    return xp.ldexp(p, kf.astype(xp.int32))


# Single-precision erfinv coefficients from M. Giles, "Approximating the erfinv function"
# (GPU Computing Gems, 2011), the approximation XLA uses for float32.
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _erfinv(xp, x):
    """Inverse error function on [-1, 1] (relative error below 1e-6; +-inf at +-1)."""
    dtype = x.dtype
    t = (dtype.type(1) - x) * (dtype.type(1) + x)
    edge = t <= 0
    w = -_log(xp, xp.where(edge, dtype.type(1), t))
    central = _horner(w - dtype.type(2.5), _ERFINV_CENTRAL, dtype)
    tail = _horner(xp.sqrt(w) - dtype.type(3), _ERFINV_TAIL, dtype)
    p = xp.where(w < dtype.type(5), central, tail) * x
    return xp.where(edge, xp.copysign(dtype.type(np.inf), x), p)


# Numerical Recipes' erfc approximation (fractional error below 1.2e-7 everywhere):
# erfc(z) = t * exp(-z*z - 1.26551223 + t * P(t)) with t = 1 / (1 + z/2), z >= 0.
_ERFC = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
         0.09678418, 0.37409196, 1.00002368)


def _erf(xp, x):
    dtype = x.dtype
    z = xp.abs(x)
    t = dtype.type(1) / (dtype.type(1) + dtype.type(0.5) * z)
    erfc = t * _exp(xp, (-z * z + dtype.type(-1.26551223)) + t * _horner(t, _ERFC, dtype))
    return xp.copysign(dtype.type(1) - erfc, x)


def _erf_any(xp, v):
    """erf of a host scalar (computed with NumPy, stays a scalar) or of an `xp` array."""
    if isinstance(v, np.generic):
        return _erf(np, np.asarray(v))[()]
    return _erf(xp, v)


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
    k = _check_key(key, "uniform")
    dtype = _float_dtype(dtype, "uniform")
    shape = _shape_tuple(shape, "uniform")
    f = _unit_floats(k, shape, dtype)
    if isinstance(minval, Tracer) or isinstance(maxval, Tracer):
        from .. import numpy as fnp
        return fnp.maximum(minval, f * (maxval - minval) + minval)
    xp = array_module(k, minval, maxval)
    lo, hi = _plain(minval, xp, dtype), _plain(maxval, xp, dtype)
    out = xp.maximum(lo, f * (hi - lo) + lo)
    return xp.broadcast_to(out, shape) if out.shape != shape else out


@_stageable
def normal(key, shape=(), dtype=np.float32):
    """Standard normal floats: sqrt(2) * erfinv(u) for u uniform in (-1, 1), as in JAX.

    Example:
      w = 0.02 * fnad.random.normal(key, (784, 256))
    """
    k = _check_key(key, "normal")
    dtype = _float_dtype(dtype, "normal")
    shape = _shape_tuple(shape, "normal")
    xp = array_module(k)
    cd = _compute_dtype(dtype)
    lo = np.nextafter(cd.type(-1.0), cd.type(0.0))
    u = uniform(k, shape, cd, lo, 1.0)
    return (cd.type(math.sqrt(2)) * _erfinv(xp, u)).astype(dtype, copy=False)


@_stageable
def truncated_normal(key, lower, upper, shape=None, dtype=np.float32):
    """Standard normal floats conditioned on lower < x < upper (JAX's inverse-CDF method).

    Args:
      lower, upper: bounds (scalars or arrays broadcastable to `shape`; may be infinite).
      shape: the output shape; None means the broadcast shape of the bounds.

    Example:
      w = fnad.random.truncated_normal(key, -2.0, 2.0, (256, 256))
    """
    k = _check_key(key, "truncated_normal")
    dtype = _float_dtype(dtype, "truncated_normal")
    xp = array_module(k, lower, upper)
    cd = _compute_dtype(dtype)
    lo, hi = _plain(lower, xp, cd), _plain(upper, xp, cd)
    if shape is None:
        shape = np.broadcast_shapes(np.shape(lo), np.shape(hi))
    shape = _shape_tuple(shape, "truncated_normal")
    sqrt2 = cd.type(math.sqrt(2))
    a, b = _erf_any(xp, lo / sqrt2), _erf_any(xp, hi / sqrt2)
    u = uniform(k, shape, cd, a, b)
    out = sqrt2 * _erfinv(xp, u)
    lo_in = (np if isinstance(lo, np.generic) else xp).nextafter(lo, cd.type(np.inf))
    hi_in = (np if isinstance(hi, np.generic) else xp).nextafter(hi, cd.type(-np.inf))
    out = xp.minimum(xp.maximum(out, lo_in), hi_in)
    return out.astype(dtype, copy=False)


@_stageable
def bernoulli(key, p=0.5, shape=None):
    """Random booleans, True with probability `p`.

    Args:
      p: a probability or an array of them (broadcastable to `shape`).
      shape: the output shape; None means p's shape.

    Example:
      keep = fnad.random.bernoulli(key, 0.9, x.shape)      # dropout mask
    """
    k = _check_key(key, "bernoulli")
    p = getval(p)
    xp = array_module(k, p)
    dtype = p.dtype if hasattr(p, "dtype") and p.dtype.kind == "f" else np.dtype(np.float32)
    shape = np.shape(p) if shape is None else _shape_tuple(shape, "bernoulli")
    return uniform(k, shape, dtype) < _plain(p, xp, dtype)


@_stageable
def gumbel(key, shape=(), dtype=np.float32):
    """Standard Gumbel floats: -log(-log(u)) for u uniform in [tiny, 1)."""
    k = _check_key(key, "gumbel")
    dtype = _float_dtype(dtype, "gumbel")
    xp = array_module(k)
    cd = _compute_dtype(dtype)
    u = uniform(k, _shape_tuple(shape, "gumbel"), cd, np.finfo(cd).tiny, 1.0)
    return (-_log(xp, -_log(xp, u))).astype(dtype, copy=False)


@_stageable
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
    k = _check_key(key, "categorical")
    lg = getval(logits)
    xp = array_module(k, lg)
    lg = xp.asarray(lg)
    if lg.dtype.kind != "f":
        lg = lg.astype(np.float32)
    axis = axis % lg.ndim if lg.ndim else 0
    batch = lg.shape[:axis] + lg.shape[axis + 1:]
    shape = batch if shape is None else _shape_tuple(shape, "categorical")
    if shape[len(shape) - len(batch):] != batch:
        raise ValueError(f"fnad.random.categorical: shape {shape} must end with the logits' "
                         f"batch shape {batch} (logits shape {lg.shape}, axis {axis}).")
    prefix = shape[:len(shape) - len(batch)]
    full = prefix + lg.shape
    g = gumbel(k, full, lg.dtype)
    return xp.argmax(g + lg, axis=len(prefix) + axis)


@_stageable
def randint(key, shape, minval, maxval, dtype=np.int32):
    """Uniform integers in [minval, maxval).

    Bounds are clipped to the dtype's range (maxval may be one past its maximum); where
    maxval <= minval the result is minval. Each number comes from 64 random bits
    reduced modulo the span (bias below 2**-32 for spans under 2**32).

    Example:
      idx = fnad.random.randint(key, (32,), 0, n_examples)
    """
    k = _check_key(key, "randint")
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        raise TypeError(f"fnad.random.randint: dtype must be an integer type, got {dtype}.")
    shape = _shape_tuple(shape, "randint")
    info = np.iinfo(dtype)
    minval, maxval = getval(minval), getval(maxval)
    xp = array_module(k, minval, maxval)
    bits = _random_bits(k, 64, shape)
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
    k = _check_key(key, "permutation")
    xp = array_module(k)
    if not hasattr(x, "shape") and not isinstance(x, Tracer):
        n = operator.index(x)
        return _shuffle(k, xp.arange(n), 0)
    from .. import numpy as fnp
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


@_stageable
def _shuffle(k, x, axis):
    """JAX's shuffle: sort by random 32-bit keys, ceil(3 ln n / ln(2**32 - 1)) rounds.

    Ties are broken by position (the 32-bit key is the high half of a 64-bit sort key), so
    every backend's sort gives the same order as a stable sort.
    """
    xp = array_module(k)
    rounds = int(math.ceil(3 * math.log(max(1, x.size)) / math.log(_MASK32)))
    pos = xp.broadcast_to(_iota_along(xp, x.shape, axis), x.shape).astype(xp.uint64)
    for _ in range(rounds):
        k, sub = split(k)
        sort_keys = (_random_bits(sub, 32, x.shape).astype(xp.uint64) << xp.uint64(32)) | pos
        x = xp.take_along_axis(x, xp.argsort(sort_keys, axis=axis), axis=axis)
    return x


# ----------------------------------------------------------------------------- vmap

def _per_key(fn):
    """`fn` made to take a batch of keys under fnad.vmap: it runs once per key (with the
    matching slice of any other batched argument) and the draws are stacked, batched like
    the keys. Keys are small; the draws are what they are either way."""
    def batched(key, *args, **kwargs):
        if not isinstance(key, BatchTracer):
            return fn(key, *args, **kwargs)
        trace, n = key._trace, key._value.shape[key._bdim]

        def one(x, i):
            if isinstance(x, BatchTracer) and x._trace is trace:
                return x._value[(slice(None),) * x._bdim + (i,)]
            return x
        outs = [fn(one(key, i), *[one(a, i) for a in args],
                   **{k: one(v, i) for k, v in kwargs.items()}) for i in range(n)]
        return BatchTracer(batch_stack(outs), 0, trace)
    functools.update_wrapper(batched, fn)
    return batched


for _name in ("split", "fold_in", "bits", "uniform", "normal", "truncated_normal", "bernoulli",
              "gumbel", "categorical", "randint", "permutation"):
    globals()[_name] = _per_key(globals()[_name])
del _name
