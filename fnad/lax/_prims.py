"""The control-flow primitives `scan`, `cond` and `while`, and their rules.

Each holds its body as a closed Graph (fnad/lax/_graphs.py) in its parameters; the outer
values a body closed over are its leading operands, so transforms see them.

- scan(*consts, *init, *xs; body, num_consts, num_carry, length, reverse) -> (*carry, *ys).
  VJP: a reverse scan of the body's VJP program over the carries each step started from
  (the forward scan keeps them when it was built to, else they are recomputed), summing
  the constants' cotangents in its carry. JVP: a scan of the body's JVP program.
- cond(pred, *ops; branches=(false_graph, true_graph)) -> outs. VJP and JVP: a cond of the
  branches' VJP / JVP programs, so under jit both are staged and pred chooses at run time.
- while(*cond_consts, *body_consts, *init; cond_graph, body_graph, cond_nconsts,
  body_nconsts) -> carry. JVP: a while of the body's JVP program (the condition reads the
  primal part). VJP: refused, as in JAX (the trip count is not known before running).
"""

import numpy as np

from .._core.backend import array_module
from .._graph.graph import Graph
from .._graph.ir import Var
from ._graphs import (as_arrays, cached, diff_flags, in_avals, is_float, jvp_graph, out_avals,
                      permuted, runner, derived, vjp_graph, zeros)
from .._core.tracer import Primitive
from ._hoist import stacked_product, weight_products, without_outputs

__all__ = ["scan_p", "cond_p", "while_p", "stacking_body"]

scan_p = Primitive("scan", None, multiple_results=True)
cond_p = Primitive("cond", None, multiple_results=True)
while_p = Primitive("while", None, multiple_results=True)


def _flags(avals):
    return [is_float(a) for a in avals]


def _where(flags):
    return [i for i, f in enumerate(flags) if f]


def _fit(ct, aval):
    """A cotangent in its primal's dtype: the body's VJP program is traced for that dtype,
    and a wider one (a float32 output under a float64 loss) would run that program in
    another dtype than the one it was staged for (and than a fused kernel computes in)."""
    dt = getattr(ct, "dtype", None)
    return ct if dt is None or dt == aval.dtype else ct.astype(aval.dtype)


def _scatter(n, flags, values, offset=0):
    """A tuple of `n` with `values` at the positions `offset + i` where `flags[i]` is true,
    None elsewhere: the cotangents or tangents of the operands (outputs) that have one."""
    out = [None] * n
    for i, v in zip(_where(flags), values):
        out[offset + i] = v
    return tuple(out)


# ----------------------------------------------------------------------------- scan

def _scan_impl(*ops, body, num_consts, num_carry, length, reverse):
    run = runner(body)
    nc, nk = num_consts, num_carry
    consts, carry, xs = ops[:nc], ops[nc:nc + nk], ops[nc + nk:]
    avals = out_avals(body)
    xp = array_module(*ops) if ops else np
    ys = [xp.empty((length,) + a.shape, a.dtype) for a in avals[nk:]]
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = run(*consts, *carry, *[x[i] for x in xs])
        carry = outs[:nk]
        for y, o in zip(ys, outs[nk:]):
            y[i] = o
    return as_arrays(carry, avals, ops) + ys


def _scan_abstract(*args, body, num_consts, num_carry, length, reverse):
    carry = in_avals(body)[num_consts:num_consts + num_carry]
    ys = out_avals(body)[num_carry:]
    return tuple(carry) + tuple(a.update(shape=(length,) + a.shape, weak_type=False)
                                for a in ys)


def stacking_body(body, num_consts, num_carry):
    """`body` that also outputs, as its last ys, the carry each step starts from (what the
    VJP needs); marked so that the VJP rule reads them from the scan's results."""
    def make():
        carry_in = body.invars[num_consts:num_consts + num_carry]
        return Graph(body.invars, body.eqns, body.outvars + carry_in, body.in_tree,
                     body.out_tree, (), body.name, lifted=body.lifted, stacks_carries=True)
    return cached(body, ("stacking", num_consts, num_carry), make)


