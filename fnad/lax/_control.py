"""Structured control flow with JAX's signatures and semantics: scan, cond, while_loop,
fori_loop.

Each traces its function(s) once, on abstract values (shape and dtype), into a Graph that
becomes a parameter of one primitive (fnad/lax/_prims.py): under jit the body is staged
once, not unrolled, and every transform sees one operation with its own rules. Outer
traced values a body closes over become explicit operands, so gradients reach them.
"""

import numpy as np

from .._core.abstract import aval_of
from .._ad.reverse import RevTracer
from .._core.backend import array_module
from .._graph.graph import Graph
from .._graph.ir import Var
from ._hoist import hoist_projections, project
from ._graphs import close, out_avals, shared, trace_flat
from ._prims import cond_p, scan_p, stacking_body, while_p
from . import _batch as _lax_batch  # noqa: F401 - registers the batching rules
from .._core.tracer import Tracer, levels
from .._core.tree import tree_flatten, tree_unflatten

__all__ = ["scan", "cond", "while_loop", "fori_loop"]


def _leaf(x, fname, what, i):
    """A pytree leaf of an operand: an array, a tracer, or a Python scalar."""
    if isinstance(x, (Tracer, bool, int, float, complex)) or hasattr(x, "dtype"):
        return x
    raise TypeError(f"{fname}: {what} leaf {i} has type {type(x).__name__}, which is not an "
                    "array or a Python scalar; pass arrays (pytrees of them), and close over "
                    "other Python values instead.")


def _as_array(x, aval, like):
    """A Python scalar or NumPy scalar leaf as an array of `aval`'s dtype."""
    if isinstance(x, Tracer) or (hasattr(x, "shape") and not isinstance(x, np.generic)):
        return x
    xp = array_module(*like) if like else np
    # made where `like` lives (`full`, not `asarray`: on a device a fill, not a copy in)
    return xp.asarray(x, dtype=aval.dtype) if xp is np else xp.full((), x, dtype=aval.dtype)


def _differentiated(leaves):
    """Whether reverse mode traces any of `leaves` (at any level)."""
    return any(isinstance(v, RevTracer) for x in leaves for v in levels(x))


def _check_same(fname, what, in_avals, out_avals, tree):
    for k, (a, b) in enumerate(zip(in_avals, out_avals)):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise TypeError(
                f"{fname}: {what} must keep its type, but leaf {k} of {tree} goes in as "
                f"{a.dtype.name}{list(a.shape)} and comes out as {b.dtype.name}"
                f"{list(b.shape)}; make the function return the same shapes and dtypes "
                "(e.g. .astype(...)), or start from a value of the output's type.")


def _trace_loop_body(fname, make_fun, carry, extra_avals, what):
    """Trace a body whose first outputs are the carry; a carry leaf given as a Python scalar
    (weakly typed) that comes out with another dtype is cast to it and traced again."""
    carry_avals = [aval_of(c) for c in carry]
    for attempt in range(2):
        box = {}
        graph = trace_flat(make_fun(box), carry_avals + extra_avals, fname)
        nk = len(carry_avals)
        outs = out_avals(graph)[:nk]
        weak_fix = [b if a.weak_type and a.shape == b.shape and a.dtype != b.dtype else a
                    for a, b in zip(carry_avals, outs)]
        if attempt == 0 and any(w is not a for w, a in zip(weak_fix, carry_avals)):
            carry_avals = [w.update(weak_type=False) if w is not a else a
                           for a, w in zip(carry_avals, weak_fix)]
            continue
        _check_same(fname, what, carry_avals, outs, box["carry_tree"])
        return graph, box, carry_avals


# ----------------------------------------------------------------------------- scan

