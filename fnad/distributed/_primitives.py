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

A new collective is a `collective(...)` call here, with its run in an MPI world (one
`bucketed` call) and in one process; its public function goes in _collectives.py (through
`_apply`) and is re-exported by __init__.py. Only a new kind of message adds a method to
the `Transport` protocol and its transports (_transport.py).
"""

from functools import partial

from .._batching.families import to_front
from .._core.backend import array_module, is_device_array
from .._core.rules import defabstract_eval, defbatch, defjvp_all, defvjp_all
from .._core.tracer import primitive
from .. import numpy as fnp
from ._agree import agree
from ._buckets import bucketed
from ._world import world

__all__ = ["psum_p", "all_gather_p", "psum_scatter_p", "broadcast_p", "gathered_shape",
           "scattered_shape", "collective"]


# ----------------------------------------------------------------------------- one shape

def collective(name, remote, local, *, vjp, shape=None, primitive_name=None):
    """A collective over every leaf of a tree, as a primitive with all its rules.

    `remote(w, xs, bucket_bytes, **params)` runs it in an MPI world `w`, once the processes
    agree on the call (its name and params, the leaves' layout, shapes and dtypes);
    `local(xs, **params)` in the one-process world. `vjp` is its VJP rule (`defvjp_all`);
    `shape(shape, axis, tiled, n)` a result leaf's shape (None: the operand's). It is
    linear: its JVP is itself on the tangents. Per-leaf params are called `axes`.
    """
    def impl(*xs, layout, bucket_bytes, **params):
        w = world()
        if w.local:
            return tuple(local(xs, **params))
        agree(w, name, _wire(w, params, bucket_bytes, xs), layout, xs)
        return tuple(remote(w, xs, bucket_bytes, **params))

    p = primitive(impl, primitive_name or name, multiple_results=True)
    defvjp_all(p, vjp)
    defjvp_all(p, partial(_linear_jvp, p))
    defbatch(p, partial(_batch, p))
    defabstract_eval(p, partial(_avals, shape))
    return p


def _wire(w, params, bucket_bytes, xs):
    """What the processes agree on besides the leaves: every setting that changes what goes
    over the wire (the params, the bucket size, and for GPU leaves the transport options), so
    that processes differing in any of them raise instead of cutting different messages."""
    out = tuple(sorted(params.items())) + (("bucket_bytes", bucket_bytes),)
    if any(is_device_array(x) for x in xs):
        out += (("nccl", w.nccl), ("cuda_aware_mpi", w.cuda_aware_mpi))
    return out


def _per_leaf(params, idx):
    """`params` for the leaves at positions `idx` only."""
    out = dict(params, layout=params["layout"].select(idx))
    if "axes" in out:
        out["axes"] = tuple(out["axes"][i] for i in idx)
    return out


def _linear_jvp(p, tangents, ans, *xs, **params):
    """The JVP of a linear collective: itself on the tangents there are, spread back."""
    idx = [i for i, t in enumerate(tangents) if t is not None]
    outs = p(*[tangents[i] for i in idx], **_per_leaf(params, idx))
    full = [None] * len(xs)
    for i, o in zip(idx, outs):
        full[i] = o
    return tuple(full)


def _batch(p, args, dims, **params):
    """vmap: leaf by leaf where there are no `axes`; else batched leaves with their batch
    axis first and their axis shifted past it."""
    if "axes" not in params:
        return list(p(*args, **params)), tuple(dims)
    vals, axes, out_dims = [], [], []
    for x, d, a in zip(args, dims, params["axes"]):
        vals.append(to_front(x, d))
        axes.append(a if d is None else a + 1)
        out_dims.append(None if d is None else 0)
    return list(p(*vals, **dict(params, axes=tuple(axes)))), tuple(out_dims)


def _avals(shape, *avals, **params):
    if shape is None:
        return tuple(avals)
    n = world().count
    return tuple(a.update(shape=shape(a.shape, ax, params["tiled"], n))
                 for a, ax in zip(avals, params["axes"]))


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


def _gathered(stacked, axis, tiled):
    """A gathered leaf from its copies stacked along a new first axis (process order)."""
    xp = array_module(stacked)
    moved = stacked if axis == 0 else xp.moveaxis(stacked, 0, axis)
    if not tiled:
        return moved if axis == 0 else xp.ascontiguousarray(moved)
    shape = stacked.shape[1:]
    return moved.reshape(gathered_shape(shape, axis, True, stacked.shape[0]))


def _scattered(block, shape, axis, tiled, n):
    """This process's block of a leaf of `shape`, from its values."""
    rest = shape[:axis] + shape[axis + 1:]
    if not tiled:
        return block.reshape(rest)
    return array_module(block).moveaxis(block.reshape((shape[axis] // n,) + rest), 0, axis)


# ----------------------------------------------------------------------------- psum

def _psum(w, xs, bucket_bytes):
    out = bucketed(w, xs, bucket_bytes, lambda t, s, r: t.allreduce(s, r), reduce=True,
                   reuse=True)
    return [o.reshape(x.shape) for o, x in zip(out, xs)]


psum_p = collective("psum", _psum, lambda xs: xs,
                    vjp=lambda g, ans, *xs, **kw: tuple(psum_p(*g, **kw)))


# ----------------------------------------------------------------------------- all_gather

def _all_gather(w, xs, bucket_bytes, axes, tiled):
    n = w.count
    out = bucketed(w, xs, bucket_bytes, lambda t, s, r: t.allgather(s, r), reduce=False,
                   out_rows=n)
    return [_gathered(o.reshape((n,) + x.shape), a, tiled) for o, x, a in zip(out, xs, axes)]


all_gather_p = collective(
    "all_gather", _all_gather,
    lambda xs, axes, tiled: [_gathered(x[None], a, tiled) for x, a in zip(xs, axes)],
    vjp=lambda g, ans, *xs, **kw: tuple(psum_scatter_p(*g, **kw)), shape=gathered_shape)


# ----------------------------------------------------------------------------- psum_scatter

def _psum_scatter(w, xs, bucket_bytes, axes, tiled):
    out = bucketed(w, xs, bucket_bytes, lambda t, s, r: t.reduce_scatter(s, r), reduce=True,
                   split_axes=axes)
    return [_scattered(o, x.shape, a, tiled, w.count) for o, x, a in zip(out, xs, axes)]


psum_scatter_p = collective(
    "psum_scatter", _psum_scatter,
    lambda xs, axes, tiled: [x if tiled else array_module(x).squeeze(x, a)
                             for x, a in zip(xs, axes)],
    vjp=lambda g, ans, *xs, **kw: tuple(all_gather_p(*g, **kw)), shape=scattered_shape)


# ----------------------------------------------------------------------------- broadcast

def _broadcast(w, xs, bucket_bytes, root):
    out = bucketed(w, xs, bucket_bytes, lambda t, s, r: t.bcast(s, root), reduce=False,
                   out_rows=None, fill=w.index == root)
    return [o.reshape(x.shape) for o, x in zip(out, xs)]


def _broadcast_vjp(g, ans, *xs, root, layout, bucket_bytes):
    summed = psum_p(*g, layout=layout, bucket_bytes=bucket_bytes)
    if world().index == root:
        return tuple(summed)
    return tuple(fnp.zeros_like(s) for s in summed)


broadcast_p = collective("broadcast", _broadcast, lambda xs, root: xs, vjp=_broadcast_vjp,
                         primitive_name="broadcast_from_root")
