"""The kernel of a row group (fnad/_jit/rows.py): generated numba source, its wrapper and
its NumPy fallback.

Per row the kernel runs one phase per level of reductions (a reduction of a value that
depends on k earlier reductions is at level k): a phase loops over the row, recomputes the
full values it needs from the inputs and the row statistics known so far, writes each of
its reductions' operands into a row buffer (or reduces an input in place) and the full
outputs of its level; then its reductions finish (`0.0 + pairwise(...)`, fnad/_jit/rowlib.py)
and the statistics of the next level are computed. Inputs are read flattened as "full"
(the group's shape, C-contiguous), "row" (broadcast over the rows), "stat" (one value a
row) or "scalar"; any other broadcast is materialised first. A column sum (a sum over the
leading axes) adds each row's values onto its output, +0.0 at first, rows in order (NumPy's
order, as `np.add.reduce` starts from its identity). Float constants are read from
an array at run time and negations are sign-bit xors with a mask read at run time, so
LLVM can neither turn `x * -1` into a negation nor move one (docs/jit.md, NaN sign bits).
"""

import hashlib
import math
import os
import re

import numpy as np

from .._core.abstract import ShapedArray
from .._core.tracer import Primitive
from .._graph.graph import Graph
from .._graph.ir import Eqn, Var
from .compile import compile_graph
from .fusion import _operand_dtype
from .kernels import (FAST_OPS, _NB_TEMPLATES, _dtype_name, _load_source, _runner,
                      _scalar_literal, fast_imports, fast_name, power_products)

__all__ = ["RowKernel", "fused_rows", "make_row_eqn", "stat_shape"]

def stat_shape(S, p):
    """The shape of a row statistic of full shape S split at p (keepdims)."""
    return tuple(S[:p]) + (1,) * (len(S) - p)


class RowKernel:
    """`kernel(*inputs) -> tuple of outputs` for one row group."""

    takes_out = False

    def __init__(self, name, S, p, out_avals):
        self.fast_lines = ""  # fast math's imports (fnad/_jit/fastmath.py), if it is one
        self.name = self.__name__ = name
        self.S, self.p = S, p
        self.out_avals = out_avals
        self.fallback = None  # why the NumPy program runs instead, if it always does
        self.run = None
        self.source = None

    def __call__(self, *xs):
        return self.run(*xs)

    def __repr__(self):
        return self.name


def _rows_impl(*xs, kernel):
    return kernel(*xs)


def _rows_aval(*avals, kernel):
    return list(kernel.out_avals)


fused_rows = Primitive("fused_rows", _rows_impl, multiple_results=True)
fused_rows.abstract_eval = _rows_aval

_SHORT = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "negative": "neg",
          "broadcast_to": "bcast"}


def _pad(shape, d):
    return (1,) * (d - len(shape)) + tuple(shape)


def _mode(shape, S, p, stat):
    """How an input of `shape` is read in a full (or `stat`) step of group (S, p)."""
    d = len(S)
    pad = _pad(shape, d)
    if math.prod(pad) == 1:
        return "scalar"
    K = stat_shape(S, p)
    if stat:
        return "stat" if pad == K else "gstat"
    if pad == tuple(S):
        return "full"
    if all(s == 1 for s in pad[:p]) and pad[p:] == tuple(S[p:]):
        return "row"
    if pad[:p] == K[:p] and all(s == 1 for s in pad[p:]):
        return "stat"
    return "gfull"


class _Source:
    """The kernel's source, built from the group's equations."""

    def __init__(self, eqns, group, idx, fast=False):
        self.fast = fast  # fast math: approximations of FAST_OPS, reassociated sums
        self.eqns, self.g = eqns, group
        self.S, self.p = group.S, group.p
        self.local = {e.outvars[0]: k for k, e in enumerate(eqns)}
        self.inputs, self.in_index = [], {}  # atoms; id/Var -> index
        self.reads = {}  # (input index, mode) -> argument number
        self.kc = []  # float constants read at run time
        self.role, self.level, self.types = [], [], {}
        for k, e in enumerate(eqns):
            j = idx[k]
            if j in group.reductions:
                role = e.prim.name
            elif e.prim.name == "broadcast_to":
                role = "bcast"
            else:
                role = group.kind[e.outvars[0]]
            self.role.append(role)
            lv = [self.level[self.local[v]] for v in e.invars() if v in self.local]
            self.level.append(max(lv, default=0) + (role in ("sum", "mean", "max", "min")))
            if role in ("full", "stat"):
                self.types[k] = group.types[j]

    def input(self, a, stat):
        key = a if type(a) is Var else id(a)
        k = self.in_index.get(key)
        if k is None:
            k = self.in_index[key] = len(self.inputs)
            self.inputs.append(a)
        shape = a.aval.shape if type(a) is Var else np.shape(a)
        mode = _mode(shape, self.S, self.p, stat)
        return self.reads.setdefault((k, mode), len(self.reads))