def _scan_bwd_body(body, nc, nk):
    """(consts; ct_consts_acc, ct_carry; carry_i, x_i, ct_y_i) -> (ct_consts_acc + ct of
    this step, ct of the carry in; ct_x_i, factors), floats only, and the plan of the
    constants whose cotangent `a_t^T @ g_t` is left to one GEMM after the loop (their
    accumulators are left out; their factors not already stacked are the last ys):
    fnad/lax/_hoist.py."""
    def make():
        ins, outs = in_avals(body), out_avals(body)
        nx = len(ins) - nc - nk
        f_in, f_out = diff_flags(body), _flags(outs)
        fc, fk = _where(f_in[:nc]), _where(f_in[nc:nc + nk])
        fy = _where(f_out[nk:])
        vg = vjp_graph(body, f_in, f_out)
        plan = weight_products(vg, nc, nk, len(fc))
        vg = without_outputs(vg, plan) if plan else vg
        acc_of = [i for j, i in enumerate(fc) if j not in plan]
        nfa, nfk = len(acc_of), len(fk)

        def fun(*flat):
            consts, acc = flat[:nc], flat[nc:nc + nfa]
            ct_k = flat[nc + nfa:nc + nfa + nfk]
            rest = flat[nc + nfa + nfk:]
            carry, x, ct_y = rest[:nk], rest[nk:nk + nx], rest[nk + nx:]
            cts = vg.run_flat([*consts, *carry, *x, *ct_k, *ct_y])
            return [a + c for a, c in zip(acc, cts[:nfa])] + cts[nfa:]

        avals = (ins[:nc] + [ins[i] for i in acc_of] + [ins[nc + k] for k in fk] + ins[nc:]
                 + [outs[nk + j] for j in fy])
        return derived(fun, avals, body.name + "_bwd"), plan
    return cached(body, ("scan_bwd", nc, nk), make)


def _hoisted_cts(plan, res, ys_from, carries, xs):
    """The hoisted constants' cotangents (fnad/lax/_hoist.py) by constant order, from the
    reverse loop's stacked factor outputs `res[ys_from:]` and the forward's stacked carries
    and inputs."""
    out, k = {}, ys_from
    for j in sorted(plan):
        factors = []
        for kind, i in plan[j][4:]:
            if kind == "y":
                factors.append(res[k])
                k += 1
            else:
                factors.append(carries[i] if kind == "carry" else xs[i])
        out[j] = stacked_product(plan[j][2], plan[j][3], *factors)
    return out


def _scan_vjp(g, ans, *ops, body, num_consts, num_carry, length, reverse):
    nc, nk = num_consts, num_carry
    if body.stacks_carries:
        carries = ans[len(ans) - nk:]
    else:  # recomputed by a scan of the body that stacks them, whose VJP this then is, with
        # zero cotangents for them (what the backward pass gives a stacking scan's), so that
        # grad(f) and grad(jit(f)) do the same arithmetic (the signs of zeros included)
        body = stacking_body(body, nc, nk)
        res = scan_p.bind(*ops, body=body, num_consts=nc, num_carry=nk, length=length,
                          reverse=reverse)
        carries = res[len(res) - nk:]
        g = tuple(g) + tuple(zeros(a.update(shape=(length,) + a.shape))
                             for a in out_avals(body)[len(g):])
    ins, outs = in_avals(body), out_avals(body)
    f_in, f_out = diff_flags(body), _flags(outs)
    bwd, plan = _scan_bwd_body(body, nc, nk)
    fc = _where(f_in[:nc])
    acc0 = [zeros(ins[i]) for j, i in enumerate(fc) if j not in plan]
    ct_k = [_fit(g[k], outs[k]) for k in _where(f_in[nc:nc + nk])]
    ct_y = [_fit(g[nk + j], outs[nk + j]) for j in _where(f_out[nk:])]
    xs = ops[nc + nk:]
    res = scan_p.bind(*ops[:nc], *acc0, *ct_k, *carries, *xs, *ct_y, body=bwd,
                      num_consts=nc, num_carry=len(acc0) + len(ct_k), length=length,
                      reverse=not reverse)
    if plan:
        n_x = sum(f_in[nc + nk:])
        hoisted = _hoisted_cts(plan, res, len(acc0) + len(ct_k) + n_x, carries, xs)
        accs = iter(res[:len(acc0)])
        res = ([hoisted[j] if j in plan else next(accs) for j in range(len(fc))]
               + list(res[len(acc0):]))
    return _scatter(len(ops), f_in, res)


