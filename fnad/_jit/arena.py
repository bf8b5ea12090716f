"""Buffers owned by a compiled program: a static plan of where its large intermediates
live, reused from call to call, as XLA's buffer assignment does.

A training step makes and frees the same large arrays on every call; with glibc's
defaults each fresh array larger than its mmap threshold is a new mapping, paid for in
page faults each time. Instead of changing malloc for the whole process
(`FNAD_MALLOC=keep`, fnad/_core/heap.py), a compiled program writes such intermediates
(`out=`) into slots of its own arena: plain NumPy arrays it allocates on its first call
and keeps for the next, freed when the program is (its jit cache entry dropped,
`clear_cache()`, the jitted function collected). Calls running at the same time (threads,
or a program that runs inside itself) each take their own arena from the program's free
list.

A value gets a slot (`arena_plan`) when all of these hold, so that no caller ever sees a
slot and a result's bits and layout are the eager ones:
- it is made by an equation that can write into a given buffer: an elementwise NumPy ufunc
  or `matmul` with no keyword parameters, or a fused numba kernel (`out=`), is at least
  `ARENA_MIN` bytes and is not 0-d;
- the eager result would be C-contiguous, as the slot is: a fused kernel's always is, and
  a matmul's with at most two dimensions; a ufunc's or a batched matmul's when its array
  arguments are C-contiguous, which the program checks at run time where the trace cannot
  know it (the program's inputs, results of other primitives), writing into a fresh array
  (`out=None`) otherwise;
- nothing that may share its buffer (views of it, results later written in place into it,
  their views: `memory.buffer_sets` and the in-place choices) is an output of the program
  or an argument of an equation that could keep a reference past the call: a primitive
  whose implementation is not NumPy's or fnad's own, or one that runs a body or a function
  it is given (scan, cond, while_loop, custom rules).
A slot is free again after the last equation that uses any value sharing it, so a result
never lands in a slot one of its own arguments still occupies.
"""

import numpy as np

from .._graph.ir import Var
from .._graph.memory import ALLOCATING, VIEWS, buffer_sets

__all__ = ["ARENA_MIN", "arena_plan", "Arenas"]

ARENA_MIN = 1 << 17  # bytes: smaller arrays come from malloc's heap cheaply anyway

_OWN_MODULES = ("numpy", "scipy", "fnad", "fnad_nn", "fnad_optim")


def _is_ufunc(impl):
    return isinstance(impl, np.ufunc) and impl.nout == 1


def _writes_out(e, k):
    """Whether output k of equation `e` can be written into a buffer given as `out=`."""
    impl = e.prim.impl
    if e.prim.name == "fused_elementwise":
        return getattr(e.kwargs.get("kernel"), "takes_out", False)
    return (_is_ufunc(impl) and not e.kwargs and len(e.outvars) == 1
            and (impl.signature is None or impl is np.matmul))


def _keeps_no_reference(e):
    """Whether `e`'s implementation surely drops its arguments when it returns: NumPy's,
    SciPy's or fnad's own code that runs no body or function it is given."""
    if e.prim.name == "fused_elementwise" or e.prim.name in VIEWS or e.prim.name in ALLOCATING:
        return True
    module = getattr(e.prim.impl, "__module__", None) or ""
    if isinstance(e.prim.impl, np.ufunc):
        module = "numpy"
    if module.split(".")[0] not in _OWN_MODULES:
        return False
    return not any(callable(v) or hasattr(v, "eqns") for v in e.kwargs.values())


def _array_args(e):
    out = []
    for a in e.args:
        if type(a) in (list, tuple):
            return None  # a list of arrays (concatenate and kin): not an elementwise call
        out.append(a)
    return out


def _c_layout(e, known):
    """Whether `e`'s result is C-contiguous eagerly: True when it surely is, False when it
    may not be, or the Vars to check at run time (the result is C-contiguous when each is:
    a ufunc's result follows its arguments' layout, a batched matmul's their batch order).
    `known`: the Vars surely C-contiguous."""
    if e.prim.name == "fused_elementwise":
        return True
    args = _array_args(e)
    if args is None:
        return False
    if e.prim.name == "reshape":
        return type(args[0]) is Var and args[0] in known
    impl = e.prim.impl
    if not _is_ufunc(impl) or not (impl.signature is None or impl is np.matmul):
        return False
    if impl is np.matmul and e.outvars[0].aval.ndim <= 2:
        return True
    check = []
    for a in args:
        ndim = a.aval.ndim if type(a) is Var else getattr(a, "ndim", 0)
        if impl is np.matmul and ndim <= 2:
            continue  # a matrix operand leaves the batch order to the other one
        if type(a) is Var:
            if a not in known and a.aval.size > 1:
                check.append(a)
        elif hasattr(a, "flags") and a.size > 1 and not a.flags.c_contiguous:
            return False
    return tuple(check) or True