def _read_value(src, a, stat):
    m = src.input(a, stat)
    return f"a{m}"


def _step_expr(src, k, stat, pre):
    e = src.eqns[k]
    op, loop, out = src.types[k]
    args = e.args if op != "astype" else e.args[:1]
    names = []
    for a, t in zip(args, loop):
        if type(a) is Var and a in src.local:
            have, name = src.eqns[src.local[a]].outvars[0].aval.dtype, f"t{src.local[a]}"
        elif type(a) in (bool, int, float):
            if t.kind == "f":
                name = f"c{len(src.kc)}"
                pre.append(f"    {name} = np.{_dtype_name(t)}(kc[{len(src.kc)}])")
                src.kc.append(float(a))
            else:
                name = _scalar_literal(a, t)
            names.append(name)
            continue
        else:
            have, name = _operand_dtype(a), _read_value(src, a, stat)
        names.append(name if np.dtype(have) == t else f"np.{_dtype_name(t)}({name})")
    if op == "power":  # x ** n by products (rows.py admits it by kernels.power_exponent)
        return power_products(names[0], int(args[1]))
    if op == "negative" and out.kind == "f":
        return f"flip{out.itemsize * 8}({names[0]}, m{out.itemsize * 8})"
    if op == "where":
        return f"{names[1]} if {names[0]} else {names[2]}"
    if op == "astype":
        return f"np.{_dtype_name(out)}({names[0]})"
    if op in _NB_TEMPLATES:
        return _NB_TEMPLATES[op].format(*names, t=_dtype_name(out))
    if src.fast and op in FAST_OPS:
        return f"{fast_name(op, out)}({names[0]})"
    return f"np.{op}({', '.join(names)})"


def _needed(src, targets, lvl):
    """Full/bcast equations (indices, in order) a phase at level `lvl` computes."""
    need, todo = set(), [k for k in targets]
    while todo:
        k = todo.pop()
        if k in need:
            continue
        need.add(k)
        for v in src.eqns[k].invars():
            j = src.local.get(v)
            if j is not None and src.role[j] in ("full", "bcast"):
                todo.append(j)
    return sorted(need)


def _source(src, outs):
    """The generated kernel function's text."""
    out_of = {src.local[v]: m for m, v in enumerate(outs)}
    pre, body = [], []
    top = max(src.level)
    red = [k for k, r in enumerate(src.role) if r in ("sum", "mean", "max", "min")]
    for L in range(top + 1):
        for k, r in enumerate(src.role):  # the statistics of this level
            if r == "stat" and src.level[k] == L:
                body.append(f"        t{k} = {_step_expr(src, k, True, pre)}")
                if k in out_of:
                    body.append(f"        o{out_of[k]}[r] = t{k}")
        here = [k for k in red if src.level[k] == L + 1]
        outs_here = [k for k in out_of if src.role[k] in ("full", "bcast")
                     and src.level[k] == L]
        cols = [k for k in out_of if src.role[k] == "col" and src.level[k] == L]
        targets = [src.local[src.eqns[k].args[0]] for k in here + cols
                   if src.eqns[k].args[0] in src.local] + outs_here
        loop = []
        for k in _needed(src, targets, L):
            e = src.eqns[k]
            expr = (f"t{src.local[e.args[0]]}" if src.role[k] == "bcast"
                    else _step_expr(src, k, False, pre))
            loop.append(f"            t{k} = {expr}")
        fins = []
        for k in here:
            v = src.eqns[k].args[0]
            dt = _dtype_name(v.aval.dtype)
            if v in src.local:
                loop.append(f"            b{k}[c] = t{src.local[v]}")
                buf, at = f"b{k}", "0"
                pre.append(f"    b{k} = np.empty(n, np.{dt})")
            else:
                buf, at = f"x{src.input(v, False)}r", "0"
            fins.append(_finish(src.role[k], k, buf, at, dt, src.fast))
        for k in outs_here:
            loop.append(f"            o{out_of[k]}r[c] = t{k}")
        for k in cols:  # NumPy's column order: the rows in order, onto +0.0 (_build)
            loop.append(f"            o{out_of[k]}[c] += t{src.local[src.eqns[k].args[0]]}")
        if loop:
            body.append("        for c in range(n):")
            body.extend(_reads(src, loop))
            body.extend(loop)
        for k in here:
            body.extend(fins.pop(0))
            if k in out_of:
                body.append(f"        o{out_of[k]}[r] = t{k}")
    return pre, body