def _scan_length(xs_flat, length):
    if length is not None:
        if not isinstance(length, (int, np.integer)) or isinstance(length, bool) or length < 0:
            raise TypeError(f"scan: length must be a non-negative Python int, got {length!r}.")
        length = int(length)
    sizes = []
    for i, x in enumerate(xs_flat):
        shape = aval_of(x).shape
        if not shape:
            raise ValueError(f"scan: xs leaf {i} is 0-d; every xs leaf needs a leading axis to "
                             "scan over.")
        sizes.append(shape[0])
    if sizes and any(s != sizes[0] for s in sizes):
        raise ValueError(f"scan: the xs leaves have different leading axis sizes {sizes}; "
                         "they must all have the same length.")
    if length is None:
        if not sizes:
            raise ValueError("scan: with xs=None (or no array leaves in xs) pass length=, the "
                             "number of steps.")
        return sizes[0]
    if sizes and sizes[0] != length:
        raise ValueError(f"scan: length={length} but the xs leaves have leading axis size "
                         f"{sizes[0]}.")
    return length


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Loop `f(carry, x) -> (carry, y)` over the leading axis of `xs`, stacking the ys.

    Semantics of this Python version (JAX's):

        def scan(f, init, xs, length=None):
            carry, ys = init, []
            for x in xs:
                carry, y = f(carry, x)
                ys.append(y)
            return carry, stack(ys)

    Args:
      f: `(carry, x) -> (carry, y)`; the carry keeps its pytree structure, shapes and
        dtypes; y may be any pytree of arrays (None for none).
      init: the initial carry (a pytree of arrays).
      xs: a pytree of arrays sharing a leading axis, or None (then pass `length`).
      length: the number of steps when xs is None (else checked against xs).
      reverse: run from the last element to the first (ys stay aligned with xs).
      unroll: accepted for JAX compatibility; the loop runs in Python, where unrolling
        would not change the results, so it has no effect.

    Returns:
      `(final carry, stacked ys)`.

    `f` is traced once (on shapes and dtypes) into a program that is replayed each step;
    under jit it is staged once. Differentiable in forward and reverse mode, any order.

    Example:
      def step(h, x):
          h = fnp.tanh(x @ w + h @ u)
          return h, h
      h_last, hs = fnad.lax.scan(step, h0, xs)    # xs: (T, batch, d)
    """
    if not callable(f):
        raise TypeError(f"scan: f must be callable, got {type(f).__name__}.")
    if not (isinstance(unroll, bool) or (isinstance(unroll, int) and unroll >= 1)):
        raise TypeError(f"scan: unroll must be a positive int or a bool, got {unroll!r}.")
    init_flat, carry_tree = tree_flatten(init)
    init_flat = [_leaf(c, "scan", "init", i) for i, c in enumerate(init_flat)]
    xs_flat, xs_tree = tree_flatten(xs)
    xs_flat = [_leaf(x, "scan", "xs", i) for i, x in enumerate(xs_flat)]
    n = _scan_length(xs_flat, length)
    nk = len(init_flat)
    x_avals = [a.update(shape=a.shape[1:]) for a in map(aval_of, xs_flat)]

    def make_fun(box):
        box["carry_tree"] = carry_tree

        def fun(*flat):
            out = f(tree_unflatten(carry_tree, flat[:nk]), tree_unflatten(xs_tree, flat[nk:]))
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                n_out = f" of {len(out)}" if isinstance(out, (tuple, list)) else ""
                raise TypeError("scan: f must return a pair (carry, y), got "
                                f"{type(out).__name__}{n_out}.")
            c_flat, c_tree = tree_flatten(out[0])
            if c_tree != carry_tree:
                raise TypeError("scan: f's carry output has a different structure from init:\n"
                                f"  init:         {carry_tree}\n  carry output: {c_tree}")
            y_flat, box["y_tree"] = tree_flatten(out[1])
            return (*c_flat, *y_flat)
        return fun

    graph, box, carry_avals = _trace_loop_body("scan", make_fun, init_flat, x_avals,
                                               "the carry")
    init_flat = [_as_array(c, a, init_flat + xs_flat) for c, a in zip(init_flat, carry_avals)]
    body, consts = close(graph, "scan_body")
    body, consts, kept, products = hoist_projections(body, consts, len(consts), nk)
    # the input projections of every step, one GEMM each (fnad/lax/_hoist.py)
    xs_flat = [xs_flat[m] for m in kept] + [project(mm, xs_flat[i], w) for mm, i, w in products]
    nc = len(consts)
    if _differentiated(consts + init_flat + xs_flat):
        body = stacking_body(body, nc, nk)
    outs = scan_p.bind(*consts, *init_flat, *xs_flat, body=body, num_consts=nc, num_carry=nk,
                       length=n, reverse=bool(reverse))
    ny = len(graph.outvars) - nk
    return (tree_unflatten(carry_tree, list(outs[:nk])),
            tree_unflatten(box["y_tree"], list(outs[nk:nk + ny])))


# ----------------------------------------------------------------------------- cond

def _check_pred(pred, fname):
    a = (aval_of(pred) if isinstance(pred, (Tracer, bool, int, float)) or hasattr(pred, "dtype")
         else None)
    if a is None or a.shape != () or a.dtype.kind not in "biu":
        what = type(pred).__name__ if a is None else f"{a.dtype.name}{list(a.shape)}"
        raise TypeError(f"{fname}: pred must be a boolean (or integer) scalar, got {what}; "
                        "reduce it to one value first (e.g. fnp.all(x > 0)), and compare "
                        "floats explicitly (x > 0).")


def _merge_consts(graphs, names):
    """Closed branch graphs that take the same inputs: the outer values and constants of
    every branch (each ignores the others'), then the operands."""
    closed = [close(g, name) for g, name in zip(graphs, names)]
    consts = [v for _, vals in closed for v in vals]
    out = []
    for k, (g, vals) in enumerate(closed):
        n_own = len(vals)
        lead = g.invars[:n_own]
        before = [Var(aval_of(v)) for _, vs in closed[:k] for v in vs]
        after = [Var(aval_of(v)) for _, vs in closed[k + 1:] for v in vs]
        out.append(shared(Graph(before + lead + after + g.invars[n_own:], g.eqns, g.outvars,
                                g.in_tree, g.out_tree, (), g.name)))
    return out, consts


def cond(pred, true_fun, false_fun, *operands):
    """`true_fun(*operands)` if pred else `false_fun(*operands)`, as one operation.

    Both branches are traced (on shapes and dtypes) and must return the same pytree
    structure, shapes and dtypes. Under jit `pred` may be a staged value: both branches
    are staged and pred chooses at run time. Differentiable (forward and reverse) through
    the branch taken.

    Example:
      y = fnad.lax.cond(x.sum() > 0, lambda x: x * 2, lambda x: -x, x)
    """
    for fn, which in ((true_fun, "true_fun"), (false_fun, "false_fun")):
        if not callable(fn):
            raise TypeError(f"cond: {which} must be callable, got {type(fn).__name__}.")
    _check_pred(pred, "cond")
    ops_flat, in_tree = tree_flatten(operands)
    ops_flat = [_leaf(x, "cond", "operand", i) for i, x in enumerate(ops_flat)]
    avals = [aval_of(x) for x in ops_flat]
    graphs, trees = [], []
    for fn in (false_fun, true_fun):
        box = {}

        def fun(*flat, fn=fn, box=box):
            out_flat, box["tree"] = tree_flatten(fn(*tree_unflatten(in_tree, list(flat))))
            return out_flat
        graphs.append(trace_flat(fun, avals, "cond"))
        trees.append(box["tree"])
    if trees[0] != trees[1]:
        raise TypeError("cond: true_fun and false_fun must return the same structure:\n"
                        f"  true_fun:  {trees[1]}\n  false_fun: {trees[0]}")
    for k, (a, b) in enumerate(zip(out_avals(graphs[1]), out_avals(graphs[0]))):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise TypeError(f"cond: true_fun and false_fun must return the same shapes and "
                            f"dtypes, but output leaf {k} of {trees[1]} is "
                            f"{a.dtype.name}{list(a.shape)} from true_fun and "
                            f"{b.dtype.name}{list(b.shape)} from false_fun; cast one "
                            "(.astype(...)) or reshape it.")
    branches, consts = _merge_consts(graphs, ("cond_false", "cond_true"))
    outs = cond_p.bind(pred, *consts, *ops_flat, branches=tuple(branches))
    return tree_unflatten(trees[1], list(outs))


# ----------------------------------------------------------------------------- loops

def while_loop(cond_fun, body_fun, init_val):
    """`val = init_val; while cond_fun(val): val = body_fun(val); return val`, as one
    operation.

    `cond_fun(val)` returns a boolean scalar; `body_fun(val)` returns a value of the same
    pytree structure, shapes and dtypes. Under jit both are staged once. Forward-mode
    differentiable (jvp, jacfwd); reverse mode raises, as in JAX: use `fori_loop` with
    Python int bounds or `scan`.

    Example:
      i, x = fnad.lax.while_loop(lambda s: s[0] < 10, lambda s: (s[0] + 1, s[1] * 2),
                                 (0, x))
    """
    for fn, which in ((cond_fun, "cond_fun"), (body_fun, "body_fun")):
        if not callable(fn):
            raise TypeError(f"while_loop: {which} must be callable, got {type(fn).__name__}.")
    init_flat, tree = tree_flatten(init_val)
    init_flat = [_leaf(c, "while_loop", "init_val", i) for i, c in enumerate(init_flat)]

    def make_fun(box):
        box["carry_tree"] = tree

        def fun(*flat):
            out_flat, out_tree = tree_flatten(body_fun(tree_unflatten(tree, list(flat))))
            if out_tree != tree:
                raise TypeError("while_loop: body_fun must return the structure of init_val:\n"
                                f"  init_val: {tree}\n  body_fun: {out_tree}")
            return out_flat
        return fun

    body, _, avals = _trace_loop_body("while_loop", make_fun, init_flat, [],
                                      "body_fun's output")
    init_flat = [_as_array(c, a, init_flat) for c, a in zip(init_flat, avals)]
    test = trace_flat(lambda *flat: cond_fun(tree_unflatten(tree, list(flat))), avals,
                      "while_loop")
    t = out_avals(test)
    if len(t) != 1 or t[0].shape != () or t[0].dtype != np.bool_:
        got = ", ".join(f"{a.dtype.name}{list(a.shape)}" for a in t)
        raise TypeError(f"while_loop: cond_fun must return a boolean scalar, got ({got}); "
                        "e.g. return i < n, or fnp.all(...) for an array condition.")
    test, c_consts = close(test, "while_cond")
    body, b_consts = close(body, "while_body")
    return tree_unflatten(tree, list(while_p.bind(
        *c_consts, *b_consts, *init_flat, cond_graph=test, body_graph=body,
        cond_nconsts=len(c_consts), body_nconsts=len(b_consts))))


def _static_int(x):
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, np.integer)):
        return True
    return type(x) is np.ndarray and x.ndim == 0 and x.dtype.kind in "iu"


