"""Liveness, buffer sharing and the memory plan of a Graph.

A value is live from the equation that makes it to its last use (graph outputs live to the
end). Values may share a buffer: an implementation that is not known to allocate its
result (reshape, transpose, getitem, astype, ...) may return a view of an argument, so its
results are put in the same "buffer set" as its arguments. An elementwise ufunc may write
its result into an argument's buffer (`out=`) at the equation where every value sharing
that buffer dies, if the buffer was allocated by the program itself (never an input or a
constant) and has the result's shape and dtype.
"""

import numpy as np

from .ir import Var

__all__ = ["last_uses", "inplace_choices", "memory_plan", "MemoryPlan", "ALLOCATING"]

# non-ufunc primitives whose implementation always returns a newly allocated array
ALLOCATING = frozenset((
    "sum", "mean", "max", "min", "amax", "amin", "prod", "logsumexp", "where", "clip",
    "cumsum", "cumprod", "concatenate", "zeros_like", "ones_like", "full_like", "relu", "gelu",
    "expit", "softplus", "erf", "erfc", "softmax", "log_softmax", "attention_softmax",
    "softmax_vjp", "affine", "fused_elementwise"))


def _allocates(prim):
    impl = prim.impl
    return isinstance(impl, np.ufunc) or prim.name in ALLOCATING


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


def _buffer_sets(graph):
    """Var -> frozenset of the buffers ("roots") it may share memory with."""
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
        else:
            shared = frozenset().union(*(roots[v] for v in e.invars()))
            for v in e.outvars:
                roots[v] = shared | {v} if not shared else shared
                if not shared:
                    own.add(v)  # made from constants only: its own buffer
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


def _dying_own(a, j, out, own, roots, last_of_root, taken):
    return (type(a) is Var and a not in taken and a in own and roots[a] == {a}
            and last_of_root.get(a, -1) == j and a.aval.shape == out.shape
            and a.aval.dtype == out.dtype)


def _fused_choice(e, j, own, roots, last_of_root, taken):
    """For a fused kernel that takes `out=`: one dying argument buffer (or None) an output."""
    kernel = e.kwargs.get("kernel")
    if not getattr(kernel, "takes_out", False):
        return None
    picks = []
    for v in e.outvars:
        pick = next((a for a in e.args if _dying_own(a, j, v.aval, own, roots, last_of_root,
                                                     taken)), None)
        if pick is not None:
            taken.add(pick)
        picks.append(pick)
    return tuple(picks) if any(p is not None for p in picks) else None


def inplace_choices(graph):
    """{equation index: the argument Var whose buffer receives the result (`out=`); for a
    fused kernel, a tuple with one such Var or None per output}."""
    roots, own = _buffer_sets(graph)
    last_of_root = _last_of_root(graph, roots)
    choices = {}
    taken = set()
    for j, e in enumerate(graph.eqns):
        if e.prim.name == "fused_elementwise":
            pick = _fused_choice(e, j, own, roots, last_of_root, taken)
            if pick is not None:
                choices[j] = pick
            continue
        impl = e.prim.impl
        if not (isinstance(impl, np.ufunc) and impl.nout == 1 and impl.signature is None):
            continue
        if e.kwargs or len(e.outvars) != 1:
            continue
        out = e.outvars[0].aval
        if out.ndim == 0:
            continue
        for a in e.args:
            if _dying_own(a, j, out, own, roots, last_of_root, taken):
                choices[j] = a
                taken.add(a)
                break
    return choices


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
    roots, own = _buffer_sets(graph)
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
