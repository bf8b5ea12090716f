"""Unrolling short `lax.scan`s into the program that holds them (an optimisation of jit).

A `scan` equation runs its body program once per step from a Python loop: at small sizes
(an RNN cell on a (32, 128) state) the per-call cost of 2 x length small programs (forward
and the reverse scan of the gradient) dominates. When length x body size is small, the
pass replaces the equation by `length` copies of the body's equations (fresh Vars each
step), reading x_i with `getitem` and stacking the ys with `reshape` + `concatenate`, so
the later passes (CSE, dead code, fusion, buffer reuse) work across steps. The arithmetic
is the same equations in the same order: results are bit-identical.

Off by default (`fnad.jit(f, unroll=0)`): on the tanh-RNN training step (50 steps of a
(32, 128) cell) the unrolled program is no faster than the scan (benchmarks/scan_unroll.py:
10.19 against 9.99 ms), since its 203 small matmuls and 153 small fused kernels cost what
the scan's per-step calls cost. `fnad.jit(f, unroll=4000)` unrolls that step.
"""

from .._graph.ir import Eqn, Var, map_atoms, rebuild
from .._core.tracer import PRIMITIVES

__all__ = ["unroll_scans"]


def _prims():
    return {p.name: p for p in PRIMITIVES if p.name in ("getitem", "reshape", "concatenate")}


def _unrollable(e, limit):
    if e.prim.name != "scan":
        return False
    kw = e.kwargs
    body = kw["body"]
    return 0 < kw["length"] and kw["length"] * max(len(body.eqns), 1) <= limit


def _inline(e, prims, out):
    """Append the unrolled equations of scan equation `e` to `out`; returns {Var: atom}."""
    kw = e.kwargs
    body, nc, nk, length = kw["body"], kw["num_consts"], kw["num_carry"], kw["length"]
    ops = list(e.args)
    consts, carry, xs = ops[:nc], ops[nc:nc + nk], ops[nc + nk:]
    ys_steps = [None] * length
    for i in (range(length - 1, -1, -1) if kw["reverse"] else range(length)):
        x_i = []
        for x in xs:
            if type(x) is not Var:  # a constant: its slice is a constant too
                x_i.append(x[i])
                continue
            v = Var(x.aval.update(shape=x.aval.shape[1:]))
            out.append(Eqn(prims["getitem"], (x, (i,)), {}, [v], e.scope))
            x_i.append(v)
        env = dict(zip(body.invars, consts + carry + x_i))

        def read(v, env=env):
            return env.get(v, v)
        for be in body.eqns:
            outs = [Var(v.aval) for v in be.outvars]
            out.append(Eqn(be.prim, tuple(map_atoms(be.args, read)), be.kwargs, outs, e.scope))
            env.update(zip(be.outvars, outs))
        res = [read(v) if type(v) is Var else v for v in body.outvars]
        carry, ys_steps[i] = res[:nk], res[nk:]
    mapping = dict(zip(e.outvars[:nk], carry))
    for j, yv in enumerate(e.outvars[nk:]):
        parts = []
        for i in range(length):
            y = ys_steps[i][j]
            r = Var(yv.aval.update(shape=(1,) + yv.aval.shape[1:]))
            out.append(Eqn(prims["reshape"], (y, r.aval.shape, "C"), {}, [r], e.scope))
            parts.append(r)
        out.append(Eqn(prims["concatenate"], tuple(parts), {"axis": 0}, [yv], e.scope))
    return mapping


def unroll_scans(graph, limit):
    """`graph` with its short scans unrolled (repeated: scans inside unrolled bodies too):
    those whose length x body equations is at most `limit` (`fnad.jit(f, unroll=limit)`)."""
    if not any(_unrollable(e, limit) for e in graph.eqns):
        return graph
    prims = _prims()
    total = 0
    while True:
        eqns, mapping, n = [], {}, 0

        def sub(v):
            while type(v) is Var and v in mapping:
                v = mapping[v]
            return v
        for e in graph.eqns:
            if mapping:
                e = Eqn(e.prim, tuple(map_atoms(e.args, sub)), e.kwargs, e.outvars, e.scope)
            if _unrollable(e, limit):
                mapping.update(_inline(e, prims, eqns))
                n += 1
            else:
                eqns.append(e)
        outvars = [sub(v) if type(v) is Var else v for v in graph.outvars]
        graph = rebuild(graph, eqns, outvars)
        total += n
        if n == 0 or not any(_unrollable(e, limit) for e in graph.eqns):
            break
    graph.notes.append(f"unroll: {total} scans into the program")
    return graph
