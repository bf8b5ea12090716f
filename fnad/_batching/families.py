"""Batching rules for whole families of primitives (elementwise, reductions along `axis`, ops
on stacks of matrices), written with array methods only, so the core imports no array layer.

A rule gets the argument values and their batch axes (`dims`, None where an argument is not
batched) and calls the primitive again through `prim.bind`, which sends traced values on to
their own transforms. `fnad.extend` exports these helpers; fnad.numpy, fnad.scipy and fnad_nn
register them with `defbatch` right where each primitive is defined. Each family takes the
primitive or the function made by `primitive`.
"""

import inspect

import numpy as np

from .._core.rules import as_primitive
from .vmap import batch_by_loop, batch_fallback, move_axis, namespace_of

__all__ = ["batch_size", "to_front", "all_to_front", "elementwise_batch", "axis_batch",
           "stack_batch", "keep_batch", "logical_ndim", "loop_batch", "lead_batch",
           "image_batch", "like_batch", "tri_batch", "only_first", "fallback"]


def _ndim(x):
    return len(getattr(x, "shape", ()))


def logical_ndim(x, d):
    """The rank of one example of `x` (batched along `d`, or not batched)."""
    return _ndim(x) - (d is not None)


def batch_size(args, dims):
    """The batch size, from the first batched argument."""
    for a, d in zip(args, dims):
        if isinstance(d, int):
            return a.shape[d]
        if isinstance(d, tuple):
            n = batch_size(a, d)
            if n is not None:
                return n
    return None


def to_front(x, d, size=None):
    """`x` with its batch axis first; an unbatched `x` is repeated `size` times (or left
    alone when `size` is None)."""
    if d is None:
        if size is None:
            return x
        if not hasattr(x, "shape"):
            x = np.asarray(x)
        xp = namespace_of([x])
        return xp.broadcast_to(x[None], (size,) + tuple(x.shape))
    return move_axis(x, d, 0)


def all_to_front(args, dims):
    """Every argument with its batch axis first, the unbatched ones repeated."""
    n = batch_size(args, dims)
    return [to_front(a, d, n) for a, d in zip(args, dims)]


def _lift(x, r):
    """Batched `x` (batch axis first) with size-1 axes after the batch axis up to rank 1 + r,
    so NumPy's right-aligned broadcasting lines its example axes up with the others."""
    s = tuple(x.shape)
    k = r + 1 - len(s)
    return x if k == 0 else x.reshape(s[:1] + (1,) * k + s[1:])


def elementwise_batch(prim):
    """The rule of an elementwise primitive (broadcasting its array arguments)."""
    prim = as_primitive(prim)
    def rule(args, dims, **kwargs):
        if any(isinstance(d, tuple) for d in dims):
            return batch_fallback(prim, args, dims, kwargs, batch_size(args, dims))
        ranks = [logical_ndim(a, d) for a, d in zip(args, dims)]
        r = max(ranks)
        bd = {d for d in dims if d is not None}
        if len(bd) == 1:
            d = bd.pop()
            if all(k == r for k, dd in zip(ranks, dims) if dd is not None) and all(
                    k <= r - d for k, dd in zip(ranks, dims) if dd is None):
                return prim.bind(*args, **kwargs), d  # the axes already line up
        args = [a if d is None else _lift(move_axis(a, d, 0), r) for a, d in zip(args, dims)]
        return prim.bind(*args, **kwargs), 0
    return rule


def keep_batch(prim):
    """The rule of a primitive that acts on its first argument element by element and takes
    no other batched argument (astype, stop_gradient, device_put): the axis stays."""
    prim = as_primitive(prim)
    def rule(args, dims, **kwargs):
        if any(d is not None for d in dims[1:]):
            return batch_fallback(prim, args, dims, kwargs, batch_size(args, dims))
        return prim.bind(*args, **kwargs), dims[0]
    return rule


def _shift_axis(axis, nd):
    """An example's `axis` as the batched array's (the batch axis first), with NumPy's errors
    for an axis out of an example's range or not an integer (never wrapped around)."""
    if isinstance(axis, (tuple, list)):
        return tuple(_shift_axis(a, nd) for a in axis)
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an integer")
    if not -nd <= axis < nd:
        raise np.exceptions.AxisError(int(axis), nd)
    return int(axis) % nd + 1


def axis_batch(prim, none="all", default=None):
    """The rule of a primitive reducing or scanning its first argument along `axis` (other
    arguments unbatched): the batch axis goes first and `axis` shifts by one. `none` says
    what axis=None means: "all" the axes (sum, max) or the "flat" array (argmax, argsort);
    `default` is `axis`'s default where the signature cannot be read."""
    prim = as_primitive(prim)
    try:
        sig = inspect.signature(prim.impl)
    except (TypeError, ValueError):
        sig = None
    first = next(iter(sig.parameters)) if sig is not None else None
    dflt = sig.parameters["axis"].default if sig is not None else default

    def rule(args, dims, **kwargs):
        x, d = args[0], dims[0]
        nd = logical_ndim(x, d)
        if any(dd is not None for dd in dims[1:]) or sig is None or (nd == 0 and none == "flat"):
            return batch_fallback(prim, args, dims, kwargs, batch_size(args, dims))
        bound = sig.bind(*args, **kwargs)
        axis = bound.arguments.get("axis", dflt)
        if nd == 0 and axis is not None and axis != ():
            return batch_fallback(prim, args, dims, kwargs, batch_size(args, dims))
        x = move_axis(x, d, 0)
        flat_keep = False
        if axis is None:
            if none == "all":
                axis = tuple(range(1, nd + 1))
            else:
                x = x.reshape((x.shape[0], -1))
                axis, flat_keep = 1, bool(bound.arguments.get("keepdims", False))
        else:
            axis = _shift_axis(axis, nd)
        bound.arguments[first] = x
        bound.arguments["axis"] = axis
        out = prim.bind(*bound.args, **bound.kwargs)
        if flat_keep:
            out = out.reshape((out.shape[0],) + (1,) * nd)
        return out, 0
    return rule


