"""Attention fused per (batch, head) tile under fast math: `fuse_attention(graph)`.

Attention written with array ops, `o = exp(s - logsumexp(s)) @ v` with
`s = where(mask, q @ k^T * scale, -inf)`, runs as batched GEMMs and row kernels over
(..., T, T') score arrays, and its backward (from `fnad.grad`) as nine more equations over
such arrays. This pass replaces the forward chain by one `attention_tiles` equation
(outputs o and the rows' log-sum-exp) and, where the program holds it, the backward chain
by one `attention_tiles_vjp` equation (outputs dq, dk, dv): per tile, GEMMs and one loop
over the scores' rows that stay in cache (fnad/_jit/attnlib.py), the tiles split over the
thread pool. The backward computes the probabilities again from q, k and the log-sum-exp,
so no (T, T') array is kept between the passes.

Recognised, after simplify and CSE, with float32 q (..., T, D), k (..., T', D) and
v (..., T', Dv) of the same leading axes:

    kt = transpose k (.. last two swapped);  f = matmul q kt
    g = f * c or f / c (optional);  h = where(M, g, -inf) (optional: M a boolean constant
    (T, T') (leading 1s allowed) with a True in every row)
    l = logsumexp h -1 True;  j = h - l;  p = exp j;  o = matmul p v

and the backward that `fnad.grad` emits for it (dP = go v^T, dv = p^T go, P * dP, minus
P times its row sum through `logsumexp_weight`, the mask's `where`, the scale, dq = dS k,
dk = (q^T dS)^T), each intermediate read by the chain alone. Anything else is left as it
is. Only under fast math (docs/jit.md states the bound), with numba and SciPy (numba's
`np.dot`).
"""

import ctypes
import functools
import importlib.util
import math

import numpy as np

from .._core.abstract import ShapedArray
from .._core.tracer import Primitive
from .._graph.ir import Eqn, Var, rebuild
from . import rowkernel
from .passes import eliminate_dead_code

__all__ = ["fuse_attention", "AttentionTiles", "attention_tiles", "attention_tiles_vjp"]

_F32 = np.dtype("float32")


class AttentionTiles:
    """The geometry of one recognised attention: scale, the mask as a prefix length per
    row (`count`) and, where it is not a prefix, the boolean `mask` itself (`general`)."""

    def __init__(self, scale, mask, t_q, t_k):
        self.scale = np.float32(scale)
        if mask is None:
            mask = np.ones((t_q, t_k), bool)
        last = np.where(mask.any(-1), t_k - np.argmax(mask[:, ::-1], -1), 0)
        self.count = last.astype(np.int64)
        self.general = not all(mask[i, :n].all() for i, n in enumerate(last))
        self.mask = np.ascontiguousarray(mask)
        self.causal = not self.general and bool((self.count < t_k).any())

    def __repr__(self):
        return f"attention_tiles[scale={float(self.scale):.4g}" + (
            ", causal]" if self.causal else ", mask]" if self.general else "]")

    def _args(self):
        return self.scale, self.count, self.mask, self.general


def _tiles(a, rank):
    """`a` C-ordered as (N, T, D) tiles, N the product of its leading axes."""
    a = np.asarray(a, order="C")
    return a.reshape((-1,) + a.shape[a.ndim - rank:])


_blas = []  # `openblas_set_num_threads_local` of each OpenBLAS loaded, once the loops ran


def _openblas_locals():
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({ln.split()[-1] for ln in f if "openblas" in ln.lower() and "/" in ln})
    except OSError:
        return []
    out = []
    for path in paths:
        try:
            fn = ctypes.CDLL(path).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int]
        out.append(fn)
    return out


def _run(kernel, n, args, work):
    """The tiles over the thread pool, each BLAS on one thread meanwhile: numba's `np.dot`
    calls SciPy's OpenBLAS, which with more threads set (OPENBLAS_NUM_THREADS=2) kept two
    threads' small GEMMs from running at once (1.62 ms a GPT layer's forward on one thread,
    1.67 on two; 1.0 with the count set to 1)."""
    if not rowkernel._runner or not _blas:
        kernel(0, n, *args)  # the first call compiles the loops and loads SciPy's BLAS
        if not _blas:
            _blas.append(_openblas_locals())
        return
    old = [fn(1) for fn in _blas[0]]
    try:
        rowkernel._runner[0](kernel, n, args, work)
    finally:
        for fn, k in zip(_blas[0], old):
            fn(k)