def _scan_jvp_body(body, nc, nk, t_in):
    """The body's JVP program with its inputs as (consts, const tangents; carry, carry
    tangents; x, x tangents) and outputs as (carry, carry tangents; y, y tangents)."""
    def make():
        n, n_out = len(body.invars), len(body.outvars)
        t_idx = _where(t_in)
        f_out = _where(_flags(out_avals(body)))
        jg = jvp_graph(body, t_in)
        tpos = {i: n + j for j, i in enumerate(t_idx)}  # input i -> its tangent's position
        parts = [range(nc), range(nc, nc + nk), range(nc + nk, n)]
        in_order = [p for r in parts for p in list(r) + [tpos[i] for i in r if i in tpos]]
        fpos = {k: n_out + j for j, k in enumerate(f_out)}
        parts = [range(nk), range(nk, n_out)]
        out_order = [p for r in parts for p in list(r) + [fpos[k] for k in r if k in fpos]]
        return permuted(jg, in_order, out_order, body.name + "_jvp")
    return cached(body, ("scan_jvp", nc, nk, tuple(t_in)), make)


def _scan_jvp(tangents, ans, *ops, body, num_consts, num_carry, length, reverse):
    nc, nk = num_consts, num_carry
    ins, outs = in_avals(body), out_avals(body)
    f_in = _flags(ins)
    # every float carry gets a tangent (a constant's tangent reaches it after one step)
    t_in = ([t is not None for t in tangents[:nc]] + f_in[nc:nc + nk]
            + [t is not None for t in tangents[nc + nk:]])
    tans = [zeros(a) if t is None else t for t, a in zip(tangents, ins)]
    groups = []
    for lo, hi in ((0, nc), (nc, nc + nk), (nc + nk, len(ops))):
        groups += list(ops[lo:hi]) + [tans[i] for i in range(lo, hi) if t_in[i]]
    nt_c, nt_k = sum(t_in[:nc]), sum(t_in[nc:nc + nk])
    res = scan_p.bind(*groups, body=_scan_jvp_body(body, nc, nk, t_in), num_consts=nc + nt_c,
                      num_carry=nk + nt_k, length=length, reverse=reverse)
    f_out = _flags(outs)
    ny = len(outs) - nk
    carry_t = _scatter(nk, f_out[:nk], res[nk:nk + nt_k])
    return carry_t + _scatter(ny, f_out[nk:], res[nk + nt_k + ny:])


scan_p.impl = _scan_impl
scan_p.abstract_eval = _scan_abstract
scan_p.vjp_all = _scan_vjp
scan_p.jvp_all = _scan_jvp


# ----------------------------------------------------------------------------- cond

def _cond_impl(pred, *ops, branches):
    b = branches[1 if pred else 0]
    return as_arrays(runner(b)(*ops), out_avals(b), ops)


def _cond_abstract(pred, *ops, branches):
    return tuple(a.update(weak_type=False) for a in out_avals(branches[1]))


def _cond_vjp(g, ans, pred, *ops, branches):
    f_in, f_out = _flags(in_avals(branches[0])), _flags(out_avals(branches[0]))
    bwd = tuple(vjp_graph(b, f_in, f_out) for b in branches)
    outs = out_avals(branches[0])
    res = cond_p.bind(pred, *ops, *[_fit(g[k], outs[k]) for k in _where(f_out)],
                      branches=bwd)
    return _scatter(1 + len(ops), f_in, res, offset=1)


