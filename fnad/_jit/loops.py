"""Weight GEMMs of unrolled loops batched into one, under fast math: `batch_loop_gemms`.

`fnad.jit` traces a Python loop over time (`for t in range(T): h = tanh(x[:, t] @ W + h @
U)`) into `T` copies of its body, and `jit(grad)` of it holds `T` small GEMMs per weight
twice: the input projections `x_t @ W` and, in the backward, the weight gradients as an
add chain of `a_t^T @ g_t`. As `lax.scan` does for its loops (fnad/lax/_hoist.py), this
pass makes each of them one GEMM:

- **Input projections.** Matmuls `getitem(X, idx_t) @ W` with the same `X` and 2-D `W`,
  whose indices (ints and slices) leave `X`'s last axis whole, become one GEMM of `X` as
  `(rows, d_in)` times `W`, reshaped back; each original result is the same index of it
  (when every index is `x[:, ..., t]`, X's step axis is moved first, so that each step's
  slice of the result is contiguous). Only where the slices cover at least half of `X`'s
  rows (else it would compute too much).
- **Weight-gradient sums.** An add tree whose leaves include at least two matmuls
  `transpose(a_t) @ g_t` (2-D, each read by the tree only; a 2-D constant in place of
  `transpose(a_t)` counts too) becomes `concatenate(a_t)^T @ concatenate(g_t)`, one GEMM
  over the `sum_t rows_t` rows, plus the tree's other leaves; one with at least two column
  sums `sum(g_t, axis=0)` (a bias's gradient) becomes one sum of `concatenate(g_t)`.

- **Stacks of matrices times a 2-D weight.** Any other `x (..., m, k) @ w (k, n)` becomes
  one GEMM of `x` as `(rows, k)`, reshaped back: NumPy runs a GEMM per matrix (a
  transformer's linear layers: 32 GEMMs of 64 rows instead of one of 2048).

All reassociate sums: a projection row comes from a bigger GEMM that BLAS may block
differently, and a weight gradient sums its products inside one GEMM rather than `T`
GEMMs added in turn. So the pass runs only under `fnad.jit(f, fast_math=True)` (docs/jit.md,
"Fast math": within the bound of a reassociated sum); exact jit keeps eager's bits.
"""

import numpy as np

from .._core.tracer import PRIMITIVES
from .._graph.ir import Eqn, Var, is_array_const, read_counts, rebuild
from .passes import eliminate_dead_code

__all__ = ["batch_loop_gemms"]

MIN_GEMMS = 2  # the fewest GEMMs a group must hold to be batched


def _prims():
    return {p.name: p for p in PRIMITIVES
            if p.name in ("getitem", "reshape", "concatenate", "transpose", "add")}


def _is_matmul(e):
    return (e is not None and e.prim.name == "matmul" and not e.kwargs and len(e.args) == 2
            and len(e.outvars) == 1)


def _shape(a):
    return tuple(a.aval.shape) if type(a) is Var else tuple(np.shape(a))


def _dtype(a):
    return np.dtype(a.aval.dtype if type(a) is Var else a.dtype)


def _atom_key(a):
    return a if type(a) is Var else ("const", id(a))


def _var(like, shape):
    return Var(like.aval.update(shape=tuple(shape)))


# ----------------------------------------------------------------------------- projections

def _keeps_last_axis(idx, ndim):
    """`idx` is a tuple of ints and slices that leaves the last of `ndim` axes whole."""
    return (type(idx) is tuple and 0 < len(idx) < ndim
            and all(type(i) is slice or isinstance(i, (int, np.integer))
                    and not isinstance(i, (bool, np.bool_)) for i in idx))


def _projection(e, prod):
    """(X, idx, W) when `e` is `getitem(X, idx) @ W` of the kind the pass batches."""
    if not _is_matmul(e):
        return None
    x, w = e.args
    ge = prod.get(x) if type(x) is Var else None
    if ge is None or ge.prim.name != "getitem" or ge.kwargs or len(ge.args) != 2:
        return None
    big, idx = ge.args
    if type(big) is not Var or not (type(w) is Var or is_array_const(w)):
        return None
    shape, ws = _shape(big), _shape(w)
    if (not _keeps_last_axis(idx, len(shape)) or len(ws) != 2 or ws[0] != shape[-1]
            or 0 in shape or 0 in ws or _dtype(big) != _dtype(w)
            or _dtype(w) != np.dtype(e.outvars[0].aval.dtype)):
        return None
    return big, idx, w


