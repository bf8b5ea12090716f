"""Buckets: the leaves of a tree grouped into a few contiguous buffers, so that a collective
over a model's gradients sends a handful of large messages instead of one per leaf.

Leaves are grouped by device and (for reductions) dtype, in tree order, and each group is
cut into buckets of at most `bucket_bytes` (a leaf larger than that is a bucket of its own,
sent without a copy). Raw-byte buckets (gathers, broadcasts) place each leaf at an offset
aligned to 16 bytes, so that the views taken out of them are aligned on any device.
`bucketed` is the one loop every collective runs its leaves through.

Receive buffers of NumPy collectives come from a small pool (`empty`): a buffer is handed
out again once no array uses it any more (nothing but the pool refers to it), so that a
training loop's collectives write into memory that is already mapped instead of paying
for fresh pages at every step (about a tenth of a 32 MiB allreduce on one machine).
"""

import sys
from typing import Any, Callable

import numpy as np

from .._core.backend import array_module, is_device_array
from ._transport import Transport, transport_for

__all__ = ["BUCKET_BYTES", "POOL_BYTES", "groups", "buckets", "aligned_offsets",
           "reduction_dtype", "empty", "bucketed"]

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
        key = (is_device_array(x), x.dtype if by_dtype else None)
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


def aligned_offsets(sizes, align=_ALIGN):
    """(offset of each size in a buffer where every one starts at a multiple of `align`
    (16), total)."""
    offsets, end = [], 0
    for s in sizes:
        offsets.append(end)
        end += -(-s // align) * align
    return offsets, end


def reduction_dtype(dtype):
    """The dtype a sum over processes runs in: float16 in float32 (MPI has no half type;
    the result is rounded back), everything else as it is."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype


# ----------------------------------------------------------------------------- the loop

Move = Callable[[Transport, Any, Any], None]


def bucketed(w, xs, bucket_bytes, move: Move, *, reduce, split_axes=None, out_rows=1,
             reuse=False, fill=True):
    """Run one collective over the leaves `xs` in buckets; returns each leaf's result as a
    2-D array in its dtype: `out_rows` rows (None: as many as went out) of its values.

    A leaf goes out as rows: one, or (`split_axes`, a reduce-scatter's) one per process, its
    blocks along its axis. A bucket is its leaves' rows side by side in one buffer: in the
    reduction dtype for a sum (`reduce`: leaves grouped by dtype too), else raw bytes at
    16-byte aligned offsets; a leaf alone in its bucket goes out from its own memory.
    `move(t, send, recv)` moves one bucket through transport `t` into `recv`: a new buffer
    of `out_rows` rows; with `out_rows=None`, `send` itself (a broadcast); with `reuse`,
    `send` where it is a buffer of ours (a sum in place). `fill=False` (a broadcast's
    receivers) leaves the outgoing buckets unwritten.
    """
    in_rows = w.count if split_axes is not None else 1
    out = [None] * len(xs)
    for xp, dtype, idx in groups(xs, by_dtype=reduce):
        bdt = reduction_dtype(dtype) if reduce else np.dtype(np.uint8)
        units = [xs[i].size if reduce else xs[i].nbytes for i in idx]
        t = transport_for(w, xs[idx[0]])
        for run in buckets([u * bdt.itemsize for u in units], bucket_bytes):
            pos = [idx[k] for k in run]
            widths = [units[k] // in_rows for k in run]
            # a lone leaf goes as it is; raw bytes of several at aligned offsets
            offsets, total = aligned_offsets(widths, _ALIGN if len(run) > 1 and not reduce
                                             else 1)
            rows = [_rows(xs[i], i, in_rows, split_axes) for i in pos] if fill else None
            send, own = _outgoing(xp, rows, offsets, (in_rows, total), bdt, reduce)
            recv = send if out_rows is None or (reuse and own) else empty(
                xp, (out_rows, total), bdt)
            move(t, send, recv)
            for i, o, wd in zip(pos, offsets, widths):
                piece = recv[:, o:o + wd]
                out[i] = (piece.astype(xs[i].dtype, copy=False) if reduce
                          else xp.ascontiguousarray(piece).view(xs[i].dtype))
    return out


def _rows(x, i, in_rows, split_axes):
    """Leaf `x` (the i-th) as the rows it goes out as."""
    if split_axes is None:
        return x.reshape(1, x.size)
    return array_module(x).moveaxis(x, split_axes[i], 0).reshape(in_rows, x.size // in_rows)


def _outgoing(xp, rows, offsets, shape, bdt, reduce):
    """(the buffer a bucket goes out in, whether it is ours): a lone leaf's own memory where
    it can be, else a new buffer with the leaves' `rows` side by side (None: unwritten)."""
    if rows is not None and len(rows) == 1:
        r = rows[0]
        send = xp.asarray(r, dtype=bdt if reduce else None, order="C")
        return (send if reduce else send.view(np.uint8)), send is not r
    buf = empty(xp, shape, bdt)
    for r, o in zip(rows or (), offsets):
        r = r if reduce else xp.ascontiguousarray(r).view(np.uint8)
        buf[:, o:o + r.shape[1]] = r
    return buf, True