def fori_loop(lower, upper, body_fun, init_val):
    """`val = init_val; for i in range(lower, upper): val = body_fun(i, val); return val`.

    With Python (or concrete NumPy) int bounds the loop is a `scan` over `i`, so it is
    differentiable in reverse mode too; with traced bounds it is a `while_loop` (forward
    mode only), as in JAX.

    Example:
      x = fnad.lax.fori_loop(0, 5, lambda i, x: x * 0.5 + i, x)
    """
    if not callable(body_fun):
        raise TypeError(f"fori_loop: body_fun must be callable, got {type(body_fun).__name__}.")
    if _static_int(lower) and _static_int(upper):
        xp = array_module(*tree_flatten(init_val)[0])  # the counter goes where the carry is
        idx = xp.arange(int(lower), max(int(lower), int(upper)))
        out, _ = scan(lambda val, i: (body_fun(i, val), None), init_val, idx)
        return out
    for b, which in ((lower, "lower"), (upper, "upper")):
        a = (aval_of(b) if isinstance(b, Tracer) or hasattr(b, "dtype") or isinstance(b, int)
             else None)
        if a is None or a.shape != () or a.dtype.kind not in "iu":
            raise TypeError(f"fori_loop: {which} must be an integer scalar, got {b!r:.60}.")
    _, _, val = while_loop(lambda s: s[0] < s[1],
                           lambda s: (s[0] + 1, s[1], body_fun(s[0], s[2])),
                           (lower, upper, init_val))
    return val
