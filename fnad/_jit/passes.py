"""Optimisations on a Graph, each a function Graph -> Graph that keeps the results.

- `eliminate_dead_code`: drop equations none of whose results reach an output (an effect,
  such as fnad.debug.print, stays; no pass merges, folds or drops one).
- `eliminate_common_subexpressions`: one equation for identical (primitive, arguments,
  parameters); later copies read the first one's results.
- `fold_constants`: evaluate, once, equations whose arguments are all constants.
Each is bit-identical (no arithmetic is reordered). Fusion and buffer reuse live in
fnad/_jit/fusion.py and fnad/_graph/memory.py.
"""

import numpy as np

from .._graph.ir import Eqn, Var, flat_args, is_array_const, map_atoms, rebuild

__all__ = ["eliminate_dead_code", "eliminate_common_subexpressions", "fold_constants"]


def eliminate_dead_code(graph):
    live = {v for v in graph.outvars if type(v) is Var}
    kept = []
    for e in reversed(graph.eqns):
        if e.prim.effect or any(v in live for v in e.outvars):  # an effect (print) stays
            kept.append(e)
            live.update(e.invars())
    dropped = len(graph.eqns) - len(kept)
    return rebuild(graph, kept[::-1], note=f"dce: removed {dropped} equations" if dropped
                   else None)


def _key_atom(a):
    if type(a) is Var:
        return ("v", a.count)
    if type(a) in (list, tuple):
        return (type(a).__name__,) + tuple(_key_atom(x) for x in a)
    if is_array_const(a):
        return ("c", id(a))
    if type(a) is slice:  # unhashable before Python 3.12
        return ("slice", _key_atom(a.start), _key_atom(a.stop), _key_atom(a.step))
    if isinstance(a, float) and a != a:  # nan: equal to itself as a parameter
        return ("nan",)
    return ("p", type(a).__name__, a)


def _eqn_key(e):
    if e.prim.effect:  # two prints are two prints
        return None
    try:
        key = (e.prim, tuple(_key_atom(a) for a in e.args),
               tuple((k, _key_atom(v)) for k, v in sorted(e.kwargs.items())))
        hash(key)
        return key
    except TypeError:  # an unhashable parameter: leave the equation alone
        return None


def eliminate_common_subexpressions(graph):
    seen = {}
    mapping = {}
    kept = []
    for e in graph.eqns:
        if mapping:
            e = Eqn(e.prim, tuple(map_atoms(e.args, lambda v: mapping.get(v, v))), e.kwargs,
                    e.outvars, e.scope)
        key = _eqn_key(e)
        first = seen.get(key) if key is not None else None
        if first is not None:
            for v, w in zip(e.outvars, first.outvars):
                mapping[v] = w
            continue
        if key is not None:
            seen[key] = e
        kept.append(e)
    outvars = [mapping.get(v, v) if type(v) is Var else v for v in graph.outvars]
    n = len(graph.eqns) - len(kept)
    return rebuild(graph, kept, outvars, note=f"cse: merged {n} equations" if n else None)


def fold_constants(graph, max_bytes=1 << 24):
    """Evaluate equations on constants only (results up to `max_bytes` are kept)."""
    consts = {}
    kept = []
    for e in graph.eqns:
        args = map_atoms(e.args, lambda v: consts.get(v, v))
        if e.prim.effect or any(type(a) is Var for a in flat_args(args)):
            kept.append(Eqn(e.prim, tuple(args), e.kwargs, e.outvars, e.scope)
                        if any(v in consts for v in e.invars()) else e)
            continue
        with np.errstate(all="ignore"):
            out = e.prim.impl(*args, **e.kwargs)
        outs = list(out) if e.prim.multiple_results else [out]
        if sum(getattr(o, "nbytes", 8) for o in outs) > max_bytes:
            kept.append(e)
            continue
        for v, o in zip(e.outvars, outs):
            consts[v] = o
    outvars = [consts.get(v, v) if type(v) is Var else v for v in graph.outvars]
    n = len(graph.eqns) - len(kept)
    return rebuild(graph, kept, outvars, note=f"constant folding: {n} equations" if n else None)