def _forward_impl(q, k, v, *, tiles, with_o):
    from . import attnlib  # noqa: PLC0415 - optional dependency (numba)
    lead, t_q = q.shape[:-2], q.shape[-2]
    q3, k3, v3 = _tiles(q, 2), _tiles(k, 2), _tiles(v, 2)
    n = q3.shape[0]
    o = np.empty((n, t_q, v3.shape[2]) if with_o else (1, 1, 1), np.float32)
    lse = np.empty((n, t_q), np.float32)
    _run(attnlib.forward_tiles, n, (q3, k3, v3, *tiles._args(), with_o, o, lse),
         n * t_q * k3.shape[1] * (q3.shape[2] + v3.shape[2]) // 8)
    lse = lse.reshape(lead + (t_q, 1))
    return (o.reshape(lead + o.shape[1:]), lse) if with_o else (lse,)


def _forward_aval(q, k, v, *, tiles, with_o):
    lse = ShapedArray(q.shape[:-1] + (1,), _F32)
    return [ShapedArray(q.shape[:-1] + v.shape[-1:], _F32), lse] if with_o else [lse]


def _backward_impl(q, k, v, lse, g, *, tiles):
    from . import attnlib  # noqa: PLC0415 - optional dependency (numba)
    q3, k3, v3, g3 = (_tiles(a, 2) for a in (q, k, v, g))
    n, t_q = q3.shape[:2]
    lse2 = _tiles(lse, 2).reshape(n, t_q)
    dq, dk, dv = np.empty_like(q3), np.empty_like(k3), np.empty_like(v3)
    _run(attnlib.backward_tiles, n, (q3, k3, v3, lse2, g3, *tiles._args(), dq, dk, dv),
         n * t_q * k3.shape[1] * (q3.shape[2] + v3.shape[2]) // 4)
    return dq.reshape(q.shape), dk.reshape(k.shape), dv.reshape(v.shape)


def _backward_aval(q, k, v, lse, g, *, tiles):
    return [ShapedArray(a.shape, _F32) for a in (q, k, v)]


attention_tiles = Primitive("attention_tiles", _forward_impl, multiple_results=True)
attention_tiles.abstract_eval = _forward_aval
attention_tiles_vjp = Primitive("attention_tiles_vjp", _backward_impl, multiple_results=True)
attention_tiles_vjp.abstract_eval = _backward_aval


# --------------------------------------------------------------------------- matching
class _View:
    """The graph as the matcher reads it: each Var's equation (by index) and readers."""

    def __init__(self, graph):
        self.eqns = graph.eqns
        self.made = {}
        self.readers = {}
        for j, e in enumerate(graph.eqns):
            for v in e.outvars:
                self.made[v] = j
            for v in e.invars():
                self.readers.setdefault(v, []).append(j)
        for v in graph.outvars:
            if type(v) is Var:
                self.readers.setdefault(v, []).append(-1)  # read by the program

    def eqn(self, v, name, nargs=None):
        """The equation making Var `v` if it is a `name` (with `nargs` args, no kwargs)."""
        j = self.made.get(v) if type(v) is Var else None
        if j is None:
            return None
        e = self.eqns[j]
        if e.prim.name != name or (nargs is not None and len(e.args) != nargs):
            return None
        return e

    def only_reader(self, v):
        """The one equation reading `v` once, or None."""
        r = self.readers.get(v, [])
        return self.eqns[r[0]] if len(r) == 1 and r[0] >= 0 else None

    def read_by(self, v):
        r = self.readers.get(v, [])
        return None if -1 in r else [self.eqns[j] for j in r]


def _swap_of(view, v):
    """x where `v = transpose x` swaps x's last two axes, else None."""
    e = view.eqn(v, "transpose", 2)
    if e is None or e.kwargs or type(e.args[0]) is not Var:
        return None
    x, perm = e.args
    n = x.aval.ndim
    want = tuple(range(n - 2)) + (n - 1, n - 2)
    if n < 2 or (perm is None and n != 2) or (perm is not None and tuple(perm) != want):
        return None
    return x


def _scalar(a):
    if type(a) in (int, float) or (isinstance(a, np.generic) and a.dtype.kind in "fi"):
        return float(a)
    if isinstance(a, np.ndarray) and a.ndim == 0 and a.dtype.kind in "fi":
        return float(a)
    return None


def _scale_step(e, x):
    """The factor `e` multiplies Var x by (x * c, c * x, x / c), else None."""
    if e is None or e.kwargs or len(e.args) != 2:
        return None
    a, b = e.args
    if e.prim.name == "multiply":
        c = _scalar(b) if a is x else _scalar(a) if b is x else None
        return c
    if e.prim.name == "divide" and a is x:
        c = _scalar(b)
        return None if c is None or c == 0 else 1.0 / c
    return None


def _mask(a, t_q, t_k):
    """The boolean constant `a` as (t_q, t_k) if it has a True in every row, else None."""
    if not isinstance(a, np.ndarray) or a.dtype != np.bool_ or a.ndim < 2:
        return None
    if any(s != 1 for s in a.shape[:-2]) or a.shape[-2:] != (t_q, t_k):
        return None
    m = a.reshape(t_q, t_k)
    return m if m.any(-1).all() else None


def _is_neg_inf(a):
    c = _scalar(a)
    return c is not None and c == -math.inf


def _plain32(*vs):
    return all(type(v) is Var and v.aval.dtype == _F32 and v.aval.xp is np
               and not v.aval.weak_type for v in vs)


def _shape32(a):
    """The shape of a float32 Var or constant array (the cotangent may be either), else
    None."""
    if type(a) is Var:
        return a.aval.shape if _plain32(a) else None
    ok = isinstance(a, np.ndarray) and a.dtype == _F32
    return a.shape if ok else None


def _forward(view, j):
    """The forward chain whose `logsumexp` is equation j: a dict of its parts, or None."""
    e_lse = view.eqns[j]
    if len(e_lse.args) != 3 or e_lse.kwargs or type(e_lse.args[0]) is not Var:
        return None
    h, axis, keep = e_lse.args
    if keep is not True or axis not in (-1, h.aval.ndim - 1) or h.aval.ndim < 2:
        return None
    t_q, t_k = h.aval.shape[-2:]
    parts = {"lse": e_lse, "h": h, "mask": None, "scale": 1.0, "chain": [e_lse]}
    s = h
    e = view.eqn(s, "where", 3)
    if e is not None:
        if e.kwargs or not _is_neg_inf(e.args[2]) or type(e.args[1]) is not Var:
            return None
        parts["mask"] = _mask(e.args[0], t_q, t_k)
        if parts["mask"] is None or view.only_reader(e.args[1]) is not e:
            return None
        parts["chain"].append(e)
        s = e.args[1]
    made = view.eqns[view.made[s]] if s in view.made else None
    c = None
    if made is not None and made.prim.name in ("multiply", "divide"):
        x = next((a for a in made.args if type(a) is Var), None)
        c = _scale_step(made, x) if x is not None else None
        if c is None or not math.isfinite(c) or c == 0 or view.only_reader(x) is not made:
            return None
        parts["scale"], parts["chain"] = c, parts["chain"] + [made]
        s = x
    e_f = view.eqn(s, "matmul", 2)
    if e_f is None or e_f.kwargs:
        return None
    q, kt = e_f.args
    k = _swap_of(view, kt)
    if k is None or not _plain32(q, kt, h):
        return None
    if e_f.outvars[0] is not h and view.only_reader(e_f.outvars[0]) is not parts["chain"][-1]:
        return None
    if 0 in q.aval.shape or 0 in kt.aval.shape:
        return None
    parts.update(q=q, k=k, kt=kt, t_q=t_q, t_k=t_k)
    parts["chain"].append(e_f)
    return _forward_tail(view, parts)


def _forward_tail(view, parts):
    """j = h - lse, p = exp j, o = p @ v after the chain's head."""
    e_lse, h = parts["lse"], parts["h"]
    e_sub = view.only_reader(e_lse.outvars[0])
    if e_sub is None or e_sub.prim.name != "subtract" or e_sub.args != (h, e_lse.outvars[0]):
        return None
    e_exp = view.only_reader(e_sub.outvars[0])
    if e_exp is None or e_exp.prim.name != "exp" or len(e_exp.args) != 1 or e_exp.kwargs:
        return None
    p = e_exp.outvars[0]
    readers = view.read_by(p)
    if readers is None:
        return None
    o_eqns = [e for e in readers if e.prim.name == "matmul" and len(e.args) == 2
              and e.args[0] is p and not e.kwargs]
    if len(o_eqns) > 1:
        return None
    q, k = parts["q"], parts["k"]
    if k.aval.shape != q.aval.shape[:-2] + (parts["t_k"], q.aval.shape[-1]):
        return None
    parts.update(p=p, o=None, v=None, chain=parts["chain"] + [e_sub, e_exp])
    if o_eqns:
        parts["o"] = o_eqns[0]
        if not _good_v(parts, o_eqns[0].args[1]) or not _plain32(o_eqns[0].outvars[0]):
            return None
    return parts


def _good_v(parts, v):
    """Whether `v` (..., T', Dv) fits q and k's tiles (and is the forward's v, if known)."""
    if parts["v"] is not None:
        return v is parts["v"]
    q = parts["q"]
    ok = _plain32(v) and v.aval.shape[:-1] == q.aval.shape[:-2] + (parts["t_k"],)
    parts["v"] = v if ok else None
    return ok


def _backward(view, parts):
    """The backward chain of a forward one: (dq Var, dk Var, dv Var, g Var, its equations),
    None where the program holds none, False where it holds something else."""
    p, h, q, kt = parts["p"], parts["h"], parts["q"], parts["kt"]
    others = [e for e in view.read_by(p) if e is not parts["o"]]
    h_others = [e for e in view.read_by(h) or [None] if e not in parts["chain"]]
    if not others and not h_others:
        return None
    if len(others) != 2 or len(h_others) != 1 or h_others[0] is None:
        return False
    e_pt = next((e for e in others if e.prim.name == "transpose"), None)
    e_pm = next((e for e in others if e.prim.name == "multiply"), None)
    e_w = h_others[0]
    if (e_pt is None or e_pm is None or _swap_of(view, e_pt.outvars[0]) is not p
            or e_w.prim.name != "logsumexp_weight" or e_w.kwargs
            or e_w.args[1:] not in ((-1,), (h.aval.ndim - 1,))):
        return False
    e_dv = view.only_reader(e_pt.outvars[0])
    if e_dv is None or e_dv.prim.name != "matmul" or e_dv.args[0] is not e_pt.outvars[0]:
        return False
    g = e_dv.args[1]
    dp = next((a for a in e_pm.args if a is not p), None)
    e_dp = view.eqn(dp, "matmul", 2)
    if (e_dp is None or e_dp.args[0] is not g or not _good_v(parts, _swap_of(view, e_dp.args[1]))
            or _shape32(g) != q.aval.shape[:-1] + parts["v"].aval.shape[-1:]
            or view.only_reader(dp) is not e_pm):
        return False
    chain = [e_pt, e_pm, e_dv, e_dp, e_w]
    ds = _ds_chain(view, parts, e_pm.outvars[0], e_w.outvars[0], chain)
    if ds is None:
        return False
    e_dq = [e for e in view.read_by(ds) or () if e.prim.name == "matmul" and e.args[0] is ds]
    e_qt = [e for e in view.read_by(ds) or () if e.prim.name == "matmul" and e.args[1] is ds]
    if len(e_dq) != 1 or len(e_qt) != 1 or len(view.read_by(ds)) != 2:
        return False
    e_dq, e_qt = e_dq[0], e_qt[0]
    kk = e_dq.args[1]
    if not (kk is parts["k"] or _swap_of(view, kk) is kt) or _swap_of(view, e_qt.args[0]) is not q:
        return False
    e_dk = view.only_reader(e_qt.outvars[0])
    if e_dk is None or _swap_of(view, e_dk.outvars[0]) is not e_qt.outvars[0]:
        return False
    chain += [e_dq, e_qt, e_dk]
    return e_dq.outvars[0], e_dk.outvars[0], e_dv.outvars[0], g, chain


def _ds_chain(view, parts, pdp, weight, chain):
    """The Var dS from `pdp` = P * dP: pdp + sum(-pdp) * weight, the mask's where, the
    scale; equations appended to `chain`; None if it is not that."""
    e_neg = next((e for e in view.read_by(pdp) or () if e.prim.name == "negative"), None)
    e_add = next((e for e in view.read_by(pdp) or () if e.prim.name == "add"), None)
    if e_neg is None or e_add is None or len(view.read_by(pdp)) != 2:
        return None
    e_sum = view.only_reader(e_neg.outvars[0])
    if (e_sum is None or e_sum.prim.name != "sum" or dict(e_sum.kwargs).get("keepdims") is not True
            or dict(e_sum.kwargs).get("dtype") is not None
            or tuple(np.atleast_1d(dict(e_sum.kwargs).get("axis", ())) % pdp.aval.ndim)
            != (pdp.aval.ndim - 1,)):
        return None
    e_t = view.only_reader(e_sum.outvars[0])
    if (e_t is None or e_t.prim.name != "multiply"
            or set(map(id, e_t.args)) != {id(e_sum.outvars[0]), id(weight)}
            or view.only_reader(weight) is not e_t or view.only_reader(e_t.outvars[0]) is not e_add
            or set(map(id, e_add.args)) != {id(pdp), id(e_t.outvars[0])}):
        return None
    chain += [e_neg, e_sum, e_t, e_add]
    x = e_add.outvars[0]
    if parts["mask"] is not None:
        x = _mask_grad(view, x, parts["mask"], chain)
        if x is None:
            return None
    if parts["scale"] != 1.0:
        e_s = view.only_reader(x)
        c = _scale_step(e_s, x)
        if c is None or np.float32(c) != np.float32(parts["scale"]):
            return None
        chain.append(e_s)
        x = e_s.outvars[0]
    return x


def _mask_grad(view, x, mask, chain):
    """where(M, x, 0) (the zero possibly zeros_like(x)) of the forward's mask M."""
    readers = view.read_by(x) or ()
    e_wh = [e for e in readers if e.prim.name == "where"]
    e_z = [e for e in readers if e.prim.name == "zeros_like"]
    if len(e_wh) != 1 or len(readers) != 1 + len(e_z) or len(e_z) > 1:
        return None
    e_wh = e_wh[0]
    m, a, zero = e_wh.args if len(e_wh.args) == 3 else (None, None, None)
    if e_z:
        if zero is not e_z[0].outvars[0] or view.only_reader(zero) is not e_wh:
            return None
        chain.append(e_z[0])
    elif _scalar(zero) != 0.0:
        return None
    if a is not x or _mask(m, *mask.shape) is None or not np.array_equal(
            _mask(m, *mask.shape), mask):
        return None
    chain.append(e_wh)
    return e_wh.outvars[0]


# --------------------------------------------------------------------------- the pass
@functools.cache
def available():
    """Whether the tile kernels can run: numba, and SciPy for numba's `np.dot`."""
    return all(importlib.util.find_spec(m) is not None for m in ("numba", "scipy"))


def fuse_attention(graph):
    """`graph` with each recognised attention (see the module docstring) replaced by tile
    kernels; unchanged when there is none or numba or SciPy is missing."""
    if not any(e.prim.name == "logsumexp" for e in graph.eqns) or not available():
        return graph
    view = _View(graph)
    pos = {id(e): i for i, e in enumerate(graph.eqns)}
    replace, drop, fused, backward = {}, set(), 0, 0
    for j, e in enumerate(graph.eqns):
        if e.prim.name != "logsumexp":
            continue
        parts = _forward(view, j)
        if parts is None or any(id(x) in drop for x in parts["chain"]):
            continue
        back = _backward(view, parts)
        if back is False or (back is None and parts["o"] is None):
            continue
        q, k, v = parts["q"], parts["k"], parts["v"]
        tiles = AttentionTiles(parts["scale"], parts["mask"], parts["t_q"], parts["t_k"])
        lse = Var(ShapedArray(q.aval.shape[:-1] + (1,), _F32))
        o_eqn = parts["o"]
        outs = [o_eqn.outvars[0], lse] if o_eqn else [lse]
        if back is None:
            fwd = Eqn(attention_tiles, (q, k, v), {"tiles": tiles, "with_o": True}, outs,
                      o_eqn.scope)
            replace[id(o_eqn)] = [fwd]
        else:
            dq, dk, dv, g, chain = back
            first = min(chain[-1], chain[-3], chain[2], key=lambda x: pos[id(x)])
            # the backward equation goes where its first result was made: its inputs
            # (and the forward's, when o is not used and both go there) must come before
            inputs = (q, k, v, g) if o_eqn is None else (g, o_eqn.outvars[0])
            if max(view.made.get(a, -1) for a in inputs if type(a) is Var) >= pos[id(first)]:
                continue
            fwd = Eqn(attention_tiles, (q, k, v), {"tiles": tiles, "with_o": bool(o_eqn)},
                      outs, (o_eqn or first).scope)
            bwd = Eqn(attention_tiles_vjp, (q, k, v, lse, g), {"tiles": tiles}, [dq, dk, dv],
                      first.scope)
            if o_eqn is None:
                replace[id(first)] = [fwd, bwd]
            else:
                replace[id(o_eqn)], replace[id(first)] = [fwd], [bwd]
            drop.update(id(x) for x in chain)
            backward += 1
        drop.update(id(x) for x in parts["chain"])
        fused += 1
    if not fused:
        return graph
    eqns = []
    for e in graph.eqns:
        if id(e) in replace:
            eqns.extend(replace[id(e)])
        elif id(e) not in drop:
            eqns.append(e)
    note = f"attention: {fused} attentions fused per tile ({backward} with their backward)"
    return eliminate_dead_code(rebuild(graph, eqns, note=note))
