"""Graph helpers of the control-flow primitives: closing a traced body over the outer values
it captured, compiling it once, and deriving (once per body) its JVP and VJP programs.

A body Graph held by a primitive is "closed": its inputs are the captured outer values
first, then its own inputs, and it captures nothing. Derived graphs are traced from the
body Graph itself (each equation bound under `jvp` / `vjp` on staged inputs), so they are
programs of primitives too, with their own rules: derivatives of any order, and staging
under jit, come for free. Everything derived is cached on the body Graph object.
"""

from .._core.abstract import aval_of
from .._core.backend import array_module
from .._graph.graph import Graph
from .._graph.ir import Eqn, Var, is_array_const
from .._jit.compile import compile_graph
from .._jit.jit import optimize_graph
from .._jit.staging import trace_to_graph
from .._ad.transforms import jvp_with_ints as jvp
from .._ad.transforms import vjp_with_ints as vjp
from .._core.tree import tree_structure

__all__ = ["in_avals", "out_avals", "close", "runner", "trace_flat", "derived", "cached",
           "is_float", "diff_flags", "zeros", "as_arrays", "shared", "jvp_graph", "vjp_graph",
           "permuted"]


def in_avals(graph):
    return [v.aval for v in graph.invars]


def out_avals(graph):
    return [v.aval if type(v) is Var else aval_of(v) for v in graph.outvars]


def is_float(aval):
    return aval.dtype.kind in "fc"


def diff_flags(graph):
    """Per input of a closed body: whether it may carry a derivative (a float that is not a
    constant lifted out of the body)."""
    flags = [is_float(a) for a in in_avals(graph)]
    start, n = graph.lifted
    flags[start:start + n] = [False] * n
    return flags


def zeros(aval):
    """Concrete zeros of abstract value `aval` (a constant in any trace)."""
    return aval.xp.zeros(aval.shape, aval.dtype)


def as_arrays(outs, avals, like):
    """`outs` with Python scalars (a body returning a constant) made arrays of their aval."""
    if all(hasattr(o, "shape") for o in outs):
        return list(outs)
    xp = array_module(*like) if like else avals[0].xp
    return [o if hasattr(o, "shape") else xp.asarray(o, dtype=a.dtype)
            for o, a in zip(outs, avals)]


def close(graph, name):
    """`graph` as a closed body: its captured outer tracers, then the arrays it holds as
    constants, become leading inputs. Returns (body, those values). Bodies of the same
    program (equal up to those values: a loop body traced again on each call, closing over
    new parameter arrays) are one shared Graph, so what is derived and compiled from it is
    made once, not once per call."""
    caps = [v for v, _ in graph.captured]
    vals = [t for _, t in graph.captured]
    lifted = {}

    def lift(a):
        if type(a) is Var:
            return a
        if type(a) in (list, tuple):
            return type(a)(lift(x) for x in a) if any(is_array_const(x) for x in a) else a
        if not is_array_const(a):
            return a
        v = lifted.get(id(a))
        if v is None:
            v = lifted[id(a)] = Var(aval_of(a))
            caps.append(v)
            vals.append(a)
        return v

    eqns = [Eqn(e.prim, tuple(lift(a) for a in e.args), e.kwargs, e.outvars, e.scope)
            for e in graph.eqns]
    outvars = [lift(v) for v in graph.outvars]
    # inputs [n_captured, n_captured + lifted) are constants: never traced, no cotangent
    g = Graph(caps + graph.invars, eqns, outvars, graph.in_tree, graph.out_tree, (), name,
              lifted=(len(graph.captured), len(lifted)))
    return shared(g), vals


_SHARED = {}  # structural key -> the first closed body with it
_SHARED_MAX = 512


def _atom_key(a, num):
    if type(a) is Var:
        return num(a)
    if type(a) in (list, tuple):
        return (type(a).__name__,) + tuple(_atom_key(x, num) for x in a)
    if isinstance(a, float) and a != a:
        return ("nan",)
    if type(a) is slice:  # not hashable before Python 3.12
        return ("slice", a.start, a.stop, a.step)
    return ("p", type(a).__name__, a)


def _param_key(p):
    if type(p) is Graph:
        return ("graph", id(p))  # nested bodies are shared already: identity is structure
    return _atom_key(p, None)


