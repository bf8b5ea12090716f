"""Batching rules of indexing (getitem), its transpose (gather_transpose) and the functional
updates (index_add, index_set, index_mul), registered by `_indexing` under each primitive.
Each rule is made for the primitive it is given, so none is looked up by name.

An unbatched index applies to every example: the batch axis goes first and the index gets a
leading `slice(None)`. A batched index (an integer array that differs per example) becomes
one advanced index over the batch: an `arange(B)` inserted next to the other advanced
indices (when `x` is batched), the batched index arrays lined up with it. NumPy places the
advanced dimensions of the result where the advanced indices were when they are adjacent,
else first; `_layout` works out where the batch axis lands.
"""

import numpy as np

from .. import numpy as fnp
from .._core.abstract import abstract_eval
from .._core.backend import array_module
from .._core.rules import as_primitive
from .._batching.families import batch_size, to_front
from .._batching.vmap import move_axis, batch_fallback
from .._core.tracer import Tracer
from ._util import shape

__all__ = ["getitem_batch", "gather_transpose_batch", "update_batch"]


def _is_array(i):
    return isinstance(i, (Tracer, np.ndarray)) or hasattr(i, "__cuda_array_interface__")


def _consumes(i):
    if i is None:
        return 0
    if _is_array(i) and i.dtype == bool:
        return max(len(shape(i)), 1)
    return 1


def _expand_ellipsis(idx, nd):
    """`idx` (a tuple) with any Ellipsis replaced by the slices it stands for."""
    for k, i in enumerate(idx):
        if i is Ellipsis:
            rest = idx[:k] + idx[k + 1:]
            n = nd - sum(_consumes(j) for j in rest)
            return idx[:k] + (slice(None),) * n + idx[k + 1:]
    return idx


def _layout(idx):
    """(advanced positions in `idx`, whether they are adjacent, the first one's position in
    x's axes, the number of result axes before it)."""
    has_array = any(_is_array(i) for i in idx)
    adv = [k for k, i in enumerate(idx)
           if _is_array(i) or (has_array and isinstance(i, (int, np.integer)))]
    if not adv:
        return adv, True, 0, 0
    k = adv[0]
    adjacent = adv == list(range(k, k + len(adv)))
    x_pos = sum(_consumes(i) for i in idx[:k])
    out_pos = sum(1 for i in idx[:k] if i is None or isinstance(i, slice))
    return adv, adjacent, x_pos, out_pos


def _adv_ndim(idx, adv, dims):
    nd = 0
    for k in adv:
        i, d = idx[k], dims[k]
        nd = max(nd, (1 if i.dtype == bool else len(shape(i))) - (d is not None)
                 if _is_array(i) else 0)
    return nd


def _batched_index(x, dx, idx, didx, n):
    """(x laid out for the batched index `idx` (no Ellipsis), the index, where the result's
    batch axis is, where x's batch axis is), or None for a boolean index."""
    adv, adjacent, x_pos, out_pos = _layout(idx)
    if any(_is_array(idx[k]) and idx[k].dtype == bool for k in adv):
        return None
    r = _adv_ndim(idx, adv, didx)
    new = list(idx)
    for k in adv:
        if didx[k] is not None:
            a = to_front(idx[k], didx[k])
            s = shape(a)
            new[k] = fnp.reshape(a, s[:1] + (1,) * (r + 1 - len(s)) + s[1:])
    if dx is not None:
        x = move_axis(x, dx, x_pos)
        xp = x.aval.xp if isinstance(x, Tracer) else array_module(x)  # reads no value
        new.insert(adv[0], xp.arange(n).reshape((n,) + (1,) * r))
    return x, tuple(new), out_pos if adjacent else 0, x_pos


