"""Scatter-add, the transpose of every gather: `z[idx] += v` with repeated positions
accumulating (never last-write-wins).

Strategies (benchmarks/scatter.py measures them; docs/benchmarks.md has the numbers):
- indices known unique (slices, ints, one boolean mask): plain slice assignment;
- one integer array over the leading axis (embedding lookups, `take(w, ids, axis=0)`):
  sort the row ids once; rows hit once are written with one fancy-index assignment and
  only the repeated rows go through `ufunc.at`, when most rows are hit once;
- anything else: `add.at`; on a device it is the device module's own `add.at` (CuPy's
  atomic scatter kernel, CuPy >= 13), called directly: NumPy's dispatch of `np.add.at` to
  CuPy refuses an index tuple.
"""

import numpy as np

from .._core.backend import array_module

_SPLIT_MIN_ROWS = 1024  # below this the sort costs more than it saves


def is_basic(idx):
    """True when no index is an array (so every position is written at most once)."""
    return all(i is None or i is Ellipsis or isinstance(i, (int, np.integer, slice))
               for i in idx)


def is_unique(idx):
    """True when `idx` cannot name a position twice (basic indexing or one boolean mask)."""
    if is_basic(idx):
        return True
    arrays = [i for i in idx if hasattr(i, "dtype")]
    return len(arrays) == 1 and arrays[0].dtype == bool


def _leading_rows(idx):
    """The integer array when `idx` is (ints, [:, ...]) on the leading axis, else None."""
    first = idx[0] if idx else None
    if not isinstance(first, np.ndarray) or first.dtype.kind not in "iu" or first.ndim == 0:
        return None
    for i in idx[1:]:
        if not (i is Ellipsis or (isinstance(i, slice) and i == slice(None))):
            return None
    return first


def scatter_add(z, idx, v, fresh=False):
    """`z[idx] += v` in place, repeated positions accumulating. `z` must be writeable;
    `fresh=True` promises it holds zeros, so rows hit once are assigned, not added."""
    if is_unique(idx):
        z[idx] += v
        return z
    if not isinstance(z, np.ndarray):
        array_module(z).add.at(z, idx, v)
        return z
    rows = _leading_rows(idx)
    if (rows is None or type(z) is not np.ndarray or rows.size < _SPLIT_MIN_ROWS
            or not z.flags.c_contiguous):
        np.add.at(z, idx, v)
        return z
    n = z.shape[0]
    f = rows.ravel()
    if f.size and (f.min() < -n or f.max() >= n):
        raise IndexError(f"scatter_add: index out of bounds for axis 0 with size {n}.")
    f = np.where(f < 0, f + n, f)
    width = int(np.prod(z.shape[1:], dtype=np.int64))
    z2 = z.reshape(n, width)
    v2 = np.broadcast_to(v, rows.shape + z.shape[1:]).reshape(f.size, width)
    order = np.argsort(f, kind="stable")
    s = f[order]
    starts = np.flatnonzero(np.concatenate([[True], s[1:] != s[:-1]]))
    lens = np.diff(np.append(starts, f.size))
    single = lens == 1
    if 2 * int(single.sum()) < starts.size:  # mostly repeated ids
        if fresh:  # sums of sorted segments: 4-5x faster than add.at (rounding may differ)
            z2[s[starts]] = np.add.reduceat(v2[order], starts, axis=0)
        else:
            np.add.at(z2, f, v2)
        return z
    once = s[starts[single]]
    if fresh:
        z2[once] = v2[order[starts[single]]]
    else:
        z2[once] += v2[order[starts[single]]]
    dup = order[np.repeat(~single, lens)]
    if dup.size:
        np.add.at(z2, f[dup], v2[dup])
    return z