def _finish(kind, k, buf, at, dt, fast=False):
    if kind in ("sum", "mean"):
        lines = [f"        t{k} = np.{dt}(0.0) + {'fastsum' if fast else 'pairwise'}"
                 f"({buf}, {at}, n)"]
        if kind == "mean":
            lines.append(f"        t{k} = np.{dt}(np.float64(t{k}) / np.float64(n))")
        return lines
    slc = f"{buf}[{at}:{at} + n]" if at != "0" else buf
    return [f"        t{k}, amb = row{kind}({slc}, n)", "        if amb:", "            bad[0] = 1"]


def _reads(src, loop):
    used = set(re.findall(r"\ba(\d+)\b", "\n".join(loop)))
    lines = []
    for (_, mode), m in src.reads.items():
        if str(m) in used and mode in ("full", "gfull"):
            lines.append(f"            a{m} = x{m}r[c]")
        elif str(m) in used and mode == "row":
            lines.append(f"            a{m} = x{m}[c]")
    return lines


_HEAD = """# generated by fnad.jit (fnad/_jit/rowkernel.py): a fused row kernel
# rowlib {rowlib}
import numpy as np
from numba import njit
from fnad._jit.rowlib import pairwise, rowmax, rowmin, flip32, flip64
{fast}
{source}
serial = njit(cache=True, error_model="numpy", nogil=True)(kernel)
"""


def _rowlib_digest():
    """A digest of rowlib's source: numba's disk cache checks a kernel's own file only, so
    a kernel compiled against another rowlib must get another file."""
    if not _digest:
        with open(os.path.join(os.path.dirname(__file__), "rowlib.py"), "rb") as f:
            _digest.append(hashlib.sha1(f.read()).hexdigest()[:16])
    return _digest[0]


_digest = []


def make_row_eqn(graph, group, used, fast=False):
    """The `fused_rows` equation of `group` (a rows.Group), whose outputs are `used`
    (`fast`: fast math's kernel)."""
    idx = sorted(group.idx)
    eqns = [_copy(graph.eqns[j]) for j in idx]
    src = _Source(eqns, group, idx, fast)
    pre, body = _source(src, used)
    stats = []
    for (k, mode), m in src.reads.items():  # stat and scalar reads, once a row / kernel
        if mode in ("stat", "gstat"):
            stats.append(f"        a{m} = x{m}[r]")
        elif mode == "scalar":
            pre.append(f"    a{m} = x{m}[0]")
    nx, no = len(src.reads), len(used)
    text = "\n".join(body)  # the row slices of the full inputs and outputs the body reads
    rows_of = [a for a in [f"x{m}" for m in range(nx)] + [f"o{m}" for m in range(no)]
               if re.search(rf"\b{a}r\b", text)]
    head = (f"def kernel(lo, hi, n, kc, ki, {''.join(f'x{m}, ' for m in range(nx))}"
            f"{''.join(f'o{m}, ' for m in range(no))}bad):")
    lines = [head, "    m32 = np.int32(ki[1])", "    m64 = ki[0]"] + pre + [
        "    for r in range(lo, hi):", "        base = r * n"] + stats + [
        f"        {a}r = {a}[base:base + n]" for a in rows_of] + body
    text = "\n".join(lines) + "\n"
    S, p = group.S, group.p
    out_avals = [ShapedArray(v.aval.shape, v.aval.dtype) for v in used]
    ops = ",".join(_SHORT.get(e.prim.name, e.prim.name) for e in eqns)
    kernel = RowKernel(f"rows{'_fast' if fast else ''}[{ops}]", S, p, out_avals)
    kernel.source = text
    kernel.fast_lines = ("\n".join(fast_imports(e.prim.name for e in eqns)
                                   + ["from fnad._jit.fastmath import fastsum"]) if fast
                         else "")
    _build(kernel, src, eqns, used)
    return Eqn(fused_rows, tuple(src.inputs), {"kernel": kernel}, list(used))


