"""Row fusion: elementwise producers, reductions over trailing axes and the elementwise
consumers of their row statistics as one numba kernel, `fuse_rows(graph)`.

A group has a full shape S split at an axis p: its rows are S[:p] flattened (R of them),
a row the n = prod(S[p:]) values after. Its equations are
  - full:  exact elementwise ops (those numba fuses, fnad/_jit/kernels.py) of shape S;
  - stat:  exact elementwise ops of shape S[:p] + (1,) * (len(S) - p), on row statistics;
  - reductions `sum`, `mean`, `max`, `min` (float32/float64) over the axes p.. with
    keepdims, full -> stat;
  - `broadcast_to` of a stat to S;
  - column sums: `sum` over the axes ..p-1 of a full value of the group (a bias's or a
    gain's gradient), full -> S[p:], accumulated row after row in the kernel.
Groups grow in program order as fusion's clusters do (fnad/_jit/fusion.py): an equation
joins the groups whose values it reads while no equation outside has read them, so the
fused equation, put where the group's last equation was, breaks no data dependence. Only
groups with a reduction or a column sum are fused here; the rest is left to elementwise
fusion. The kernel (fnad/_jit/rowkernel.py) loops over rows, one phase per level of
reductions.

Exact (docs/jit.md): sums in NumPy's pairwise order, `mean` as NumPy's `add.reduce` then
`true_divide` by the count, max/min where no order can matter; a NaN in a max/min row, a
zero max among zeros of both signs, or a full input that is not C-contiguous at run time
(NumPy then reduces in another order) runs the group's NumPy program instead. A self-test
at first use compares the kernel's sums with `np.sum`; if the installed NumPy sums
otherwise, the pass is off (a note on the graph says why). Column sums are NumPy's order
for a C-contiguous array: `out = +0.0`, then `out = out + row_r` for r = 0, 1, ... (a
kernel with one runs its rows in order, on one thread); a second self-test checks it.
"""

import math

import numpy as np

from .._graph.ir import Var, rebuild
from . import fusion
from .fusion import _elementwise, replace_groups
from .kernels import _numba_supports, fast_supports, power_exponent
from .rowkernel import make_row_eqn, stat_shape

__all__ = ["fuse_rows", "self_test", "column_self_test", "row_groups", "fast_step"]

_REDUCE = ("sum", "mean", "max", "min")
_FLOATS = (np.dtype("float32"), np.dtype("float64"))


# --------------------------------------------------------------------------- roles
def _float_reduction(e, names):
    """(x's aval, its reduced axes sorted, keepdims) of a reduction `e` of one float NumPy
    value over the axes it names (a primitive of `names`, no dtype), else None."""
    if e.prim.name not in names or len(e.args) != 1 or type(e.args[0]) is not Var:
        return None
    x = e.args[0].aval
    kw = dict(e.kwargs)
    keep = kw.pop("keepdims", False)
    axis = kw.pop("axis", None)
    if kw.pop("dtype", None) is not None or kw or axis is None:
        return None
    if x.dtype not in _FLOATS or x.xp is not np or x.weak_type:
        return None
    try:
        axes = sorted(int(a) % x.ndim for a in ((axis,) if type(axis) is int else axis))
    except (TypeError, ZeroDivisionError):
        return None
    if e.outvars[0].aval.dtype != x.dtype:
        return None
    if math.prod(x.shape) < max(fusion.MIN_SIZE, 1):  # as fusion: small ones stay
        return None
    return x, axes, keep


def _reduction(e):
    """(S, p) of a reduction the pass takes (over the axes p.. of shape S, keepdims)."""
    r = _float_reduction(e, _REDUCE)
    if r is None or not r[2] or not r[1]:
        return None
    x, axes, _ = r
    if axes != list(range(axes[0], x.ndim)):
        return None
    if e.outvars[0].aval.shape != stat_shape(x.shape, axes[0]):
        return None
    return tuple(x.shape), axes[0]


def _column_sum(e):
    """(S, q) of a column sum the pass takes: `sum` over the axes 0..q-1 of shape S (with
    or without keepdims), S[q:] holding 2 values at least (NumPy sums a lone column
    pairwise)."""
    r = _float_reduction(e, ("sum",))
    if r is None:
        return None
    x, axes, keep = r
    q = len(axes)
    if axes != list(range(q)) or q >= x.ndim or math.prod(x.shape[q:]) < 2:
        return None
    want = (1,) * q + tuple(x.shape[q:]) if keep else tuple(x.shape[q:])
    if e.outvars[0].aval.shape != want or not column_self_test()[0]:
        return None
    return tuple(x.shape), q