def _plain_index(x, dx, idx):
    """(x with its batch axis first, the index, where the result's batch axis is, 0) for an
    unbatched index."""
    nd = len(shape(x)) - 1
    idx = _expand_ellipsis(idx, nd)
    adv, adjacent, _, _ = _layout(idx)
    out_pos = 0
    if adv and not adjacent:
        out_pos = _adv_ndim(idx, adv, (None,) * len(idx))
    return to_front(x, dx), (slice(None),) + idx, out_pos, 0


def _split(args, dims, k):
    """The index argument `k` as a tuple, with its dims (a tuple, or None when unbatched)."""
    idx, didx = args[k], dims[k]
    if not isinstance(idx, tuple):
        idx, didx = (idx,), (didx,)
    return idx, didx


def _index_layout(x, dx, idx, didx, n):
    if didx is None or all(d is None for d in didx):
        if dx is None:
            return None
        return _plain_index(x, dx, idx)
    nd = len(shape(x)) - (dx is not None)
    idx2 = _expand_ellipsis(idx, nd)
    if len(idx2) != len(idx):  # an Ellipsis expanded: spread the dims the same way
        k = idx.index(Ellipsis)
        didx = didx[:k] + (None,) * (len(idx2) - len(idx) + 1) + didx[k + 1:]
    return _batched_index(x, dx, idx2, didx, n)


def getitem_batch(getitem):
    """The rule of `getitem` (x[idx])."""
    prim = as_primitive(getitem)

    def rule(args, dims, **kw):
        x, dx = args[0], dims[0]
        idx, didx = _split(args, dims, 1)
        n = batch_size(args, dims)
        lay = _index_layout(x, dx, idx, didx, n)
        if lay is None:
            return batch_fallback(prim, args, dims, kw, n)
        x, idx, out_pos, _ = lay
        return prim.bind(x, idx), out_pos
    return rule


def gather_transpose_batch(gather_transpose):
    """The rule of `gather_transpose` (zeros of x's shape with `g` added at `idx`)."""
    prim = as_primitive(gather_transpose)

    def rule(args, dims, **kw):
        g, idx, x_shape = args[0], args[1], tuple(args[2])
        dg = dims[0]
        idx, didx = _split(args, dims, 1)
        n = batch_size(args, dims)
        z = np.broadcast_to(np.zeros((), np.int8), (n,) + x_shape)  # stands in for a batched x
        lay = _index_layout(z, 0, idx, didx, n)
        if lay is None:
            return batch_fallback(prim, args, dims, kw, n)
        zx, pidx, out_pos, x_pos = lay
        g = move_axis(to_front(g, dg, n), 0, out_pos)
        return prim.bind(g, pidx, shape(zx)), x_pos
    return rule


def update_batch(update, getitem):
    """The rule of a functional update (`index_add`, `index_set`, `index_mul`); `getitem`
    gives the shape the update's values broadcast to."""
    prim, gather = as_primitive(update), as_primitive(getitem)

    def rule(args, dims, **kw):
        x, dx, v, dv = args[0], dims[0], args[2], dims[2]
        idx, didx = _split(args, dims, 1)
        n = batch_size(args, dims)
        if dx is None:  # the result is batched: every example gets its own copy of x
            x, dx = to_front(x, None, n), 0
        lay = _index_layout(x, dx, idx, didx, n)
        if lay is None:
            return batch_fallback(prim, args, dims, kw, n)
        px, pidx, out_pos, x_pos = lay
        res = abstract_eval(gather, px, pidx).shape
        if dv is not None:
            v = to_front(v, dv)
            s = shape(v)
            v = fnp.reshape(v, s[:1] + (1,) * (len(res) - len(s)) + s[1:])
            v = move_axis(v, 0, out_pos)
        elif len(shape(v)) > len(res) - 1 - out_pos:
            s = shape(v)
            v = fnp.reshape(v, (1,) * (len(res) - 1 - len(s)) + s)
            v = fnp.expand_dims(v, out_pos)
        return prim.bind(px, pidx, v), x_pos
    return rule
