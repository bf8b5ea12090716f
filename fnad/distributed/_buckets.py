"""Buckets: the leaves of a tree grouped into a few contiguous buffers, so that a collective
over a model's gradients sends a handful of large messages instead of one per leaf.

Leaves are grouped by device and (for reductions) dtype, in tree order, and each group is
cut into buckets of at most `bucket_bytes` (a leaf larger than that is a bucket of its own,
sent without a copy). Raw-byte buckets (gathers, broadcasts) place each leaf at an offset
aligned to 16 bytes, so that the views taken out of them are aligned on any device.
"""

import numpy as np

from .._core.backend import array_module, is_cupy_array

__all__ = ["BUCKET_BYTES", "groups", "buckets", "aligned_offsets", "reduction_dtype"]

BUCKET_BYTES = 32 * 2**20  # 32 MiB: large enough to reach the link's bandwidth
_ALIGN = 16


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