def _elem_types(e, fast=False):
    """NumPy's loop types of an exact elementwise step numba computes (`fast`: or one fast
    math approximates), else None."""
    if len(e.outvars) != 1 or e.prim.multiple_results:
        return None
    out = e.outvars[0].aval
    if out.ndim == 0 or out.xp is not np or out.weak_type or 0 in out.shape:
        return None
    t = _elementwise(e, min_size=1, fast=fast)
    if t is None:
        return None
    if t[0] == "power":  # x * x, or under fast math x ** 3 and x ** 4 by products
        return t if power_exponent(e.args, t[2], fast) is not None else None
    return t if _numba_supports(*t) or (fast and fast_supports(*t)) else None


def fast_step(e):
    """Whether a fast-math kernel computes `e` (a cheap elementwise step)."""
    return _elem_types(e, True) is not None


# --------------------------------------------------------------------------- groups
class Group:
    """Equations fused into one row kernel: indices `idx`, full shape S, split p."""

    __slots__ = ("S", "p", "idx", "sealed", "kind", "types", "reductions", "columns")

    def __init__(self, S, p):
        self.S, self.p, self.idx, self.sealed = S, p, [], False
        self.kind = {}  # Var -> "full", "bcast" (of a stat), "stat" or "col"
        self.types = {}  # equation index -> elementwise step types
        self.reductions = set()  # equation indices of the reductions
        self.columns = set()  # equation indices of the column sums


def _join(e, types, live, S, p):
    """The (S, p, kind of e's result) `e` has in one group of shape S split at p made of
    `live`, or None when it cannot join them."""
    name = e.prim.name
    if any(g.kind.get(v) == "col" for g in live for v in e.invars()):
        return None  # a column sum is an output of the group only
    col = _column_sum(e)
    if col is not None:
        if col[0] != S or p not in (None, col[1]):
            return None
        if not any(g.kind.get(e.args[0]) == "full" for g in live):
            return None
        return S, col[1], "col"
    red = _reduction(e)
    if red is not None:
        if red[0] != S or p not in (None, red[1]):
            return None
        v = e.args[0]
        if any(g.kind.get(v) not in (None, "full") for g in live):
            return None
        return S, red[1], "stat"
    if name == "broadcast_to":
        v = e.args[0]
        if (p is None or type(v) is not Var or e.outvars[0].aval.shape != S
                or v.aval.shape != stat_shape(S, p) or not any(g.kind.get(v) == "stat"
                                                                  for g in live)):
            return None
        return S, p, "bcast"
    if types is None:
        return None
    shape = e.outvars[0].aval.shape
    if shape == S:
        return S, p, "full"
    if p is not None and shape == stat_shape(S, p):
        if any(g.kind.get(v) in ("full", "bcast") for g in live for v in e.invars()):
            return None
        return S, p, "stat"
    return None


def row_groups(graph, fast=False):
    """The groups of `graph` with a reduction at least, each a Group (`fast`: fast math's
    steps may join them)."""
    groups, member = [], {}
    for j, e in enumerate(graph.eqns):
        ins = e.invars()
        read = {member[v] for v in ins if v in member}
        live = [g for g in read if not g.sealed]
        types = _elem_types(e, fast)
        fit = None
        if live:
            S = live[0].S
            ps = {g.p for g in live} - {None}
            if all(g.S == S for g in live) and len(ps) <= 1:
                fit = _join(e, types, live, S, next(iter(ps), None))
        elif (red := _reduction(e)) is not None:
            fit = red + ("stat",)
        elif types is not None and e.outvars[0].aval.size >= fusion.MIN_SIZE:
            fit = (tuple(e.outvars[0].aval.shape), None, "full")
        for g in read:
            if fit is None or g not in live:
                g.sealed = True  # read outside: complete
        if fit is None:
            continue
        S, p, kind = fit
        if live:
            g = live[0]
            for h in live[1:]:  # an equation reading two groups merges them
                g.idx += h.idx
                g.kind.update(h.kind)
                g.types.update(h.types)
                g.reductions |= h.reductions
                g.columns |= h.columns
                for v in h.kind:
                    member[v] = g
                h.idx, h.kind = [], {}
        else:
            g = Group(S, None)
            groups.append(g)
        g.p = p if p is not None else g.p
        g.idx.append(j)
        if types is not None:
            g.types[j] = types
        elif kind == "stat":
            g.reductions.add(j)
        elif kind == "col":
            g.columns.add(j)
        g.kind[e.outvars[0]] = kind
        member[e.outvars[0]] = g
    return [g for g in groups if g.idx and g.p is not None and (g.columns or any(
        _reduction(graph.eqns[j]) for j in g.idx))]


