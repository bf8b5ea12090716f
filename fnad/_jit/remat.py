"""Rematerialisation under fast math: `rematerialize(graph)`.

In `jit(grad(f))` a value the forward pass computes with cheap elementwise ops (`tanh(u)`
of a GELU, `x * x`) and the backward pass reads again, after GEMMs or reductions that no
kernel can cross, is written by the forward kernel and read back by the backward one. This
pass gives each such later reader its own copy of the value's chain of cheap elementwise
equations, recomputed from values that are stored until that reader anyway (its inputs
read there or later, the program's inputs), so the copy joins the backward kernel and the
forward kernel no longer writes the value out (dead code drops the original when nothing
else reads it). As Inductor's min-cut partitioner does, in a greedy form: a chain of at most
`MAX_CHAIN` equations of the reader's shape, never making a value live longer.

Only under fast math (`fnad.jit(f, fast_math=True)`), where exp/tanh/log/erf/expit are
kernel steps and so cheap; the recomputed values are the same operations on the same
values, so they give the same bits as the stored ones.
"""

from .._graph.ir import Eqn, Var, rebuild
from .passes import eliminate_dead_code

__all__ = ["rematerialize", "MAX_CHAIN"]

MAX_CHAIN = 8


def rematerialize(graph, cheap):
    """`graph` with chains of `cheap(eqn)` equations recomputed by their later readers (see
    the module docstring)."""
    eqns = graph.eqns
    n = len(eqns)
    is_cheap = [bool(cheap(e)) for e in eqns]
    segment, seg = [], 0  # how many equations no kernel crosses come before each one
    for k in range(n):
        segment.append(seg)
        seg += not is_cheap[k]
    last_seg, made_by = {}, {}  # the segment of a value's last reader; its equation
    for k, e in enumerate(eqns):
        for v in e.invars():
            last_seg[v] = segment[k]
        for v in e.outvars:
            made_by[v] = k
    for v in graph.outvars:
        if type(v) is Var:
            last_seg[v] = seg + 1
    ctx = (eqns, is_cheap, segment, last_seg, made_by, {})
    out, copied = [], 0
    for j, e in enumerate(eqns):
        if is_cheap[j]:
            added = []
            args = tuple(_copy(a, j, e.outvars[0].aval.shape, ctx, added)
                         if type(a) is Var else a for a in e.args)
            out.extend(added)
            copied += len(added)
            if any(x is not y for x, y in zip(args, e.args)):  # a copy, new or made before
                e = Eqn(e.prim, args, e.kwargs, e.outvars, e.scope)
        out.append(e)
    if not copied:
        return graph
    g = rebuild(graph, out, note=f"remat: {copied} equations recomputed by later readers")
    return eliminate_dead_code(g)


def _copy(v, j, shape, ctx, added):
    """The Var the reader at `j` reads for `v`: a copy of v's chain when v is made by a
    cheap equation in an earlier segment and the chain can be recomputed in j's segment
    from values stored there anyway; else v."""
    eqns, is_cheap, segment, last_seg, made_by, memo = ctx
    i = made_by.get(v)
    if i is None or not is_cheap[i] or segment[i] == segment[j] or v.aval.shape != shape:
        return v
    s = segment[j]
    if (v, s) in memo:
        return memo[(v, s)]
    chain = set()
    if not _plan(v, s, shape, ctx, chain) or len(chain) > MAX_CHAIN:
        return v
    for k in sorted(chain):  # in program order: each copy reads the copies made before it
        e = eqns[k]
        args = tuple(memo.get((a, s), a) if type(a) is Var else a for a in e.args)
        outs = [Var(o.aval) for o in e.outvars]
        memo.update(((o, s), c) for o, c in zip(e.outvars, outs))
        added.append(Eqn(e.prim, args, e.kwargs, outs, e.scope))
    return memo[(v, s)]


def _plan(v, s, shape, ctx, chain):
    """Collect into `chain` the equations recomputing `v` in segment `s`; False when one
    would read a value not stored in that segment anyway, or the chain grows too long."""
    eqns, is_cheap, segment, last_seg, made_by, memo = ctx
    i = made_by[v]
    if i in chain or (v, s) in memo:
        return True
    e = eqns[i]
    if len(e.outvars) != 1 or e.outvars[0].aval.shape != shape or len(chain) >= MAX_CHAIN:
        return False
    chain.add(i)
    for a in e.invars():
        k = made_by.get(a)
        if k is None or segment[k] == s or (a, s) in memo:
            continue  # an input of the program, made in this segment, or copied already
        if not is_cheap[k] or last_seg.get(a, -1) > s:
            if last_seg.get(a, -1) >= s:
                continue  # stored until this segment anyway
            return False
        if not _plan(a, s, shape, ctx, chain):
            return False
    return True
