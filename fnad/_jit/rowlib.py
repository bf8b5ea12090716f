"""numba helpers the row kernels of fnad/_jit/rows.py call (imported by their generated
modules, so numba is imported only when a row kernel is built).

- `pairwise(a, lo, n)`: NumPy's pairwise float sum of `a[lo:lo+n]` (numpy's
  `pairwise_sum`, loops_utils.h.src: below 8 values a plain loop; up to 128 (its block),
  8 accumulators over strides of 8 added as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), the rest
  one by one; above, the halves split at n/2 rounded down to a multiple of 8). NumPy's
  `add.reduce` adds that to its initial +0.0, as the kernels do (`0.0 + pairwise(...)`).
- `rowmax(a, n)` / `rowmin(a, n)`: the extremum as NumPy's maximum/minimum give it where
  the order of comparison cannot matter, and whether it might (a NaN, or a zero extremum
  with zeros of both signs in the row): the kernel then hands the group to NumPy.
- `flip32(x, m)` / `flip64(x, m)`: -x as a sign-bit xor with a mask passed at run time,
  which LLVM can neither see as a negation nor move (docs/jit.md, NaN sign bits).
"""

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["pairwise", "rowmax", "rowmin", "flip32", "flip64"]


_TWIN = {types.float32: types.int32, types.int32: types.float32,
         types.float64: types.int64, types.int64: types.float64}


@intrinsic
def _bitcast(typingctx, x):
    """A float's bits as the int of its width, or an int's as the float."""
    twin = _TWIN.get(x)
    if twin is None:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], context.get_value_type(twin))
    return twin(x), codegen


_OPTS = {"cache": True, "error_model": "numpy", "nogil": True}


@njit(**_OPTS)
def flip32(x, m):
    return _bitcast(np.int32(_bitcast(x) ^ m))


@njit(**_OPTS)
def flip64(x, m):
    return _bitcast(_bitcast(x) ^ m)


@njit(**_OPTS)
def _block(a, lo, n):
    """NumPy's sum of at most 128 values."""
    if n < 8:
        res = a[lo]
        for i in range(lo + 1, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    m = n - n % 8
    for i in range(lo + 8, lo + m, 8):
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(lo + m, lo + n):
        res += a[i]
    return res


@njit(**_OPTS)
def pairwise(a, lo, n):
    """NumPy's pairwise sum of a[lo:lo+n] (n >= 1). The halving recursion runs on an
    explicit stack: numba's disk cache cannot reload a recursive function."""
    if n <= 128:
        return _block(a, lo, n)
    los = np.empty(64, np.int64)
    ns = np.empty(64, np.int64)
    left = np.empty(64, a.dtype)
    done = np.zeros(64, np.bool_)  # whether a node's left half is summed
    top = 0
    los[0], ns[0] = lo, n
    while True:
        m = ns[top]
        if m > 128:  # descend into the left half
            h = m // 2
            h -= h % 8
            done[top] = False
            los[top + 1], ns[top + 1] = los[top], h
            top += 1
            continue
        v = _block(a, los[top], m)
        while True:  # hand v up: to a parent waiting for its right half, or finish
            top -= 1
            if top < 0:
                return v
            if done[top]:
                v = left[top] + v
                continue
            left[top] = v
            done[top] = True
            h = ns[top] // 2
            h -= h % 8
            los[top + 1], ns[top + 1] = los[top] + h, ns[top] - h
            top += 1
            break


@njit(**_OPTS)
def _mixed_zeros(a, n):
    pos = neg = False
    for i in range(n):
        if a[i] == 0:
            if _bitcast(a[i]) < 0:
                neg = True
            else:
                pos = True
    return pos and neg


@njit(**_OPTS)
def rowmax(a, n):
    """(max, ambiguous)"""
    m = a[0]
    for i in range(1, n):
        v = a[i]
        m = v if v > m else m
    nan = False
    for i in range(n):
        nan |= a[i] != a[i]
    return m, nan or (m == 0 and _mixed_zeros(a, n))


@njit(**_OPTS)
def rowmin(a, n):
    """(min, ambiguous)"""
    m = a[0]
    for i in range(1, n):
        v = a[i]
        m = v if v < m else m
    nan = False
    for i in range(n):
        nan |= a[i] != a[i]
    return m, nan or (m == 0 and _mixed_zeros(a, n))