def _projection_groups(graph):
    """{(X, W key): [(position, X, idx, W, rows of the slice)]} of the matmuls
    `getitem(X, idx) @ W`."""
    prod = {v: e for e in graph.eqns for v in e.outvars}
    groups = {}
    for k, e in enumerate(graph.eqns):
        p = _projection(e, prod)
        if p is not None:
            rows = int(np.prod(_shape(e.args[0])[:-1]))
            groups.setdefault((p[0], _atom_key(p[2])), []).append((k,) + p + (rows,))
    return groups


def _worth_it(members):
    """At least MIN_GEMMS matmuls, whose slices cover at least half of X's rows."""
    rows = int(np.prod(_shape(members[0][1])[:-1]))
    return len(members) >= MIN_GEMMS and 2 * sum(m[4] for m in members) >= rows


def _step_axis(members):
    """k when every index is `(:, ..., :, t)` with its int at the same axis k > 0 (the steps
    of a batch-first loop, `x[:, t]`), else None."""
    full = slice(None, None, None)
    ks = [len(idx) - 1 for _, _, idx, _, _ in members
          if all(i == full for i in idx[:-1]) and type(idx[-1]) is not slice]
    if len(ks) != len(members) or len(set(ks)) != 1:
        return None
    return ks[0] or None


def _projection_eqns(members, prims, scope):
    """The equations of `X @ W` as one GEMM, shaped as X with d_out last (the step axis
    first when the indices step along one axis k > 0, so that each step's slice is
    contiguous): (eqns, Y, the index into Y of each member)."""
    mm, x, _, w, _ = members[0]
    shape, out, d_out = _shape(x), mm.outvars[0], _shape(w)[1]
    k = _step_axis(members)
    eqns, idxs = [], [idx for _, _, idx, _, _ in members]
    if k is not None:  # X's step axis moved first: a copy of X, contiguous steps of Y
        perm = (k,) + tuple(a for a in range(len(shape)) if a != k)
        moved = _var(x, tuple(shape[a] for a in perm))
        eqns.append(Eqn(prims["transpose"], (x, perm), {}, [moved], scope))
        x, shape, idxs = moved, _shape(moved), [(idx[-1],) for idx in idxs]
    if len(shape) == 2:
        y = _var(out, shape[:-1] + (d_out,))
        return eqns + [Eqn(mm.prim, (x, w), {}, [y], scope)], y, idxs
    rows = int(np.prod(shape[:-1]))
    x2, y2 = _var(x, (rows, shape[-1])), _var(out, (rows, d_out))
    y = _var(out, shape[:-1] + (d_out,))
    return eqns + [Eqn(prims["reshape"], (x, (rows, shape[-1]), "C"), {}, [x2], scope),
                   Eqn(mm.prim, (x2, w), {}, [y2], scope),
                   Eqn(prims["reshape"], (y2, y.aval.shape, "C"), {}, [y], scope)], y, idxs


def hoist_projections(graph, prims):
    """`graph` with each group of input projections one GEMM (module docstring); the number
    of GEMMs it removed."""
    groups = [m for m in _projection_groups(graph).values() if _worth_it(m)]
    if not groups:
        return graph, 0
    first, replaced = {}, set()
    for members in groups:
        members = [(graph.eqns[k], x, idx, w, r) for k, x, idx, w, r in members]
        first[id(members[0][0])] = members
        replaced.update(id(m[0]) for m in members)
    eqns, reads, removed = [], {}, 0
    for e in graph.eqns:
        members = first.get(id(e))
        if members is not None:
            new, y, idxs = _projection_eqns(members, prims, e.scope)
            eqns.extend(new)
            for m, idx in zip(members, idxs):
                reads[id(m[0])] = (y, idx)
            removed += len(members) - 1
        if id(e) not in replaced:
            eqns.append(e)
        else:
            eqns.append(Eqn(prims["getitem"], reads[id(e)], {}, e.outvars, e.scope))
    return rebuild(graph, eqns), removed


# ----------------------------------------------------------------------------- weight sums