def _candidates(graph, choices):
    """{Var an arena slot may hold (before the sharing checks): (its equation, the Vars
    whose C layout its use of the slot waits on at run time)}."""
    known, cands = set(), {}
    for j, e in enumerate(graph.eqns):
        c = _c_layout(e, known)
        if c is True:
            known.update(e.outvars)
        picks = choices.get(j)
        picks = picks if type(picks) is tuple else (picks,) * len(e.outvars)
        for k, (v, pick) in enumerate(zip(e.outvars, picks)):
            a = v.aval
            if (c is not False and pick is None and a.ndim > 0
                    and a.size * a.dtype.itemsize >= ARENA_MIN and _writes_out(e, k)):
                cands[v] = (j, () if c is True else c)
    return cands


def _sharers(graph, choices, cands):
    """Candidate -> the Vars that may share its buffer: results written into it in place
    (transitively), and every value whose buffer set holds one of those."""
    phys = {v: v for v in cands}
    for j, e in enumerate(graph.eqns):
        picks = choices.get(j)
        picks = picks if type(picks) is tuple else (picks,) * len(e.outvars)
        for v, pick in zip(e.outvars, picks):
            if pick is not None and pick in phys:
                phys[v] = phys[pick]
    members = {}
    for v, p in phys.items():
        members.setdefault(p, set()).add(v)
    roots = buffer_sets(graph)[0]
    share = {p: set() for p in members}
    for v, rs in roots.items():
        for r in rs:
            p = phys.get(r)
            if p is not None:
                share[p].add(v)
    return share


def arena_plan(graph, choices):
    """(slot sizes in bytes, {Var: slot}, {Var: the Vars that must be C-contiguous at run
    time for it to use its slot}) for `graph` compiled with the in-place `choices`
    (`memory.inplace_choices`)."""
    cands = _candidates(graph, choices)
    if not cands:
        return [], {}, {}
    share = _sharers(graph, choices, cands)
    bad = {v for v in graph.outvars if type(v) is Var}
    last = {}
    for j, e in enumerate(graph.eqns):
        ins = set(e.invars())
        if not _keeps_no_reference(e):
            bad |= ins
        for p, vs in share.items():
            if ins & vs:
                last[p] = j
    end_of = {}  # equation index -> the candidates whose slot frees after it
    for p, vs in share.items():
        if not (vs & bad):
            end_of.setdefault(max(last.get(p, cands[p][0]), cands[p][0]), []).append(p)
    keep = {p for ps in end_of.values() for p in ps}
    sizes, free, slot_of = [], {}, {}
    for j in range(len(graph.eqns)):
        for v in graph.eqns[j].outvars:
            if v in keep:
                nbytes = v.aval.size * v.aval.dtype.itemsize
                pool = free.get(nbytes)
                if pool:
                    slot_of[v] = pool.pop()
                else:
                    slot_of[v] = len(sizes)
                    sizes.append(nbytes)
        for p in end_of.get(j, ()):
            free.setdefault(sizes[slot_of[p]], []).append(slot_of[p])
    return sizes, slot_of, {v: cands[v][1] for v in slot_of if cands[v][1]}


class Arenas:
    """A compiled program's arenas: `take()` gives a tuple of arrays (one per planned Var,
    in `order`), allocated on first need; `give(arena)` returns it for the next call."""

    def __init__(self, sizes, views):
        self.sizes = sizes
        self.views = views  # [(slot, shape, dtype)] in the order the program indexes them
        self.free = []

    def take(self):
        try:
            return self.free.pop()  # atomic: two threads never get the same arena
        except IndexError:
            slots = [np.empty(n, np.uint8) for n in self.sizes]
            return tuple(slots[s][:np.dtype(d).itemsize * int(np.prod(shape))].view(d)
                         .reshape(shape) for s, shape, d in self.views)

    def give(self, arena):
        self.free.append(arena)

    def nbytes(self):
        return sum(self.sizes)