# --------------------------------------------------------------------------- the pass
def fuse_rows(graph, fast_math=False):
    """`graph` with each row group replaced by one `fused_rows` equation (see the module
    docstring); unchanged when numba is missing or NumPy fails the self-test. `fast_math`:
    exp, tanh, log, erf and expit join the groups as fast math's approximations and sums
    are reassociated (fnad/_jit/fastmath.py)."""
    if not graph.eqns:
        return graph
    ok, why = self_test()
    if not ok:
        return rebuild(graph, graph.eqns, note=f"rows: off ({why})")
    groups = row_groups(graph, fast_math)
    if not groups:
        return graph
    by_idx = {tuple(sorted(g.idx)): g for g in groups}
    eqns, done = replace_groups(graph, list(by_idx),
                                lambda idx, used: make_row_eqn(graph, by_idx[idx], used,
                                                               fast_math))
    if not done:
        return graph
    fused = sum(len(idx) for idx in done)
    reductions = sum(len(by_idx[idx].reductions) for idx in done)
    columns = sum(len(by_idx[idx].columns) for idx in done)
    note = (f"rows{' (fast math)' if fast_math else ''}: {fused} equations ({reductions} "
            f"reductions, {columns} column sums) into {len(done)} row kernels")
    return rebuild(graph, eqns, note=note)


# --------------------------------------------------------------------------- self-test
_SELF_TEST = []
LENGTHS = (1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 130, 255, 256, 257, 1000, 1029, 4099)


def self_test():
    """(ok, reason): whether the row kernels' sums and means give `np.sum`'s and `np.mean`'s
    bits here (run once, at first use)."""
    if not _SELF_TEST:
        _SELF_TEST.append(_run_self_test())
    return _SELF_TEST[0]


def _run_self_test():
    try:
        from . import rowlib  # noqa: PLC0415 - optional dependency (numba)
    except ImportError:
        return False, "numba is not installed"
    rng = np.random.default_rng(0)
    for dt in _FLOATS:
        for n in LENGTHS:
            rows = [rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n), np.zeros(n),
                    -np.zeros(n), rng.integers(-3, 4, n) * 2.0 ** 60]
            a = np.stack(rows).astype(dt)
            want = np.sum(a, axis=-1, keepdims=True)
            mean = np.mean(a, axis=-1, keepdims=True)
            for r in range(len(rows)):
                s = dt.type(0.0) + dt.type(rowlib.pairwise(a[r], 0, n))
                m = (dt.type(np.float64(s) / np.float64(n)))
                if s.tobytes() != want[r, 0].tobytes() or m.tobytes() != mean[r, 0].tobytes():
                    return False, (f"np.sum of {n} {dt.name} values is not NumPy's pairwise "
                                   "sum as the row kernels compute it")
        a = rng.standard_normal((3, 5, 67)).astype(dt)
        if np.sum(a, axis=(-2, -1)).tobytes() != np.sum(a.reshape(3, -1), axis=-1).tobytes():
            return False, "np.sum over trailing axes is not one pairwise sum of the rows"
    return True, None


_COLUMN_TEST = []
COLUMN_SHAPES = ((1, 5), (2, 2), (5, 3), (300, 2), (5000, 3), (7, 8), (129, 65), (64, 513),
                 (3, 5, 7), (2, 3, 4, 9))


def column_self_test():
    """(ok, reason): whether `np.sum` over the leading axes of a C-contiguous array adds
    its rows in order, as the row kernels' column sums do (run once, at first use)."""
    if not _COLUMN_TEST:
        _COLUMN_TEST.append(_run_column_test())
    return _COLUMN_TEST[0]


def _run_column_test():
    rng = np.random.default_rng(1)
    for dt in _FLOATS:
        for shape in COLUMN_SHAPES:
            a = (rng.standard_normal(shape) * 10.0 ** rng.integers(-4, 5, shape)).astype(dt)
            a.reshape(-1)[::7] = -0.0
            for q in range(1, len(shape)):
                rows = a.reshape(-1, math.prod(shape[q:]))
                acc = np.zeros(rows.shape[1], dt)
                for r in rows:
                    acc = acc + r
                if np.sum(a, axis=tuple(range(q))).reshape(-1).tobytes() != acc.tobytes():
                    return False, (f"np.sum of a {dt.name} array of shape {shape} over its "
                                   f"first {q} axes does not add its rows in order")
    return True, None
