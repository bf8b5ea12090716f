"""Turn a Graph into a plain Python function that calls each implementation in turn.

The generated function has one local variable per value, calls the primitives'
implementations directly (no tracers, no dispatch), deletes each value after its last use
(so memory is freed as early as the program allows) and, with `inplace`, writes the result
of an elementwise ufunc into the buffer of an argument that dies there (`out=`), when no
other live value can share that buffer (`fnad/_graph/memory.py` decides which), writes
large intermediates into the program's own arena, reused across calls
(`fnad/_jit/arena.py`), and copies
the outputs that would otherwise be a constant of the trace or share a buffer with an input
or another output where the unoptimised program's did not (`output_copies`), so a jitted
function returns fresh arrays where the eager function would.
"""

import math

import numpy as np

from .._graph.ir import Var
from .._graph.memory import inplace_choices, last_uses, output_copies
from .arena import Arenas, arena_plan

__all__ = ["compile_graph", "source_of"]

_SIMPLE = (bool, int, str, type(None))


def _literal(p):
    """Python source for a parameter, or None when it needs a name in the namespace."""
    if type(p) in _SIMPLE:
        return repr(p)
    if type(p) is float and math.isfinite(p):
        return repr(p)
    if type(p) in (tuple, list) and all(type(x) in _SIMPLE for x in p):
        return repr(p)
    return None


class _Writer:
    def __init__(self):
        self.ns = {}
        self.names = {}

    def const(self, value, prefix="k"):
        key = id(value)
        name = self.names.get(key)
        if name is None:
            name = self.names[key] = f"{prefix}{len(self.names)}"
            self.ns[name] = value
        return name

    def atom(self, a, var_name):
        if type(a) is Var:
            return var_name(a)
        if type(a) in (list, tuple) and any(type(x) is Var for x in a):
            inner = ", ".join(self.atom(x, var_name) for x in a)
            return f"[{inner}]" if type(a) is list else f"({inner},)"
        lit = _literal(a)
        return lit if lit is not None else self.const(a)

    def kwargs(self, kwargs):
        parts = []
        for k, v in kwargs.items():
            lit = _literal(v)
            parts.append(f"{k}={lit if lit is not None else self.const(v)}")
        return parts


def _fresh(x):
    """A copy of an output array; a Python scalar (allclose's bool, say) is immutable and
    is handed out as it is."""
    return x.copy(order="K") if hasattr(x, "copy") else x


def source_of(graph, inplace=True, reference=None):
    """The generated source and its namespace: (text, namespace). `reference`: the
    unoptimised program `graph` was made from (default `graph` itself), whose outputs say
    which inputs an output may be handed back as (see `output_copies`)."""
    w = _Writer()
    names = {}
    for k, v in enumerate(graph.invars + [v for v, _ in graph.captured]):
        names[v] = f"i{k}"

    def var_name(v):
        name = names.get(v)
        if name is None:
            name = names[v] = f"v{len(names)}"
        return name

    head = f"def run({', '.join(names[v] for v in names)}):"
    dies = last_uses(graph)
    outs_inplace = inplace_choices(graph) if inplace else {}
    sizes, slot_of, guards = arena_plan(graph, outs_inplace) if inplace else ([], {}, {})
    arena = {v: f"A[{k}]" for k, v in enumerate(slot_of)}
    for v, check in guards.items():  # a slot only where the eager result is C-ordered too
        test = " and ".join(f"{var_name(a)}.flags.c_contiguous" for a in check)
        arena[v] = f"({arena[v]} if {test} else None)"
    lines = []
    for j, e in enumerate(graph.eqns):
        fn = w.const(e.prim.impl, "f")
        args = [w.atom(a, var_name) for a in e.args] + w.kwargs(e.kwargs)
        target = outs_inplace.get(j)
        if e.prim.name == "fused_elementwise" and (target is not None
                                                   or any(v in arena for v in e.outvars)):
            # a fused kernel: a dying argument's buffer, an arena slot or None per output
            target = target or (None,) * len(e.outvars)
            inner = ", ".join(var_name(t) if t is not None else arena.get(v, "None")
                              for t, v in zip(target, e.outvars))
            args.append(f"out=({inner},)")
        elif target is not None:
            args.append(f"out={var_name(target)}")
        elif e.outvars and e.outvars[0] in arena:
            args.append(f"out={arena[e.outvars[0]]}")
        outs = ", ".join(var_name(v) for v in e.outvars)
        if e.prim.multiple_results:
            outs += "," if len(e.outvars) == 1 else ""
        call = f"{fn}({', '.join(args)})"
        lines.append(f"    {outs} = {call}" if outs else f"    {call}")
        dead = [var_name(v) for v in dies.get(j, ())]
        if dead:
            lines.append(f"    del {', '.join(dead)}")
    copies = output_copies(graph, reference)
    fresh = w.const(_fresh, "f") if copies else None
    ret = ", ".join(f"{fresh}({w.atom(v, var_name)})" if k in copies else w.atom(v, var_name)
                    for k, v in enumerate(graph.outvars))
    lines.append(f"    return [{ret}]")
    if arena:  # the program's own buffers: one arena per running call (fnad/_jit/arena.py)
        w.ns["arenas"] = Arenas(sizes, [(s, v.aval.shape, v.aval.dtype)
                                        for v, s in slot_of.items()])
        lines = ([head, "    A = arenas.take()", "    try:"] + ["    " + ln for ln in lines]
                 + ["    finally:", "        arenas.give(A)"])
    else:
        lines = [head] + lines
    return "\n".join(lines) + "\n", w.ns


def compile_graph(graph, inplace=True, reference=None):
    """A function `run(*flat_inputs) -> list of outputs` executing `graph` on arrays
    (`inplace`: results may take over dying buffers; `reference`: see `source_of`)."""
    text, ns = source_of(graph, inplace, reference)
    ns = dict(ns)
    ns["np"] = np
    code = compile(text, f"<fnad.jit {graph.name}>", "exec")
    exec(code, ns)  # our own generated source, from the graph above
    run = ns["run"]
    run.source = text
    run.arenas = ns.get("arenas")  # None when the program keeps no buffers of its own
    return run
