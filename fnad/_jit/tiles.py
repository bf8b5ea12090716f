"""The gradient of slices that tile an axis, as one concatenate: `join_tiles(graph)`.

The VJP of `x[..., a:b]` is `gather_transpose`: zeros of x's shape with the cotangent
written in. When a program takes slices that tile one axis of `x` (q, k and v of a fused
projection, `fnp.split`), the backward adds one full-size scatter per slice:

    h = gather_transpose gq (..., :D);  i = gather_transpose gk (..., D:2D);  j = add h i
    k = gather_transpose gv (..., 2D:); l = add j k

Each element of `l` is its slice's cotangent plus zeros, that is `c + 0.0` (which maps
-0.0 to +0.0 and keeps every other bit), so the pass writes `l = concatenate(gq, gk, gv)
+ 0.0`: the same bits from two equations that read and write the array once each. It
applies where the slices are basic (unit step, one axis) and disjoint, cover the axis, and
each scatter and partial sum is read only by the next sum. Part of the "simplify" pass.
"""

from .._core.tracer import PRIMITIVES
from .._graph.ir import Eqn, Var, is_array_const, read_counts, rebuild

__all__ = ["join_tiles"]


def _span(idx, shape):
    """(axis, start, stop) of a basic index that slices one axis of `shape` with unit
    step and takes every other axis whole; None for any other index."""
    idx = idx if type(idx) is tuple else (idx,)
    if any(i is Ellipsis for i in idx):
        k = idx.index(Ellipsis)
        idx = idx[:k] + (slice(None),) * (len(shape) - len(idx) + 1) + idx[k + 1:]
    if len(idx) > len(shape) or any(type(i) is not slice for i in idx):
        return None
    cut = None
    for axis, (i, n) in enumerate(zip(idx, shape)):
        if any(b is not None and type(b) is not int for b in (i.start, i.stop, i.step)):
            return None
        start, stop, step = i.indices(n)
        if step != 1:
            return None
        if (start, stop) != (0, n):
            if cut is not None:
                return None
            cut = (axis, start, stop)
    return cut


def _tiles(pieces, n):
    """The operands in axis order if the spans tile [0, n), else None."""
    pieces = sorted(pieces, key=lambda p: p[1])
    end = 0
    for _, start, stop, _ in pieces:
        if start != end or stop <= start:
            return None
        end = stop
    return [p[3] for p in pieces] if end == n else None


def _shape(a):
    return a.aval.shape if type(a) is Var else (a.shape if is_array_const(a) else None)


def _scatter(e, uses):
    """[(axis, start, stop, cotangent)] if `e` scatters a whole array into one span of
    zeros and only one sum reads it, else None."""
    if len(e.args) != 3 or e.kwargs:
        return None
    g, idx, _ = e.args
    out = e.outvars[0]
    if out.aval.dtype.kind not in "fc" or uses.get(out) != 1:
        return None
    cut = _span(idx, out.aval.shape)
    if cut is None:
        return None
    axis, start, stop = cut
    want = out.aval.shape[:axis] + (stop - start,) + out.aval.shape[axis + 1:]
    return [(axis, start, stop, g)] if _shape(g) == want else None


def _sums(graph, uses):
    """{Var: (pieces, positions of the equations computing it)} for the scatters of spans
    and the adds of two of them, and the adds that no other such add reads (roots)."""
    sums, roots = {}, set()
    for k, e in enumerate(graph.eqns):
        name, out = e.prim.name, e.outvars[0]
        if name == "gather_transpose":
            pieces = _scatter(e, uses)
            if pieces is not None:
                sums[out] = (pieces, [k])
        elif name == "add" and len(e.args) == 2 and not e.kwargs:
            x, y = e.args
            if (type(x) is Var and type(y) is Var and x is not y and x in sums and y in sums
                    and uses.get(x) == 1 and uses.get(y) == 1
                    and x.aval == out.aval == y.aval and sums[x][0][0][0] == sums[y][0][0][0]):
                (px, kx), (py, ky) = sums[x], sums[y]
                sums[out] = (px + py, kx + ky + [k])
                roots.discard(x)
                roots.discard(y)
                roots.add(out)
    return sums, roots


def join_tiles(graph):
    """`graph` with each sum of scatters of tiling slices written as one concatenate."""
    if not any(e.prim.name == "gather_transpose" for e in graph.eqns):
        return graph
    uses = read_counts(graph, output_reads=2)  # an output is never folded away
    sums, roots = _sums(graph, uses)
    eqns = list(graph.eqns)
    joined = 0
    for out in roots:
        pieces, where = sums[out]
        axis = pieces[0][0]
        parts = _tiles(pieces, out.aval.shape[axis])
        if parts is None:
            continue
        e = eqns[where[-1]]  # the last add: every cotangent is computed by then
        for k in where:
            eqns[k] = None
        joined_var = Var(out.aval)
        zero = 0.0  # c + 0.0: -0.0 becomes +0.0, as in the sums (a Python float: weak, and
        # on any device)
        eqns[where[-1]] = [Eqn(_concatenate(), tuple(parts), {"axis": axis}, [joined_var],
                               e.scope),
                           Eqn(e.prim, (joined_var, zero), {}, [out], e.scope)]
        joined += 1
    if not joined:
        return graph
    flat = [x for e in eqns if e is not None for x in (e if type(e) is list else [e])]
    return rebuild(graph, flat, note=f"tiles: {joined} sums of slice gradients -> concatenate")


def _concatenate():
    return next(p for p in PRIMITIVES if p.name == "concatenate")
