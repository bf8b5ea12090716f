"""Buckets: the leaves of a tree grouped into a few contiguous buffers, so that a collective
over a model's gradients sends a handful of large messages instead of one per leaf.

Leaves are grouped by device and (for reductions) dtype, in tree order, and each group is
cut into buckets of at most `bucket_bytes` (a leaf larger than that is a bucket of its own,
sent without a copy). Raw-byte buckets (gathers, broadcasts) place each leaf at an offset
aligned to 16 bytes, so that the views taken out of them are aligned on any device.

Receive buffers of NumPy collectives come from a small pool (`empty`): a buffer is handed
out again once no array uses it any more (nothing but the pool refers to it), so that a
training loop's collectives write into memory that is already mapped instead of paying
for fresh pages at every step (about a tenth of a 32 MiB allreduce on one machine).
"""

import sys

import numpy as np

from .._core.backend import array_module, is_cupy_array

__all__ = ["BUCKET_BYTES", "POOL_BYTES", "groups", "buckets", "aligned_offsets",
           "reduction_dtype", "empty"]

BUCKET_BYTES = 32 * 2**20  # 32 MiB: large enough to reach the link's bandwidth
POOL_BYTES = 256 * 2**20  # the most the pool of receive buffers keeps
_ALIGN = 16
_POOL = []  # flat uint8 NumPy buffers; one is free when only this list refers to it


def _free(buf):
    # referred to by the pool, the caller's loop variable, this argument and getrefcount's
    return sys.getrefcount(buf) <= 4


def empty(xp, shape, dtype):
    """An uninitialised array for a collective's result: from the pool for NumPy (a free
    buffer of the same size, else a new one that joins the pool while it has room)."""
    if xp is not np:
        return xp.empty(shape, dtype)
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < 2**16:  # small arrays: NumPy's own allocator is as good
        return np.empty(shape, dtype)
    for buf in _POOL:
        if buf.nbytes == nbytes and _free(buf):
            return buf.view(dtype).reshape(shape)
    buf = np.empty(nbytes, np.uint8)
    pooled = sum(b.nbytes for b in _POOL)
    if pooled + nbytes > POOL_BYTES:  # make room by dropping free buffers, oldest first
        for old in [b for b in _POOL if _free(b)]:
            if pooled + nbytes <= POOL_BYTES:
                break
            _POOL.remove(old)
            pooled -= old.nbytes
    if pooled + nbytes <= POOL_BYTES:
        _POOL.append(buf)
    return buf.view(dtype).reshape(shape)


def groups(leaves, by_dtype):
    """[(array module, dtype or None, [leaf positions])], in order of first appearance."""
    out = {}
    for i, x in enumerate(leaves):
        key = (is_cupy_array(x), x.dtype if by_dtype else None)
        if key not in out:
            out[key] = (array_module(x), key[1], [])
        out[key][2].append(i)
    return list(out.values())


def buckets(sizes, bucket_bytes):
    """Consecutive runs of the positions 0..len(sizes)-1 whose sizes (bytes) sum to at most
    `bucket_bytes`; a size above it makes a run of one."""
    out, run, total = [], [], 0
    for i, s in enumerate(sizes):
        if run and total + s > bucket_bytes:
            out.append(run)
            run, total = [], 0
        run.append(i)
        total += s
    if run:
        out.append(run)
    return out


def aligned_offsets(sizes):
    """(offset of each size in a buffer where every one starts at a multiple of 16, total)."""
    offsets, end = [], 0
    for s in sizes:
        offsets.append(end)
        end += -(-s // _ALIGN) * _ALIGN
    return offsets, end


def reduction_dtype(dtype):
    """The dtype a sum over processes runs in: float16 in float32 (MPI has no half type;
    the result is rounded back), everything else as it is."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype
