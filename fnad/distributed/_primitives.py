"""The collectives as primitives: implementations, abstract evaluation, VJP and JVP rules in
JAX's SPMD sense, and batching rules.

Each primitive takes every leaf of a tree in one call (multiple results), so that one call
is one agreement and a few bucketed messages, and so that `jit` stages it as one equation.
Parameters: `layout` (the tree's structure and leaf paths, for error messages) and
`bucket_bytes`, plus `axes`/`tiled` or `root`.

Derivatives, with every process running the same program (SPMD): the function being
differentiated is the sum over processes of each process's output, so

- psum is linear and self-transposed: its VJP is psum of the cotangents;
- all_gather and psum_scatter are each other's transposes (a gather's VJP sums the
  cotangents over processes and keeps this process's slice: a reduce-scatter);
- broadcast's VJP is the psum of the cotangents, kept by the root (zero elsewhere).

Every JVP is the collective applied to the tangents (they are all linear). A batched leaf
(vmap) has its batch axis moved to the front and its axis shifted by one.
"""

import numpy as np

from .._core.backend import array_module
from .._core.rules import defabstract_eval, defbatch, defjvp_all, defvjp_all
from .._core.tracer import primitive
from .. import numpy as fnp
from ._agree import agree
from ._buckets import aligned_offsets, buckets, empty, groups, reduction_dtype
from ._transport import transport_for
from ._world import world

__all__ = ["psum_p", "all_gather_p", "psum_scatter_p", "broadcast_p", "gathered_shape",
           "scattered_shape"]


def _bytes(x):
    return x.reshape(-1).view(np.uint8)


def _count():
    return world().count


# ----------------------------------------------------------------------------- shapes

def gathered_shape(shape, axis, tiled, n):
    """The shape of all_gather's result for a leaf of `shape` over `n` processes."""
    if tiled:
        return shape[:axis] + (n * shape[axis],) + shape[axis + 1:]
    return shape[:axis] + (n,) + shape[axis:]


