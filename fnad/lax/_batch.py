"""Batching rules (vmap) of the control-flow primitives.

Each rule batches the body program itself: the batched body is `vmap` of the body Graph,
traced once per (body, which operands are batched, batch size) into a new closed Graph,
so the loop still runs one compiled program per step.

- scan: batched constants keep their batch axis first; every carry is batched (an
  unbatched initial carry is repeated, since a batched constant or x reaches it after one
  step); a batched xs has its batch axis moved to axis 1 (axis 0 is the scanned one), so
  the ys come out batched along axis 1.
- cond: an unbatched predicate picks one batched branch, as before; a batched predicate
  runs both branches on the whole batch and selects per example (as JAX does).
- while: the condition is evaluated per example; the loop runs while any example's is
  true, and each step updates only the examples whose condition still holds.
"""

from .._core.backend import array_module
from .._batching.families import batch_size, to_front
from .._batching.vmap import move_axis, vmap
from .._core.rules import defbatch
from ._graphs import cached, derived, in_avals
from ._prims import cond_p, scan_p, while_p

__all__ = []


def _batched_aval(a, n):
    return a.update(shape=(n,) + a.shape, weak_type=False)


def _batched_graph(graph, axes, n, name):
    """`graph` (closed) vmapped with in_axes `axes` (0 or None per input), out_axes 0."""
    def make():
        avals = [_batched_aval(a, n) if ax == 0 else a for a, ax in zip(in_avals(graph), axes)]

        def fun(*flat):
            return vmap(lambda *a: graph.run_flat(list(a)), in_axes=tuple(axes),
                        axis_size=n)(*flat)
        g = derived(fun, avals, name)
        g.lifted = graph.lifted
        return g
    return cached(graph, ("batch", tuple(axes), n), make)


def _scan_batch(args, dims, *, body, num_consts, num_carry, length, reverse):
    nc, nk = num_consts, num_carry
    n = batch_size(args, dims)
    consts = [to_front(a, d) for a, d in zip(args[:nc], dims[:nc])]
    carry = [to_front(a, d, n) for a, d in zip(args[nc:nc + nk], dims[nc:nc + nk])]
    xs = [a if d is None else move_axis(a, d, 1) for a, d in zip(args[nc + nk:],
                                                                  dims[nc + nk:])]
    axes = ([None if d is None else 0 for d in dims[:nc]] + [0] * nk
            + [None if d is None else 0 for d in dims[nc + nk:]])
    bbody = _batched_graph(body, axes, n, body.name + "_batched")
    res = scan_p.bind(*consts, *carry, *xs, body=bbody, num_consts=nc, num_carry=nk,
                      length=length, reverse=reverse)
    ny = len(res) - nk
    return res, (0,) * nk + (1,) * ny


def _cond_batch(args, dims, *, branches):
    n = batch_size(args, dims)
    pred, ops = args[0], args[1:]
    axes = [None if d is None else 0 for d in dims[1:]]
    ops = [to_front(a, d) for a, d in zip(ops, dims[1:])]
    bbr = tuple(_batched_graph(b, axes, n, b.name + "_batched") for b in branches)
    if dims[0] is None:
        res = cond_p.bind(pred, *ops, branches=bbr)
        return res, (0,) * len(res)
    pred = to_front(pred, dims[0])
    outs_f = bbr[0].run_flat(list(ops))
    outs_t = bbr[1].run_flat(list(ops))
    xp = namespace_of(pred)
    res = []
    for t, f in zip(outs_t, outs_f):
        p = xp.reshape(pred, (n,) + (1,) * (len(t.shape) - 1))
        res.append(xp.where(p, t, f))
    return tuple(res), (0,) * len(res)


def namespace_of(x):
    return x.__array_namespace__() if hasattr(x, "__array_namespace__") else array_module(x)


def _while_graphs(cond_graph, body_graph, ncc, nbc, c_axes, b_axes, n):
    """(cond, body) of the batched loop: cond = any example's condition; body = one step
    applied where each example's own condition holds."""
    def make():
        k_avals = [_batched_aval(a, n) for a in in_avals(body_graph)[nbc:]]
        cc_avals = [_batched_aval(a, n) if ax == 0 else a
                    for a, ax in zip(in_avals(cond_graph)[:ncc], c_axes)]
        bc_avals = [_batched_aval(a, n) if ax == 0 else a
                    for a, ax in zip(in_avals(body_graph)[:nbc], b_axes)]
        bcond = _batched_graph(cond_graph, list(c_axes) + [0] * len(k_avals), n,
                               cond_graph.name + "_batched")
        bbody = _batched_graph(body_graph, list(b_axes) + [0] * len(k_avals), n,
                               body_graph.name + "_batched")

        def test(*flat):
            (p,) = bcond.run_flat(list(flat))
            return [namespace_of(p).any(p)]

        def step(*flat):
            cc, bc, carry = flat[:ncc], flat[ncc:ncc + nbc], flat[ncc + nbc:]
            (p,) = bcond.run_flat([*cc, *carry])
            new = bbody.run_flat([*bc, *carry])
            xp = namespace_of(p)
            return [xp.where(xp.reshape(p, (n,) + (1,) * (len(c.shape) - 1)), a, c)
                    for a, c in zip(new, carry)]

        g_cond = derived(test, cc_avals + k_avals, cond_graph.name + "_any")
        g_body = derived(step, cc_avals + bc_avals + k_avals, body_graph.name + "_masked")
        return g_cond, g_body
    return cached(body_graph, ("while_batch", id(cond_graph), tuple(c_axes), tuple(b_axes), n),
                  make)


def _while_batch(args, dims, *, cond_graph, body_graph, cond_nconsts, body_nconsts):
    ncc, nbc = cond_nconsts, body_nconsts
    n = batch_size(args, dims)
    cc = [to_front(a, d) for a, d in zip(args[:ncc], dims[:ncc])]
    bc = [to_front(a, d) for a, d in zip(args[ncc:ncc + nbc], dims[ncc:ncc + nbc])]
    carry = [to_front(a, d, n) for a, d in zip(args[ncc + nbc:], dims[ncc + nbc:])]
    c_axes = tuple(None if d is None else 0 for d in dims[:ncc])
    b_axes = tuple(None if d is None else 0 for d in dims[ncc:ncc + nbc])
    g_cond, g_body = _while_graphs(cond_graph, body_graph, ncc, nbc, c_axes, b_axes, n)
    # the masked body reads the condition's constants too, so they lead its operands
    res = while_p.bind(*cc, *cc, *bc, *carry, cond_graph=g_cond, body_graph=g_body,
                       cond_nconsts=ncc, body_nconsts=ncc + nbc)
    return res, (0,) * len(res)


defbatch(scan_p, _scan_batch)
defbatch(cond_p, _cond_batch)
defbatch(while_p, _while_batch)
