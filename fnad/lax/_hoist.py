"""Loop-invariant weight GEMMs of `scan`, run once outside the loop instead of once a step.

- Forward (`hoist_projections`): a body equation `x_t @ W` whose `x_t` is a per-step input
  and `W` a loop constant is the input projection of every step: one GEMM of the stacked
  inputs `(T * rows, d_in) @ W` before the loop, fed to the body as another per-step input.
  Its gradient then is an ordinary matmul's: one GEMM for W, one for the inputs.
- Backward (`weight_products`): a constant's cotangent that the body's VJP program computes
  as `a_t^T @ g_t` (2-D `a_t`, `g_t`) is summed over the steps by one GEMM after the reverse
  loop, `A^T @ G` of the stacked factors `(T * rows, d)`, instead of being added into the
  loop's carry step by step. A factor that is the step's carry (the recurrent state) or
  input is read from the stacked arrays the VJP already has; the others are stacked outputs
  of the reverse loop.

Both reassociate sums (a GEMM over `T * rows` rows in place of `T` GEMMs and a running sum),
so their bits differ from an unhoisted loop's; eager, jit and every transform take the same
path, so they agree with each other bit for bit (docs/jit.md, "Recurrences").
"""

from .._graph.graph import Graph
from .._graph.ir import Var
from .._jit.passes import eliminate_dead_code
from ._graphs import shared

__all__ = ["hoist_projections", "project", "weight_products", "without_outputs",
           "stacked_product"]


def _producers(graph):
    return {v: e for e in graph.eqns for v in e.outvars}


def _is_matmul(e):
    return (e is not None and e.prim.name == "matmul" and not e.kwargs and len(e.args) == 2
            and all(type(a) is Var for a in e.args))


# ----------------------------------------------------------------------------- forward

def hoist_projections(body, consts, nc, nk):
    """(body, consts, kept, products) where each `x_t @ W` (x_t a per-step input of at
    least one axis, W a 2-D loop constant) of the closed `body` became a per-step input
    read from `products`: `(matmul primitive, stacked input position, W)` to compute before
    the loop (`project`), after the per-step inputs at positions `kept` (those the new body
    still reads). Constants the new body no longer reads are dropped."""
    xs_in = {v: i for i, v in enumerate(body.invars[nc + nk:])}
    const_in = {v: i for i, v in enumerate(body.invars[:nc])}
    hoisted, eqns, products = [], [], []
    for e in body.eqns:
        if (_is_matmul(e) and e.args[0] in xs_in and e.args[1] in const_in
                and e.args[0].aval.ndim >= 1 and e.args[1].aval.ndim == 2
                and e.args[0].aval.shape[-1] > 0):
            hoisted.append(e.outvars[0])
            products.append((e.prim, xs_in[e.args[0]], consts[const_in[e.args[1]]]))
        else:
            eqns.append(e)
    if not products:
        return body, consts, range(len(xs_in)), ()
    used = {v for e in eqns for v in e.invars()} | {v for v in body.outvars if type(v) is Var}
    keep = [i for i in range(nc) if body.invars[i] in used]
    kept = [m for m, v in enumerate(body.invars[nc + nk:]) if v in used]
    start, n = body.lifted
    lifted = (sum(i < start for i in keep), sum(start <= i < start + n for i in keep))
    invars = ([body.invars[i] for i in keep] + body.invars[nc:nc + nk]
              + [body.invars[nc + nk + m] for m in kept] + hoisted)
    g = Graph(invars, eqns, body.outvars, body.in_tree, body.out_tree, (), body.name,
              lifted=lifted)
    return shared(g), [consts[i] for i in keep], kept, tuple(products)


def project(prim, xs, w):
    """`xs @ w` over every step at once: `xs` `(T, ..., d_in)` as one `(T * rows, d_in)`
    operand of one GEMM, the result reshaped back to `(T, ..., d_out)`."""
    shape = tuple(xs.shape)
    rows = 1
    for s in shape[:-1]:
        rows *= s
    out = prim.bind(xs.reshape((rows, shape[-1])), w)
    return out.reshape(shape[:-1] + (tuple(w.shape)[-1],))


# ----------------------------------------------------------------------------- backward

def weight_products(vg, nc, nk, n_const_cts):
    """{j: (a, g, transpose primitive, matmul primitive, a_source, g_source)} for the first
    `n_const_cts` outputs of the body's VJP program `vg` (the constants' cotangents) that
    are `transpose(a) @ g` with 2-D per-step `a` and `g`. A source is ("carry", k) for the
    body's k-th carry input, ("x", m) for its m-th per-step input, or ("y", None) for a
    value the reverse loop must output."""
    prod = _producers(vg)
    const_in = set(vg.invars[:nc])
    pos = {v: i for i, v in enumerate(vg.invars)}
    n_body = len(vg.invars)

    def source(v):
        i = pos.get(v)
        if i is not None and nc <= i < nc + nk:
            return ("carry", i - nc)
        if i is not None and nc + nk <= i < n_body:
            return ("x", i - nc - nk)
        return ("y", None)

    plan = {}
    for j in range(n_const_cts):
        v = vg.outvars[j]
        e = prod.get(v) if type(v) is Var else None
        if not _is_matmul(e):
            continue
        t, g = e.args
        te = prod.get(t)
        if (te is None or te.prim.name != "transpose" or te.kwargs or len(te.args) != 2
                or te.args[1] is not None or type(te.args[0]) is not Var):
            continue
        a = te.args[0]
        if a.aval.ndim != 2 or g.aval.ndim != 2 or a in const_in or g in const_in:
            continue
        plan[j] = (a, g, te.prim, e.prim, source(a), source(g))
    return plan


def without_outputs(vg, plan):
    """`vg` without the hoisted cotangent outputs, with the factors marked ("y", None)
    appended as outputs (in plan order, a before g), dead equations dropped."""
    extra = [v for j in sorted(plan) for v, s in zip(plan[j][:2], plan[j][4:])
             if s[0] == "y"]
    outs = [o for j, o in enumerate(vg.outvars) if j not in plan] + extra
    g = Graph(vg.invars, vg.eqns, outs, vg.in_tree, vg.out_tree, (), vg.name)
    return eliminate_dead_code(g)


def stacked_product(tr, mm, a, b):
    """`sum_t a[t]^T @ b[t]` as one GEMM: `a` `(T, r, m)` and `b` `(T, r, n)` stacked
    factors, reshaped to `(T * r, m)` and `(T * r, n)`."""
    sa, sb = tuple(a.shape), tuple(b.shape)
    a2 = a.reshape((sa[0] * sa[1], sa[2]))
    b2 = b.reshape((sb[0] * sb[1], sb[2]))
    return mm.bind(tr.bind(a2, None), b2)
