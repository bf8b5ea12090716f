"""Collectives over a named vmap axis (JAX's `lax.psum`, `pmean`, `all_gather`,
`axis_index` inside `vmap(f, axis_name="i")`).

Each is a primitive whose `axis_name` parameter names the axis. The vmap trace of that name
applies it across its batch (fnad/_batching/vmap.py's `COLLECTIVES` table: psum sums over
the batch axis and gives one value for every example); any other trace passes it on (a vmap
of another name batches it as an elementwise operation, grad and jvp use the rules below:
the VJP of psum is psum, as in JAX's SPMD semantics). With no vmap of that name the call
raises NameError, as JAX's "unbound axis name".
"""

import numpy as np

from .._batching.vmap import AXIS_ENV, COLLECTIVES, BatchTracer, move_axis, namespace_of
from .._core.abstract import ShapedArray, same_rule
from .._core.rules import defabstract_eval, defbatch, defjvp, defvjp
from .._core.tracer import primitive
from .._core.tree import tree_map

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index"]


def _bound(axis_name):
    """The innermost vmap trace named `axis_name` that is running (NameError if none)."""
    for name, trace in reversed(AXIS_ENV):
        if name == axis_name:
            return trace
    raise NameError(f"unbound axis name: {axis_name!r}. A collective names the axis of an "
                    f"enclosing fnad.vmap(f, axis_name={axis_name!r}); call it inside one "
                    "(fnad.distributed has the collectives across processes).")


# The implementations see values that no trace of the named vmap holds: the same for every
# example, so psum multiplies by the axis size and all_gather repeats them.
def _psum_impl(x, *, axis_name, reduce="sum"):
    size = _bound(axis_name).axis_size
    return x * size if reduce == "sum" else x


def _gather_impl(x, *, axis_name, axis=0, tiled=False):
    return _gather_named([x], [None], _bound(axis_name).axis_size, axis_name=axis_name,
                         axis=axis, tiled=tiled)[0]


def _index_impl(*, axis_name):
    trace = _bound(axis_name)
    return BatchTracer(np.arange(trace.axis_size), 0, trace)


_psum = primitive(_psum_impl, "named_psum")  # over a vmap axis (distributed has psum)
_gather = primitive(_gather_impl, "named_all_gather")
_axis_index = primitive(_index_impl, "axis_index", nondiff=True)

# psum / pmax / pmin: `reduce` chooses the reduction
defabstract_eval(_psum, same_rule)
defjvp(_psum, lambda t, ans, x, **kw: _psum(t, **kw) if kw.get("reduce", "sum") == "sum"
       else _not_linear(kw))
defvjp(_psum, lambda g, ans, x, **kw: _psum(g, **kw) if kw.get("reduce", "sum") == "sum"
       else _not_linear(kw))
defbatch(_psum, lambda args, dims, **kw: (_psum(args[0], **kw), dims[0]))  # another axis


def _not_linear(kw):
    raise NotImplementedError(f"p{kw['reduce']} over axis {kw['axis_name']!r} has no "
                              "derivative in fnad; compute it as psum of a mask, or stop "
                              "its gradient.")


def _psum_named(vals, dims, size, *, axis_name, reduce="sum"):
    (x,), (d,) = vals, dims
    if d is None:
        return (x * size if reduce == "sum" else x), None
    return getattr(x, {"sum": "sum", "max": "max", "min": "min"}[reduce])(axis=d), None


COLLECTIVES[_psum.primitive] = _psum_named


def _gather_aval(x, *, axis_name, axis=0, tiled=False):
    raise TypeError(f"all_gather over axis {axis_name!r}: its result's size is the axis's, "
                    "which a trace outside the vmap does not know; put jit outside the vmap "
                    "(jit(vmap(f, axis_name=...))), not inside it.")


defabstract_eval(_gather, _gather_aval)
defjvp(_gather, lambda t, ans, x, **kw: _gather(t, **kw))
defbatch(_gather, lambda args, dims, axis_name, axis=0, tiled=False: (
    _gather(args[0], axis_name=axis_name, axis=axis + (dims[0] <= axis), tiled=tiled),
    dims[0] + (dims[0] > axis and not tiled)) if dims[0] is not None else
    (_gather(args[0], axis_name=axis_name, axis=axis, tiled=tiled), None))


def _gather_vjp(g, ans, x, *, axis_name, axis=0, tiled=False):
    """Each example's part of the summed cotangents (a reduce-scatter)."""
    total = _psum(g, axis_name=axis_name)
    i = _axis_index(axis_name=axis_name)
    ns = namespace_of([total, i])
    if tiled:
        n = x.shape[axis]
        idx = i * n + ns.arange(n)
        return ns.take(total, idx, axis=axis)
    return ns.take(total, i, axis=axis)


defvjp(_gather, _gather_vjp)


def _gather_named(vals, dims, size, *, axis_name, axis=0, tiled=False):
    (x,), (d,) = vals, dims
    ns = namespace_of([x])
    if d is None:
        x = ns.broadcast_to(ns.expand_dims(x, 0), (size,) + tuple(x.shape))
        d = 0
    out = move_axis(x, d, axis)
    if tiled:
        shape = tuple(out.shape)
        out = out.reshape(shape[:axis] + (shape[axis] * shape[axis + 1],) + shape[axis + 2:])
    return out, None


COLLECTIVES[_gather.primitive] = _gather_named

defabstract_eval(_axis_index, lambda **kw: ShapedArray((), "int64"))
defbatch(_axis_index, lambda args, dims, **kw: (_axis_index(**kw), None))


def _names(axis_name):
    return axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of `x` (a pytree) over the examples of the vmap axis `axis_name` (a name or
    a tuple of names), the same for every example (JAX's `lax.psum`).

    Example:
      fnad.vmap(lambda x: x / fnad.lax.psum(x, "i"), axis_name="i")(xs)   # xs / xs.sum(0)
    """
    _no_groups(axis_index_groups)
    return _over(x, axis_name, lambda v, n: _psum(v, axis_name=n))


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of `x` over the examples of the vmap axis `axis_name` (no derivative)."""
    _no_groups(axis_index_groups)
    return _over(x, axis_name, lambda v, n: _psum(v, axis_name=n, reduce="max"))


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of `x` over the examples of the vmap axis `axis_name` (no derivative)."""
    _no_groups(axis_index_groups)
    return _over(x, axis_name, lambda v, n: _psum(v, axis_name=n, reduce="min"))


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of `x` over the examples of the vmap axis `axis_name` (JAX's `lax.pmean`)."""
    _no_groups(axis_index_groups)
    return _over(x, axis_name, lambda v, n: _psum(v, axis_name=n) / _bound(n).axis_size)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every example's `x` stacked along a new axis `axis` (joined along `axis` with
    tiled=True), the same for every example (JAX's `lax.all_gather`).

    Example:
      fnad.vmap(lambda x: fnad.lax.all_gather(x, "i"), axis_name="i")(xs)  # xs, per example
    """
    _no_groups(axis_index_groups)
    return tree_map(lambda v: _gather(v, axis_name=axis_name, axis=axis, tiled=tiled), x)


def axis_index(axis_name):
    """The index of the current example along the vmap axis `axis_name` (JAX's
    `lax.axis_index`)."""
    return _axis_index(axis_name=axis_name)


def _over(x, axis_name, op):
    def leaf(v):
        for n in _names(axis_name):
            v = op(v, n)
        return v
    return tree_map(leaf, x)


def _no_groups(groups):
    if groups is not None:
        raise NotImplementedError("axis_index_groups is not supported by fnad's collectives.")