def shared(g):
    names = {}

    def num(v):
        n = names.get(v)
        if n is None:
            n = names[v] = (len(names), v.aval.shape, v.aval.dtype, v.aval.weak_type, v.aval.xp)
        return n

    try:
        key = (tuple(num(v) for v in g.invars),
               tuple((e.prim, tuple(_atom_key(a, num) for a in e.args),
                      tuple((k, _param_key(p)) for k, p in sorted(e.kwargs.items())),
                      tuple(num(v) for v in e.outvars)) for e in g.eqns),
               tuple(_atom_key(v, num) for v in g.outvars), g.name,
               g.lifted, g.stacks_carries)
        hash(key)
    except TypeError:  # an unhashable parameter: this body is not shared
        return g
    first = _SHARED.get(key)
    if first is None:
        if len(_SHARED) >= _SHARED_MAX:
            _SHARED.clear()
        first = _SHARED[key] = g
    return first


def permuted(graph, in_order, out_order, name):
    """The same program with its inputs and outputs reordered (index lists)."""
    return Graph([graph.invars[i] for i in in_order], graph.eqns,
                 [graph.outvars[k] for k in out_order], graph.in_tree, graph.out_tree, (), name)


def cached(graph, key, make):
    """`make()`, computed once per body graph and key."""
    cache = graph.derived
    val = cache.get(key)
    if val is None:
        val = cache[key] = make()
    return val


def runner(graph):
    """The optimised, compiled program of a closed graph: `run(*flat) -> list`."""
    return cached(graph, "run", lambda: compile_graph(optimize_graph(graph),
                                                  reference=graph))


def trace_flat(fun, avals, name):
    """Trace `fun(*flat)` on abstract values into a graph."""
    in_tree = tree_structure((tuple(range(len(avals))), {}))
    return trace_to_graph(fun, avals, in_tree, name, freeze=False)  # close() lifts arrays


def derived(fun, avals, name):
    """`trace_flat` for a derived program, which captures nothing: `fun` runs a closed
    graph, so it meets no outer tracer."""
    g = trace_flat(fun, avals, name)
    g.name = name
    if g.captured:  # pragma: no cover - an internal invariant
        raise AssertionError(f"internal: derived program {name} captured outer values")
    return g


def jvp_graph(graph, with_tangent):
    """(*primals, *tangents of the inputs marked in `with_tangent`) -> (*outputs, *tangents
    of the float outputs), the forward-mode program of the closed `graph`."""
    def make():
        ins, outs = in_avals(graph), out_avals(graph)
        n = len(ins)
        t_idx = [i for i, w in enumerate(with_tangent) if w]
        f_out = [k for k, a in enumerate(outs) if is_float(a)]

        def fun(*flat):
            full = [zeros(a) for a in ins]
            for i, t in zip(t_idx, flat[n:]):
                full[i] = t
            o, t_o = jvp(lambda *p: graph.run_flat(list(p)), tuple(flat[:n]), tuple(full))
            return list(o) + [t_o[k] for k in f_out]

        return derived(fun, ins + [ins[i] for i in t_idx], graph.name + "_jvp")
    return cached(graph, ("jvp", tuple(with_tangent)), make)


def vjp_graph(graph, diff_in, diff_out):
    """(*primals, *cotangents of the outputs marked in `diff_out`) -> cotangents of the
    inputs marked in `diff_in`, the reverse-mode program of the closed `graph`."""
    def make():
        ins, outs = in_avals(graph), out_avals(graph)
        n = len(ins)
        i_idx = [i for i, d in enumerate(diff_in) if d]
        o_idx = [k for k, d in enumerate(diff_out) if d]

        def fun(*flat):
            prims = list(flat[:n])

            def f(*d):
                full = list(prims)
                for i, x in zip(i_idx, d):
                    full[i] = x
                res = graph.run_flat(full)
                return [res[k] for k in o_idx]

            _, f_vjp = vjp(f, *[prims[i] for i in i_idx])
            return list(f_vjp(list(flat[n:])))

        return derived(fun, ins + [outs[k] for k in o_idx], graph.name + "_vjp")
    return cached(graph, ("vjp", tuple(diff_in), tuple(diff_out)), make)
