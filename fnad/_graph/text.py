"""The text form of a Graph (jaxpr-like): one primitive application a line."""

import numpy as np

from .ir import Program, Var, is_array_const

__all__ = ["graph_text", "Namer", "param_text"]


class Namer:
    """Short names for Vars in order of appearance: a, b, ..., z, ba, bb, ..."""

    def __init__(self):
        self.names = {}
        self.consts = {}

    def __call__(self, v):
        name = self.names.get(v)
        if name is None:
            n, s = len(self.names), ""
            while True:
                s = chr(97 + n % 26) + s
                n //= 26
                if n == 0:
                    break
            name = self.names[v] = s
        return name

    def atom(self, a):
        if type(a) is Var:
            return self(a)
        if type(a) in (list, tuple):
            inner = " ".join(self.atom(x) for x in a)
            return f"[{inner}]" if type(a) is list else f"({inner})"
        if is_array_const(a) and getattr(a, "ndim", 0) > 0:
            k = self.consts.setdefault(id(a), len(self.consts))
            return f"c{k}:{a.dtype}{list(a.shape)}"
        return param_text(a)


def param_text(p):
    if isinstance(p, Program):  # a control-flow body (fnad.lax)
        return f"{{{p.name}: {len(p.invars)} in, {len(p.eqns)} eqns, {len(p.outvars)} out}}"
    if isinstance(p, np.dtype) or (isinstance(p, type) and issubclass(p, np.generic)):
        return np.dtype(p).name
    if isinstance(p, float):
        return f"{p:.6g}"
    if hasattr(p, "shape") and hasattr(p, "dtype"):
        return f"{np.asarray(p).reshape(()).item()!r}" if p.size == 1 else f"{p.dtype}{p.shape}"
    if callable(p):
        return getattr(p, "__name__", type(p).__name__)
    text = repr(p)
    return text if len(text) <= 40 else text[:37] + "..."


def _decl(namer, v):
    return f"{namer(v)}:{v.aval}"


def graph_text(graph):
    namer = Namer()
    ins = " ".join(_decl(namer, v) for v in graph.invars)
    caps = " ".join(_decl(namer, v) for v, _ in graph.captured)
    lines = []
    for e in graph.eqns:
        outs = " ".join(_decl(namer, v) for v in e.outvars)
        params = ""
        if e.kwargs:
            params = "[" + " ".join(f"{k}={param_text(v)}" for k, v in e.kwargs.items()) + "]"
        args = " ".join(namer.atom(a) for a in e.args)
        lhs = f"{outs} = " if outs else ""  # an effect (debug.print) has no results
        lines.append(f"    {lhs}{e.prim.name}{params} {args}".rstrip())
    outs = " ".join(namer.atom(v) for v in graph.outvars)
    head = f"{{ lambda {caps + ' ' if caps else ''}; {ins} . let"
    body = "\n".join(lines)
    notes = "".join(f"\n  # {n}" for n in graph.notes)
    return (f"{head}\n{body}\n  in ({outs}) }}{notes}" if body
            else f"{head}\n  in ({outs}) }}{notes}")
