"""Liveness, buffer sharing and the memory plan of a Graph.

A value is live from the equation that makes it to its last use (graph outputs live to the
end). Values may share a buffer: an implementation that is not known to allocate its
result may return a view of an argument, so its results are put in the same "buffer set"
as its arguments. The known views (reshape, transpose, getitem, broadcast_to, ...) share
their arguments' buffers only; any other primitive not known to allocate may also return
an array it holds itself (a constant of a body it runs), so its results also share the
`CONST` root. An elementwise ufunc may write its result into an argument's buffer at the
equation where every value sharing that buffer dies, if the buffer was allocated by the
program itself (never an input, a constant or a view), has the result's shape and dtype,
and no other argument of that equation may be a view of it (a kernel writing element i
would change what a view still reads). Fused numba kernels are not given an argument's
buffer: an output overlapping an input fails LLVM's run-time overlap check and sends the
whole loop down its scalar path (the plain GPT's fast GELU kernel: 8-12 ms a call in place
against 1.2-2 ms into another buffer, docs/benchmarks.md); jit's arena gives them buffers.

`output_copies` says which outputs a compiled program must copy so that a jitted function
returns fresh arrays where the eager function would: outputs that may be constants of the
trace, and outputs that share a buffer with an input or another output where the
unoptimised program's did not.
"""

import numpy as np

from .ir import Var

__all__ = ["last_uses", "inplace_choices", "memory_plan", "MemoryPlan", "ALLOCATING", "VIEWS",
           "CONST", "buffer_sets", "output_copies"]

# non-ufunc primitives whose implementation always returns a newly allocated array
# (tests/numpy/test_fresh_results.py checks every call of the op battery against this list)
ALLOCATING = frozenset((
    "sum", "mean", "max", "min", "amax", "amin", "prod", "logsumexp", "logsumexp_weight", "where",
    "clip",
    "cumsum", "cumprod", "concatenate", "zeros_like", "ones_like", "full_like", "full",
    "copy",
    "relu", "gelu", "expit", "softplus", "erf", "erfc", "softmax", "log_softmax",
    "attention_softmax", "softmax_vjp", "affine", "fused_elementwise",
    "fused_rows", "attention_tiles", "attention_tiles_vjp"))

# primitives whose result may be a view of their array arguments and of nothing else
VIEWS = frozenset((
    "reshape", "transpose", "getitem", "broadcast_to", "diagonal", "real", "imag", "astype",
    "stop_gradient", "contiguous", "device_put", "unstack"))


class _Const:
    def __repr__(self):
        return "CONST"


CONST = _Const()  # the root of every constant's buffer (never written, never handed out)


def _allocates(prim):
    impl = prim.impl
    return isinstance(impl, np.ufunc) or prim.name in ALLOCATING


def _has_const(args):
    for a in args:
        if type(a) in (list, tuple):
            if _has_const(a):
                return True
        elif type(a) is not Var and hasattr(a, "shape") and hasattr(a, "dtype"):
            return True
    return False


def last_uses(graph):
    """{equation index: [Vars that die there]}; unused results die where they are made."""
    last = {}
    for j, e in enumerate(graph.eqns):
        for v in e.invars():
            last[v] = j
        for v in e.outvars:
            last.setdefault(v, j)
    end = len(graph.eqns)
    for v in graph.outvars:
        if type(v) is Var:
            last[v] = end
    for v in graph.invars:
        last.setdefault(v, -1)
    dies = {}
    for v, j in last.items():
        if j < end:
            dies.setdefault(j, []).append(v)
    return dies


def buffer_sets(graph):
    """(Var -> frozenset of the buffers ("roots") it may share memory with, the set of
    Vars whose buffer the program allocated). Roots are input and captured Vars, allocated
    Vars and `CONST` (a constant of the trace, or an array a primitive holds itself)."""
    roots = {}
    own = set()
    for v in graph.invars:
        roots[v] = frozenset((v,))
    for v, _ in graph.captured:
        roots[v] = frozenset((v,))
    for e in graph.eqns:
        if _allocates(e.prim):
            for v in e.outvars:
                roots[v] = frozenset((v,))
                own.add(v)
            continue
        shared = frozenset().union(*(roots[v] for v in e.invars()))
        if e.prim.name not in VIEWS or _has_const(e.args) or not shared:
            shared = shared | {CONST}
        for v in e.outvars:
            roots[v] = shared
    return roots, own




def _last_of_root(graph, roots):
    """Root -> index of the last equation using any value that may share its buffer."""
    end = len(graph.eqns)
    last = {}
    for j, e in enumerate(graph.eqns):
        for v in e.outvars:
            for r in roots[v]:
                last[r] = max(last.get(r, j), j)
        for v in e.invars():
            for r in roots[v]:
                last[r] = j
    for v in graph.outvars:
        if type(v) is Var:
            for r in roots[v]:
                last[r] = end
    return last