def stack_batch(prim, core=None):
    """The rule of a primitive on stacks of matrices (linalg) whose array arguments broadcast
    over leading axes: the batch axes go first (unbatched arguments left as they are, which
    broadcast). `core` gives, per argument, its core rank (2 for a matrix): an unbatched
    argument with leading axes of its own is repeated instead."""
    prim = as_primitive(prim)
    def rule(args, dims, **kwargs):
        if any(isinstance(d, tuple) for d in dims):
            return batch_fallback(prim, args, dims, kwargs, batch_size(args, dims))
        n = batch_size(args, dims)
        cores = core or (2,) * len(args)
        lead = max(logical_ndim(a, d) - c for a, d, c in zip(args, dims, cores)
                   if d is not None or hasattr(a, "shape"))
        out = []
        for a, d, c in zip(args, dims, cores):
            if d is not None or (hasattr(a, "shape") and _ndim(a) - c > 0):
                out.append(_lift(to_front(a, d, n), lead + c))
            else:
                out.append(a)
        res = prim.bind(*out, **kwargs)
        if prim.multiple_results:
            return res, (0,) * len(res)
        return res, 0
    return rule


def loop_batch(prim):
    """The rule of a primitive whose examples are independent by nature (a random draw per
    key): it runs once per example and the results are stacked, without the fallback's
    warning."""
    prim = as_primitive(prim)
    def rule(args, dims, **kwargs):
        return batch_by_loop(prim, args, dims, kwargs, batch_size(args, dims))
    return rule


def only_first(dims):
    """True when no argument but the first is batched."""
    return all(d is None for d in dims[1:])


def fallback(prim, args, dims, kwargs):
    """`batch_fallback` (the loop over the examples, with its warning) for a rule that meets
    a case it does not handle."""
    return batch_fallback(prim, args, dims, kwargs, batch_size(args, dims))


def like_batch(prim):
    """The rule of `zeros_like` and its kin: with `shape=` given it reads no value of `a`, so
    one unbatched result serves every example; else the result keeps `a`'s batch axis."""
    prim = as_primitive(prim)

    def rule(args, dims, **kw):
        if kw.get("shape") is not None and only_first(dims):  # it reads no value of `a`
            a, d = args[0], dims[0]
            return prim.bind(a[(slice(None),) * d + (0,)], *args[1:], **kw), None
        if not only_first(dims):
            return fallback(prim, args, dims, kw)
        return prim.bind(*args, **kw), dims[0]
    return rule


def tri_batch(prim):
    """The rule of `tril`/`triu`, which act on the last two axes: the batch axis goes first
    (a 1-d example, which they turn into a matrix, runs the loop)."""
    prim = as_primitive(prim)

    def rule(args, dims, **kw):
        if not only_first(dims) or logical_ndim(args[0], dims[0]) < 2:
            return fallback(prim, args, dims, kw)  # a 1-d input becomes a matrix
        return prim.bind(to_front(args[0], dims[0]), *args[1:], **kw), 0
    return rule


def lead_batch(prim, nb):
    """The rule of a kernel on the last axis whose first `nb` arguments broadcast together
    (the rest unbatched): batch axes first, lifted to a common rank."""
    prim = as_primitive(prim)

    def rule(args, dims, **kw):
        if any(d is not None for d in dims[nb:]):
            return batch_fallback(prim, args, dims, kw, batch_size(args, dims))
        r = max(logical_ndim(a, d) for a, d in zip(args[:nb], dims[:nb]))
        out = list(args)
        for k in range(nb):
            if dims[k] is not None:
                out[k] = _lift(to_front(args[k], dims[k]), r)
        return prim.bind(*out, **kw), 0
    return rule


def _merge(x, d):
    """Batched NCHW `x` with the batch folded into N, and the batch size."""
    x = to_front(x, d)
    s = tuple(x.shape)
    return x.reshape((s[0] * s[1],) + s[2:]), s[0]


def _unmerge(y, n):
    s = tuple(y.shape)
    return y.reshape((n, s[0] // n) + s[1:])


def image_batch(prim, shape_arg=None):
    """The rule of a convolution kernel whose first argument is a batch of images (NCHW, or
    the column tensor of im2col): only that argument batched, the batch folds into N.
    `shape_arg` is the position of an (N, C, H, W) argument, whose N grows with it."""
    prim = as_primitive(prim)

    def rule(args, dims, **kw):
        if any(d is not None for d in dims[1:]) or logical_ndim(args[0], dims[0]) < 4:
            return batch_fallback(prim, args, dims, kw, batch_size(args, dims))
        x, n = _merge(args[0], dims[0])
        rest = list(args[1:])
        if shape_arg is not None:  # the x_shape argument: (N, C, H, W) -> (B * N, C, H, W)
            s = tuple(rest[shape_arg - 1])
            rest[shape_arg - 1] = (n * s[0],) + s[1:]
        return _unmerge(prim.bind(x, *rest, **kw), n), 0
    return rule