def scattered_shape(shape, axis, tiled, n):
    """The shape of psum_scatter's result for a leaf of `shape` over `n` processes."""
    if tiled:
        return shape[:axis] + (shape[axis] // n,) + shape[axis + 1:]
    return shape[:axis] + shape[axis + 1:]


def _place(xp, stacked, axis, tiled):
    """A gathered leaf from its copies stacked along a new first axis (process order)."""
    moved = stacked if axis == 0 else xp.moveaxis(stacked, 0, axis)
    if not tiled:
        return moved if axis == 0 else xp.ascontiguousarray(moved)
    shape = stacked.shape[1:]
    return moved.reshape(gathered_shape(shape, axis, True, stacked.shape[0]))


# ----------------------------------------------------------------------------- psum

def _psum_impl(*xs, layout, bucket_bytes):
    w = world()
    if w.local:
        return tuple(xs)
    agree(w, "psum", (), layout, xs)
    out = [None] * len(xs)
    for xp, dtype, idx in groups(xs, by_dtype=True):
        rdt = reduction_dtype(dtype)
        t = transport_for(w, xs[idx[0]])
        for run in buckets([xs[i].size * rdt.itemsize for i in idx], bucket_bytes):
            pos = [idx[k] for k in run]
            if len(pos) == 1:  # a leaf alone: straight from its memory, no packing
                x = xs[pos[0]]
                send = xp.asarray(x, dtype=rdt, order="C")
                recv = send if send is not x else empty(xp, x.shape, rdt)
                t.allreduce(send, recv)
                out[pos[0]] = recv.astype(dtype, copy=False)
                continue
            buf = empty(xp, (sum(xs[i].size for i in pos),), rdt)
            off = 0
            for i in pos:
                buf[off:off + xs[i].size] = xs[i].reshape(-1)
                off += xs[i].size
            t.allreduce(buf, buf)
            off = 0
            for i in pos:
                piece = buf[off:off + xs[i].size].reshape(xs[i].shape)
                out[i] = piece.astype(dtype, copy=False)
                off += xs[i].size
    return tuple(out)


psum_p = primitive(_psum_impl, "psum", multiple_results=True)


def _psum_vjp(g, ans, *xs, **kw):
    return tuple(psum_p(*g, **kw))


def _psum_jvp(tangents, ans, *xs, layout, bucket_bytes):
    idx = [i for i, t in enumerate(tangents) if t is not None]
    outs = psum_p(*[tangents[i] for i in idx], layout=layout.select(idx),
                  bucket_bytes=bucket_bytes)
    return _spread(outs, idx, len(xs))


def _spread(outs, idx, n):
    full = [None] * n
    for i, o in zip(idx, outs):
        full[i] = o
    return tuple(full)


defvjp_all(psum_p, _psum_vjp)
defjvp_all(psum_p, _psum_jvp)
defbatch(psum_p, lambda args, dims, **kw: (list(psum_p(*args, **kw)), tuple(dims)))
defabstract_eval(psum_p, lambda *avals, **kw: tuple(avals))


# ----------------------------------------------------------------------------- all_gather

def _all_gather_impl(*xs, axes, tiled, layout, bucket_bytes):
    w = world()
    if w.local:
        return tuple(_place(array_module(x), x[None], a, tiled) for x, a in zip(xs, axes))
    agree(w, "all_gather", (("axes", axes), ("tiled", tiled)), layout, xs)
    n = w.count
    stacked = [None] * len(xs)
    for xp, _, idx in groups(xs, by_dtype=False):
        t = transport_for(w, xs[idx[0]])
        for run in buckets([xs[i].nbytes for i in idx], bucket_bytes):
            pos = [idx[k] for k in run]
            if len(pos) == 1:
                x = xp.asarray(xs[pos[0]], order="C")
                recv = empty(xp, (n,) + x.shape, x.dtype)
                t.allgather(x, recv)
                stacked[pos[0]] = recv
                continue
            offsets, total = aligned_offsets([xs[i].nbytes for i in pos])
            buf = empty(xp, (total,), np.uint8)
            for i, o in zip(pos, offsets):
                buf[o:o + xs[i].nbytes] = _bytes(xp.asarray(xs[i], order="C"))
            recv = empty(xp, (n, total), np.uint8)
            t.allgather(buf, recv)
            for i, o in zip(pos, offsets):
                raw = xp.ascontiguousarray(recv[:, o:o + xs[i].nbytes])
                stacked[i] = raw.view(xs[i].dtype).reshape((n,) + xs[i].shape)
    return tuple(_place(array_module(s), s, a, tiled) for s, a in zip(stacked, axes))


all_gather_p = primitive(_all_gather_impl, "all_gather", multiple_results=True)


def _gather_avals(*avals, axes, tiled, **kw):
    n = _count()
    return tuple(a.update(shape=gathered_shape(a.shape, ax, tiled, n))
                 for a, ax in zip(avals, axes))


def _gather_jvp(tangents, ans, *xs, axes, tiled, layout, bucket_bytes):
    idx = [i for i, t in enumerate(tangents) if t is not None]
    outs = all_gather_p(*[tangents[i] for i in idx], axes=tuple(axes[i] for i in idx),
                        tiled=tiled, layout=layout.select(idx), bucket_bytes=bucket_bytes)
    return _spread(outs, idx, len(xs))


def _front(args, dims, axes):
    """Batched leaves with their batch axis first and their axis shifted past it."""
    vals, new_axes, out_dims = [], [], []
    for x, d, a in zip(args, dims, axes):
        if d is None:
            vals.append(x)
            new_axes.append(a)
            out_dims.append(None)
        else:
            vals.append(x if d == 0 else fnp.moveaxis(x, d, 0))
            new_axes.append(a + 1)
            out_dims.append(0)
    return vals, tuple(new_axes), tuple(out_dims)


def _gather_batch(args, dims, *, axes, **kw):
    vals, axes, out_dims = _front(args, dims, axes)
    return list(all_gather_p(*vals, axes=axes, **kw)), out_dims


defvjp_all(all_gather_p, lambda g, ans, *xs, **kw: tuple(psum_scatter_p(*g, **kw)))
defjvp_all(all_gather_p, _gather_jvp)
defbatch(all_gather_p, _gather_batch)
defabstract_eval(all_gather_p, _gather_avals)


# ----------------------------------------------------------------------------- psum_scatter

def _psum_scatter_impl(*xs, axes, tiled, layout, bucket_bytes):
    w = world()
    if w.local:
        return tuple(x if tiled else array_module(x).squeeze(x, a) for x, a in zip(xs, axes))
    agree(w, "psum_scatter", (("axes", axes), ("tiled", tiled)), layout, xs)
    n = w.count
    out = [None] * len(xs)
    for xp, dtype, idx in groups(xs, by_dtype=True):
        rdt = reduction_dtype(dtype)
        t = transport_for(w, xs[idx[0]])
        for run in buckets([xs[i].size * rdt.itemsize for i in idx], bucket_bytes):
            pos = [idx[k] for k in run]
            # each leaf as n rows (its n blocks along its axis), the rows side by side
            rows = [xp.moveaxis(xs[i], axes[i], 0).reshape(n, xs[i].size // n) for i in pos]
            widths = [r.shape[1] for r in rows]
            if len(pos) == 1:
                send = xp.asarray(rows[0], dtype=rdt, order="C")
            else:
                send = empty(xp, (n, sum(widths)), rdt)
                off = 0
                for r, wd in zip(rows, widths):
                    send[:, off:off + wd] = r
                    off += wd
            recv = empty(xp, (sum(widths),), rdt)
            t.reduce_scatter(send, recv)
            off = 0
            for i, wd in zip(pos, widths):
                out[i] = _unscatter(xp, recv[off:off + wd].astype(dtype, copy=False),
                                    xs[i].shape, axes[i], tiled, n)
                off += wd
    return tuple(out)


def _unscatter(xp, block, shape, axis, tiled, n):
    """This process's block of a leaf of `shape`, from its flat values."""
    rest = shape[:axis] + shape[axis + 1:]
    if not tiled:
        return block.reshape(rest)
    return xp.moveaxis(block.reshape((shape[axis] // n,) + rest), 0, axis)


psum_scatter_p = primitive(_psum_scatter_impl, "psum_scatter", multiple_results=True)


def _scatter_avals(*avals, axes, tiled, **kw):
    n = _count()
    return tuple(a.update(shape=scattered_shape(a.shape, ax, tiled, n))
                 for a, ax in zip(avals, axes))


def _scatter_jvp(tangents, ans, *xs, axes, tiled, layout, bucket_bytes):
    idx = [i for i, t in enumerate(tangents) if t is not None]
    outs = psum_scatter_p(*[tangents[i] for i in idx], axes=tuple(axes[i] for i in idx),
                          tiled=tiled, layout=layout.select(idx), bucket_bytes=bucket_bytes)
    return _spread(outs, idx, len(xs))


def _scatter_batch(args, dims, *, axes, **kw):
    vals, axes, out_dims = _front(args, dims, axes)
    return list(psum_scatter_p(*vals, axes=axes, **kw)), out_dims


defvjp_all(psum_scatter_p, lambda g, ans, *xs, **kw: tuple(all_gather_p(*g, **kw)))
defjvp_all(psum_scatter_p, _scatter_jvp)
defbatch(psum_scatter_p, _scatter_batch)
defabstract_eval(psum_scatter_p, _scatter_avals)


# ----------------------------------------------------------------------------- broadcast

def _broadcast_impl(*xs, root, layout, bucket_bytes):
    w = world()
    if w.local:
        return tuple(xs)
    agree(w, "broadcast", (("root", root),), layout, xs)
    sender = w.index == root
    out = [None] * len(xs)
    for xp, _, idx in groups(xs, by_dtype=False):
        t = transport_for(w, xs[idx[0]])
        for run in buckets([xs[i].nbytes for i in idx], bucket_bytes):
            pos = [idx[k] for k in run]
            if len(pos) == 1:
                x = xs[pos[0]]
                buf = xp.asarray(x, order="C") if sender else empty(xp, x.shape, x.dtype)
                t.bcast(buf, root)
                out[pos[0]] = buf
                continue
            offsets, total = aligned_offsets([xs[i].nbytes for i in pos])
            buf = empty(xp, (total,), np.uint8)
            if sender:
                for i, o in zip(pos, offsets):
                    buf[o:o + xs[i].nbytes] = _bytes(xp.asarray(xs[i], order="C"))
            t.bcast(buf, root)
            for i, o in zip(pos, offsets):
                out[i] = buf[o:o + xs[i].nbytes].view(xs[i].dtype).reshape(xs[i].shape)
    return tuple(out)


broadcast_p = primitive(_broadcast_impl, "broadcast_from_root", multiple_results=True)


def _broadcast_vjp(g, ans, *xs, root, layout, bucket_bytes):
    summed = psum_p(*g, layout=layout, bucket_bytes=bucket_bytes)
    if world().index == root:
        return tuple(summed)
    return tuple(fnp.zeros_like(s) for s in summed)


def _broadcast_jvp(tangents, ans, *xs, root, layout, bucket_bytes):
    idx = [i for i, t in enumerate(tangents) if t is not None]
    outs = broadcast_p(*[tangents[i] for i in idx], root=root, layout=layout.select(idx),
                       bucket_bytes=bucket_bytes)
    return _spread(outs, idx, len(xs))


defvjp_all(broadcast_p, _broadcast_vjp)
defjvp_all(broadcast_p, _broadcast_jvp)
defbatch(broadcast_p, lambda args, dims, **kw: (list(broadcast_p(*args, **kw)), tuple(dims)))
defabstract_eval(broadcast_p, lambda *avals, **kw: tuple(avals))