def _dying_own(a, e, j, out, own, roots, last_of_root, taken):
    """Whether argument `a` of equation `e` (index j) may receive a result `out`: an
    allocated buffer of out's shape and dtype that nothing reads after j, and that no other
    argument of `e` may be a view of."""
    return (type(a) is Var and a not in taken and a in own and roots[a] == {a}
            and last_of_root.get(a, -1) == j and a.aval.shape == out.shape
            and a.aval.dtype == out.dtype
            and not any(v is not a and a in roots[v] for v in e.invars()))


def inplace_choices(graph):
    """{equation index: the argument Var whose buffer receives the result (`out=`)}."""
    roots, own = buffer_sets(graph)
    last_of_root = _last_of_root(graph, roots)
    choices = {}
    taken = set()
    for j, e in enumerate(graph.eqns):
        impl = e.prim.impl
        if not (isinstance(impl, np.ufunc) and impl.nout == 1 and impl.signature is None):
            continue
        if e.kwargs or len(e.outvars) != 1:
            continue
        out = e.outvars[0].aval
        if out.ndim == 0 or np.dtype(out.dtype).kind == "c":
            continue    # complex: NumPy's loop with out= aliasing an input rounds differently
        for a in e.args:
            if _dying_own(a, e, j, out, own, roots, last_of_root, taken):
                choices[j] = a
                taken.add(a)
                break
    return choices


def _out_roots(roots, v):
    if type(v) is Var:
        return roots[v]
    if isinstance(v, np.generic) or not (hasattr(v, "shape") and hasattr(v, "dtype")):
        return frozenset()  # a Python or NumPy scalar: immutable
    return frozenset((CONST,))


def output_copies(graph, reference=None):
    """The positions of the outputs a compiled `graph` must copy before handing them out,
    so that they are fresh where the eager function's are: an output that may be (a view
    of) a constant of the trace; one that may share a buffer with an input that the
    `reference` program's output at that position (the unoptimised program, default
    `graph`) does not share; one that may share a buffer with an earlier output where the
    reference's two outputs do not (CSE merged two equal computations, say)."""
    reference = graph if reference is None else reference
    roots = buffer_sets(graph)[0]
    ref_roots = roots if reference is graph else buffer_sets(reference)[0]
    inputs = set(graph.invars) | {v for v, _ in graph.captured}
    copies, handed = set(), []
    for k, (v, r) in enumerate(zip(graph.outvars, reference.outvars)):
        mine, ref = _out_roots(roots, v), _out_roots(ref_roots, r)
        copy = CONST in mine or any(x in inputs and x not in ref for x in mine)
        if not copy:
            copy = any(m & mine and not (rm & ref) for m, rm in handed)
        if copy:
            copies.add(k)
            mine = frozenset((("copy", k),))
        handed.append((mine, ref))
    return copies


class MemoryPlan:
    """Bytes live after each equation, the peak and where it is reached."""

    def __init__(self, graph, live_bytes, inplace):
        self.graph = graph
        self.live_bytes = live_bytes
        self.inplace = inplace
        self.peak = max(live_bytes, default=0)
        self.peak_at = live_bytes.index(self.peak) if live_bytes else -1

    def __str__(self):
        g = self.graph
        where = (f"after equation {self.peak_at} ({g.eqns[self.peak_at].prim.name})"
                 if self.peak_at >= 0 else "")
        n = sum(sum(p is not None for p in c) if type(c) is tuple else 1
                for c in self.inplace.values())
        return (f"memory plan of {g.name}: {len(g.eqns)} equations, peak {_mb(self.peak)} "
                f"of intermediates {where}; {n} results written in place; "
                f"inputs {_mb(sum(_nbytes(v) for v in g.invars))}")

    __repr__ = __str__


def _nbytes(v):
    return v.aval.size * v.aval.dtype.itemsize


def _mb(n):
    return f"{n / 2**20:.2f} MiB"


def memory_plan(graph, inplace=True):
    """Live intermediate bytes after each equation, each buffer counted once (views add
    nothing; a result written in place takes over its argument's buffer)."""
    roots, own = buffer_sets(graph)
    last = _last_of_root(graph, roots)
    choices = inplace_choices(graph) if inplace else {}
    dying = {}
    for r, j in last.items():
        if r in own:
            dying.setdefault(j, []).append(r)
    live = 0
    out = []
    for j, e in enumerate(graph.eqns):
        handed = choices.get(j)
        handed = handed if type(handed) is tuple else (handed,) * len(e.outvars)
        for v, h in zip(e.outvars, handed):
            if v in own and h is None:
                live += _nbytes(v)
        for r in dying.get(j, ()):
            if r not in handed:
                live -= _nbytes(r)
        out.append(live)
    return MemoryPlan(graph, out, choices)