def _copy(e):
    return Eqn(e.prim, e.args, e.kwargs, e.outvars, e.scope)


def _numpy_program(kernel, src, eqns, used):
    ins = [a if type(a) is Var else Var(ShapedArray(np.shape(a), np.asarray(a).dtype))
           for a in src.inputs]
    remap = {id(a): v for a, v in zip(src.inputs, ins) if type(a) is not Var}
    sub_eqns = [Eqn(e.prim, tuple(remap.get(id(a), a) if type(a) is not Var else a
                                  for a in e.args), e.kwargs, e.outvars) for e in eqns]
    need, live = set(used), []
    for e in reversed(sub_eqns):  # only what `used` needs: a dead member of the group (dce
        if any(v in need for v in e.outvars):  # off) may read values that are no input
            live.append(e)
            need.update(e.invars())
    run = compile_graph(Graph(ins, live[::-1], list(used), None, None, name=kernel.name))
    views = [m for m, v in enumerate(used) if src.role[src.local[v]] == "bcast"]

    def numpy_run(*xs):
        outs = run(*xs)
        for m in views:  # a broadcast view: the kernel's outputs are fresh arrays
            outs[m] = np.array(outs[m])
        return tuple(outs)
    return numpy_run


def _build(kernel, src, eqns, used):
    """Set kernel.run: the numba kernel, falling back to the NumPy program for inputs that
    are not C-contiguous, for rows whose max/min order matters and if numba fails."""
    numpy_run = _numpy_program(kernel, src, eqns, used)
    S, p = kernel.S, kernel.p
    R, n = math.prod(S[:p]), math.prod(S[p:])
    K = stat_shape(S, p)
    kc = np.array(src.kc, np.float64)
    ki = np.array([-(1 << 63), -(1 << 31)], np.int64)
    prep = []
    for (k, mode), m in src.reads.items():
        if mode == "gfull":
            prep.append((k, lambda x: np.ascontiguousarray(np.broadcast_to(x, S)).reshape(-1)))
        elif mode == "gstat":
            prep.append((k, lambda x: np.ascontiguousarray(np.broadcast_to(x, K)).reshape(-1)))
        else:
            prep.append((k, lambda x: np.ascontiguousarray(x).reshape(-1)))
    fulls = sorted({k for (k, mode) in src.reads if mode == "full"})
    roles = [src.role[src.local[v]] for v in used]
    sizes = [n if r == "col" else R * n if r in ("full", "bcast") else R for r in roles]
    serial = "col" in roles  # column sums add the rows in order: one call over all rows
    dtypes = [v.aval.dtype for v in used]
    shapes = [a.shape for a in kernel.out_avals]
    state = {}

    def fast(*xs):
        for k in fulls:
            if not xs[k].flags.c_contiguous:
                return numpy_run(*xs)
        fn = state.get("fn")
        if fn is None:
            fn = state["fn"] = _load_source(_HEAD.format(
                source=kernel.source, rowlib=_rowlib_digest(), fast=kernel.fast_lines)).serial
        args = [f(xs[k]) for k, f in prep]
        outs = [np.zeros(s, d) if r == "col" else np.empty(s, d)
                for s, d, r in zip(sizes, dtypes, roles)]
        bad = np.zeros(1, np.int8)
        allargs = (n, kc, ki, *args, *outs, bad)
        if _runner and R > 1 and not serial:
            _runner[0](fn, R, allargs, R * n * (max(src.level) + 1))  # elements touched
        else:
            fn(0, R, *allargs)
        if bad[0]:
            return numpy_run(*xs)
        return tuple(o.reshape(s) for o, s in zip(outs, shapes))

    def first(*xs):  # compiles on the first call; a numba failure keeps NumPy's program
        from numba.core.errors import NumbaError  # noqa: PLC0415 - optional dependency
        try:
            res = fast(*xs)
            kernel.run = fast
        except NumbaError as e:
            kernel.fallback = f"{type(e).__name__}: {str(e).splitlines()[0]}"
            kernel.run = numpy_run
            res = numpy_run(*xs)
        return res
    kernel.run = first