def _is_add(e):
    """`e` is an add of two Vars of its result's shape and dtype (no broadcasting)."""
    if e is None or e.prim.name != "add" or e.kwargs or len(e.args) != 2:
        return False
    out = e.outvars[0].aval
    return all(type(a) is Var and a.aval.shape == out.shape and a.aval.dtype == out.dtype
               for a in e.args)


def _leaves(e, prod, uses, adds):
    """The leaves of the add tree rooted at `e` (left to right): operands that are not an
    add read by this tree only."""
    out = []
    for a in e.args:
        inner = prod.get(a)
        if inner is not None and id(inner) in adds and uses.get(a) == 1:
            out.extend(_leaves(inner, prod, uses, adds))
        else:
            out.append(a)
    return out


def _row_factor(p, prod):
    """`a` (rows, K) with `transpose(a) == p`: a transposed 2-D value or a 2-D constant."""
    if is_array_const(p):
        return p.T if np.ndim(p) == 2 else None
    te = prod.get(p)
    if (te is None or te.prim.name != "transpose" or te.kwargs or len(te.args) != 2
            or type(te.args[0]) is not Var):
        return None
    axes = te.args[1]
    if axes is not None and not (type(axes) in (tuple, list) and tuple(axes) == (1, 0)):
        return None
    return te.args[0] if te.args[0].aval.ndim == 2 else None


def _gradient_product(v, prod, uses):
    """(a, g) when `v` is `transpose(a) @ g` of 2-D factors of its dtype, read once."""
    e = prod.get(v)
    if not _is_matmul(e) or uses.get(v) != 1 or v.aval.ndim != 2:
        return None
    p, g = e.args
    if len(_shape(p)) != 2 or len(_shape(g)) != 2 or type(g) is not Var:
        return None
    if _dtype(p) != v.aval.dtype or _dtype(g) != v.aval.dtype:
        return None
    a = _row_factor(p, prod)
    return None if a is None else (a, g, e.prim)


def _column_sum(v, prod, uses):
    """(g, sum equation) when `v` is `sum(g, axis=0)` of a 2-D `g` of its dtype, read once."""
    e = prod.get(v)
    if (e is None or e.prim.name != "sum" or len(e.args) != 1 or uses.get(v) != 1
            or type(e.args[0]) is not Var or e.args[0].aval.ndim != 2
            or e.args[0].aval.dtype != v.aval.dtype):
        return None
    kw = e.kwargs
    if (set(kw) - {"axis", "dtype", "keepdims"} or kw.get("axis") not in (0, (0,))
            or kw.get("dtype") is not None or kw.get("keepdims")):
        return None
    return e.args[0], e


class _Stacks:
    """The concatenations along axis 0 the rewritten trees read, each made once."""

    def __init__(self, prims):
        self.prims, self.made = prims, {}

    def of(self, parts, like, eqns, scope):
        key = tuple(_atom_key(p) for p in parts)
        v = self.made.get(key)
        if v is None:
            rows = sum(_shape(p)[0] for p in parts)
            v = self.made[key] = _var(like, (rows,) + _shape(parts[0])[1:])
            eqns.append(Eqn(self.prims["concatenate"], tuple(parts), {"axis": 0}, [v], scope))
        return v


def _sum_eqns(root, plan, stacks):
    """The tree's batched leaf (one GEMM `concatenate(a)^T @ concatenate(g)`, or one column
    sum of `concatenate(g)`) plus its other leaves, bound to the root's result."""
    kind, group, others = plan
    scope, out, prims = root.scope, root.outvars[0], stacks.prims
    eqns = []
    g_all = stacks.of([g for _, g, _ in group], out, eqns, scope)
    acc = out if not others else _var(out, out.aval.shape)
    if kind == "gemm":
        a_all = stacks.of([a for a, _, _ in group], out, eqns, scope)
        a_t = _var(out, _shape(a_all)[::-1])
        eqns.append(Eqn(prims["transpose"], (a_all, None), {}, [a_t], scope))
        eqns.append(Eqn(group[0][2], (a_t, g_all), {}, [acc], scope))
    else:
        first = group[0][2]
        eqns.append(Eqn(first.prim, (g_all,), first.kwargs, [acc], scope))
    for j, o in enumerate(others):
        nxt = out if j == len(others) - 1 else _var(out, out.aval.shape)
        eqns.append(Eqn(prims["add"], (acc, o), {}, [nxt], scope))
        acc = nxt
    return eqns


