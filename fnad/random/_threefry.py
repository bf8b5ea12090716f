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

import math
import operator

import numpy as np

from .._core.backend import array_module
from .._core.tracer import getval
from ._primitive import random_primitive

__all__ = ["threefry_2x32", "check_key", "PRNGKey", "key", "split", "fold_in", "shape_tuple",
           "random_bits", "bits", "MASK32"]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA
MASK32 = 0xFFFFFFFF


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
    k = check_key(key, "threefry_2x32")
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

def check_key(key, fname):
    """`key`, checked to be one key (a traced key is checked by its abstract value)."""
    if not hasattr(key, "dtype") or key.dtype != np.uint32 or tuple(key.shape) != (2,):
        what = (f"a {key.dtype} array of shape {tuple(key.shape)}" if hasattr(key, "dtype")
                else f"a {type(key).__name__}")
        raise TypeError(f"fnad.random.{fname}: key must be a uint32 array of shape (2,) made by "
                        f"fnad.random.PRNGKey, split or fold_in; got {what}. For several keys "
                        "from split(key, n), pass one row at a time: keys[i].")
    return key


@random_primitive
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
    return np.array([s >> 32, s & MASK32], dtype=np.uint32)


key = PRNGKey


@random_primitive
def split(key, num=2):
    """`num` new independent keys from `key`, as a uint32 array of shape (num, 2) (or
    (*num, 2) for a tuple `num`, as JAX).

    Example:
      key, subkey = fnad.random.split(key)
      keys = fnad.random.split(key, 8)      # keys[i] is a key
    """
    k = check_key(key, "split")
    shape = tuple(operator.index(n) for n in num) if isinstance(num, (tuple, list)) else (
        operator.index(num),)
    num = math.prod(shape)
    xp = array_module(k)
    return threefry_2x32(k, xp.arange(num * 2, dtype=xp.uint32)).reshape(*shape, 2)


@random_primitive
def fold_in(key, data):
    """A new key from `key` and an integer `data` (e.g. a step or layer number).

    Example:
      step_key = fnad.random.fold_in(key, step)
    """
    k = check_key(key, "fold_in")
    xp = array_module(k)
    d = int(getval(data)) & MASK32
    counter = xp.zeros(2, dtype=xp.uint32)  # [0, d], made on the key's device (no copy in)
    counter[1] = d
    return threefry_2x32(k, counter)


# ----------------------------------------------------------------------------- raw bits

def shape_tuple(shape, fname):
    if shape is None:
        return None
    if isinstance(shape, int) or hasattr(shape, "__index__"):
        return (operator.index(shape),)
    try:
        return tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"fnad.random.{fname}: shape must be a tuple of ints, got "
                        f"{shape!r}.") from None


def random_bits(k, bit_width, shape):
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


@random_primitive
def bits(key, shape=(), dtype=np.uint32):
    """Uniformly random unsigned integers (all bits random) of `dtype` (uint8 ... uint64).

    Example:
      b = fnad.random.bits(key, (4,))      # PRNGKey(0): [4146024105, 967050713, ...]
    """
    k = check_key(key, "bits")
    dtype = np.dtype(dtype)
    if dtype.kind != "u":
        raise TypeError(f"fnad.random.bits: dtype must be an unsigned integer type, got {dtype}.")
    return random_bits(k, dtype.itemsize * 8, shape_tuple(shape, "bits"))