def _cond_jvp(tangents, ans, pred, *ops, branches):
    t_in = [t is not None for t in tangents[1:]]
    fwd = tuple(jvp_graph(b, t_in) for b in branches)
    res = cond_p.bind(pred, *ops, *[t for t in tangents[1:] if t is not None], branches=fwd)
    n = len(ans)
    return _scatter(n, _flags(out_avals(branches[0])), res[n:])


cond_p.impl = _cond_impl
cond_p.abstract_eval = _cond_abstract
cond_p.vjp_all = _cond_vjp
cond_p.jvp_all = _cond_jvp


# ----------------------------------------------------------------------------- while

def _while_impl(*ops, cond_graph, body_graph, cond_nconsts, body_nconsts):
    test, step = runner(cond_graph), runner(body_graph)
    cc, bc = ops[:cond_nconsts], ops[cond_nconsts:cond_nconsts + body_nconsts]
    carry = ops[cond_nconsts + body_nconsts:]
    while test(*cc, *carry)[0]:
        carry = step(*bc, *carry)
    return as_arrays(carry, in_avals(body_graph)[body_nconsts:], ops)


def _while_abstract(*args, cond_graph, body_graph, cond_nconsts, body_nconsts):
    return tuple(in_avals(body_graph)[body_nconsts:])


def _while_vjp(g, ans, *ops, **params):
    raise TypeError(
        "fnad.lax.while_loop: reverse-mode differentiation (grad, vjp, jacrev) of a while "
        "loop is not supported, as in JAX: its trip count is only known by running it. Use "
        "fnad.lax.fori_loop with Python int bounds (it becomes a scan, which grad supports), "
        "fnad.lax.scan with a fixed length, or forward mode (fnad.jvp, fnad.jacfwd).")


def _while_jvp_graphs(cond_graph, body_graph, ncc, nbc, t_in):
    def make():
        body_in = in_avals(body_graph)
        t_idx = _where(t_in)
        jg = jvp_graph(body_graph, t_in)
        n = len(body_in)
        tpos = {i: n + j for j, i in enumerate(t_idx)}
        consts, carry = range(nbc), range(nbc, n)
        in_order = ([*consts, *(tpos[i] for i in consts if i in tpos), *carry,
                     *(tpos[i] for i in carry if i in tpos)])
        jbody = permuted(jg, in_order, range(len(jg.outvars)), body_graph.name + "_jvp")
        dummies = [Var(body_in[i]) for i in t_idx if i >= nbc]
        jcond = Graph(cond_graph.invars + dummies, cond_graph.eqns, cond_graph.outvars,
                      cond_graph.in_tree, cond_graph.out_tree, (), cond_graph.name)
        return jcond, jbody
    return cached(body_graph, ("while_jvp", id(cond_graph), ncc, nbc, tuple(t_in)), make)


def _while_jvp(tangents, ans, *ops, cond_graph, body_graph, cond_nconsts, body_nconsts):
    ncc, nbc = cond_nconsts, body_nconsts
    body_in = in_avals(body_graph)
    # the body's constants' tangents, and every float carry's
    t_in = [t is not None for t in tangents[ncc:ncc + nbc]] + _flags(body_in[nbc:])
    tans = [zeros(a) if t is None else t for t, a in zip(tangents[ncc:], body_in)]
    bc, carry = ops[ncc:ncc + nbc], ops[ncc + nbc:]
    jcond, jbody = _while_jvp_graphs(cond_graph, body_graph, ncc, nbc, t_in)
    t_bc = [t for t, w in zip(tans[:nbc], t_in[:nbc]) if w]
    t_k = [t for t, w in zip(tans[nbc:], t_in[nbc:]) if w]
    res = while_p.bind(*ops[:ncc], *bc, *t_bc, *carry, *t_k, cond_graph=jcond,
                       body_graph=jbody, cond_nconsts=ncc, body_nconsts=nbc + len(t_bc))
    nk = len(carry)
    return _scatter(nk, t_in[nbc:], res[nk:])


while_p.impl = _while_impl
while_p.abstract_eval = _while_abstract
while_p.vjp_all = _while_vjp
while_p.jvp_all = _while_jvp