def _plan(root, prod, uses, adds):
    """("gemm" | "colsum", the batched leaves, the other leaves) for an add tree, or None."""
    gemms, sums, rest = [], [], []
    for leaf in _leaves(root, prod, uses, adds):
        gp = _gradient_product(leaf, prod, uses)
        cs = None if gp is not None else _column_sum(leaf, prod, uses)
        if gp is not None:
            gemms.append(gp)
        elif cs is not None:
            sums.append((leaf, cs))
        else:
            rest.append(leaf)
    if len(gemms) >= MIN_GEMMS:
        return "gemm", gemms, rest + [leaf for leaf, _ in sums]
    if len(sums) >= MIN_GEMMS:
        return "colsum", [(None, g, e) for _, (g, e) in sums], rest
    return None


def batch_weight_sums(graph, prims):
    """`graph` with each add tree of weight-gradient GEMMs (or of column sums, a bias's
    gradient) one GEMM (one sum); the number of GEMMs and sums it removed."""
    uses = read_counts(graph)
    prod = {v: e for e in graph.eqns for v in e.outvars}
    adds = {id(e) for e in graph.eqns if _is_add(e)}
    inner = {id(prod[a]) for e in graph.eqns if id(e) in adds for a in e.args
             if a in prod and id(prod[a]) in adds and uses.get(a) == 1}
    plans = {}
    for e in graph.eqns:
        if id(e) in adds and id(e) not in inner:
            plan = _plan(e, prod, uses, adds)
            if plan is not None:
                plans[id(e)] = plan
    if not plans:
        return graph, 0
    eqns, removed, stacks = [], 0, _Stacks(prims)
    for e in graph.eqns:
        plan = plans.get(id(e))
        if plan is None:
            eqns.append(e)
            continue
        eqns.extend(_sum_eqns(e, plan, stacks))
        removed += len(plan[1]) - 1
    return rebuild(graph, eqns), removed


# ----------------------------------------------------------------------------- the pass

def fold_stacked_gemms(graph, prims):
    """Each `x (..., m, k) @ w (k, n)` with a 2-D `w` as one GEMM of `x`'s rows, reshaped
    back: (graph, how many)."""
    eqns, n = [], 0
    for e in graph.eqns:
        if not (_is_matmul(e) and len(_shape(e.args[0])) > 2 and len(_shape(e.args[1])) == 2):
            eqns.append(e)
            continue
        (x, w), out = e.args, e.outvars[0]
        shape = _shape(x)
        rows = int(np.prod(shape[:-1]))
        y2 = _var(out, (rows, out.aval.shape[-1]))
        if type(x) is Var:
            x2 = _var(x, (rows, shape[-1]))
            eqns.append(Eqn(prims["reshape"], (x, (rows, shape[-1]), "C"), {}, [x2], e.scope))
        else:  # a constant, reshaped here
            x2 = np.reshape(x, (rows, shape[-1]))
        eqns.append(Eqn(e.prim, (x2, w), {}, [y2], e.scope))
        eqns.append(Eqn(prims["reshape"], (y2, out.aval.shape, "C"), {}, [out], e.scope))
        n += 1
    return (rebuild(graph, eqns), n) if n else (graph, 0)


def batch_loop_gemms(graph):
    """`graph` with the input projections and weight-gradient sums of its unrolled loops
    each one GEMM, and stacks of matrices times 2-D weights one GEMM of their rows (module
    docstring); dead equations dropped. Reassociates: fast math only."""
    prims = _prims()
    graph, n_proj = hoist_projections(graph, prims)
    graph, n_sums = batch_weight_sums(graph, prims)
    graph, n_fold = fold_stacked_gemms(graph, prims)
    if not n_proj and not n_sums and not n_fold:
        return graph
    graph = eliminate_dead_code(graph)
    graph.notes.append(f"loops: {n_proj} projection GEMMs and {n_sums} weight-gradient "
                       f"GEMMs and sums batched into others; {n_fold} stacks of matrices "
                       "times a 2-D weight as one GEMM of their rows")
    return graph
