"""`jit`: trace a function once per input signature into a Graph, optimise it, and replay
the compiled program on later calls.

The signature of a call is the pytree structure of its arguments, each leaf's shape, dtype,
weak type and device, and the values of the static arguments. On arrays the optimised,
compiled program runs (no tracers at all). When an argument is a tracer of another
transform (grad(jit(f)), jvp, vmap, an outer jit), the unoptimised graph is replayed by
binding each primitive, so that transform sees exactly the operations `f` performs.
"""

import functools

import numpy as np

from ._abstract import aval_of
from ._graph_compile import compile_graph
from ._graph_passes import eliminate_common_subexpressions, eliminate_dead_code, fold_constants
from ._staging import trace_to_graph
from ._tracer import Tracer
from ._tree import tree_flatten, tree_unflatten

__all__ = ["jit", "split_static", "optimize"]


def _static_nums(static_argnums, nargs, name):
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    out = []
    for n in nums:
        if not isinstance(n, int):
            raise TypeError(f"{name}: static_argnums must be ints, got {static_argnums!r}.")
        if not -nargs <= n < nargs:
            raise ValueError(f"{name}: static_argnums={static_argnums!r} is out of range for a "
                             f"call with {nargs} positional arguments.")
        out.append(n % nargs)
    return tuple(sorted(set(out)))


def split_static(args, static_argnums, name):
    """(dynamic args, static args, rebuild(dynamic) -> all args)."""
    if not static_argnums and static_argnums != 0:
        return tuple(args), (), tuple
    nums = _static_nums(static_argnums, len(args), name)
    static = tuple(args[n] for n in nums)
    for n, s in zip(nums, static):
        try:
            hash(s)
        except TypeError:
            raise TypeError(f"{name}: static argument {n} is a {type(s).__name__}, which is not "
                            "hashable; static arguments key the trace cache, so pass a hashable "
                            "value (a tuple instead of a list), or make it a dynamic argument."
                            ) from None
    dyn = tuple(a for i, a in enumerate(args) if i not in nums)

    def rebuild(d):
        full, it_d, it_s = [], iter(d), iter(static)
        for i in range(len(args)):
            full.append(next(it_s) if i in nums else next(it_d))
        return tuple(full)

    return dyn, static, rebuild


def _leaf_key(x, name, i):
    t = type(x)
    if t is np.ndarray or isinstance(x, np.generic):  # a NumPy scalar keys as a 0-d array
        return (x.shape, x.dtype)
    if t in (float, int, bool, complex):
        return t
    try:
        a = aval_of(x)
    except TypeError:
        raise TypeError(f"{name}: argument leaf {i} is a {t.__name__}, which is not an array "
                        "or a Python scalar; pass it through static_argnums (a hashable "
                        "Python value), or make it an array.") from None
    return (a.shape, a.dtype, a.weak_type, a.device)


def optimize(graph):
    """The default passes, in order: constant folding, CSE, dead code."""
    graph = fold_constants(graph)
    graph = eliminate_common_subexpressions(graph)
    return eliminate_dead_code(graph)


class _Entry:
    """One traced signature: the graph, the optimised graph and its compiled program."""

    __slots__ = ("graph", "optimized", "run")

    def __init__(self, graph, opt):
        self.graph = graph
        self.optimized = optimize(graph) if opt else graph
        self.run = None if graph.captured else compile_graph(self.optimized)


def jit(fun, static_argnums=(), *, optimize=True):
    """Compile `fun`: trace it once per input signature, then replay the optimised program.

    Args:
      fun: a pure function of arrays (pytrees of arrays); Python scalars are dynamic
        (weakly typed) inputs; other Python values must be static.
      static_argnums: positional arguments that are Python values (sizes, flags, configs):
        they must be hashable, and each distinct value gets its own trace.
      optimize: run the graph optimisations (constant folding, CSE, dead code, fusion,
        buffer reuse); False replays the traced program as it is.

    Returns:
      A function with `fun`'s signature. `.graph(*args)` gives the optimised Graph a call
      with these arguments runs (print it, or `.to_dot()`); `.cache_size()` the number of
      traces made.

    Example:
      step = fnad.jit(train_step)
      params, state, loss = step(params, state, batch)   # traced once, then replayed
    """
    name = getattr(fun, "__name__", "function")
    cache = {}

    def lookup(args, kwargs):
        dyn, static, rebuild = split_static(args, static_argnums, f"jit({name})")
        flat, in_tree = tree_flatten((dyn, kwargs))
        traced = False
        sig = []
        for i, x in enumerate(flat):
            if isinstance(x, Tracer):
                traced = True
            sig.append(_leaf_key(x, f"jit({name})", i))
        key = (in_tree, static, tuple(sig))
        entry = cache.get(key)
        if entry is None:
            avals = [aval_of(x) for x in flat]
            graph = trace_to_graph(lambda *d, **kw: fun(*rebuild(d), **kw), avals, in_tree,
                                   "jit")
            graph.name = name
            entry = _Entry(graph, optimize)
            if not graph.captured:  # a trace that closed over outer tracers is not reusable
                cache[key] = entry
        return entry, flat, traced

    @functools.wraps(fun)
    def jitted(*args, **kwargs):
        entry, flat, traced = lookup(args, kwargs)
        graph = entry.graph
        if traced or entry.run is None:
            outs = graph.run_flat(flat)
        else:
            outs = entry.run(*flat)
        return tree_unflatten(graph.out_tree, outs)

    def graph_of(*args, **kwargs):
        """The optimised Graph that a call with these arguments runs."""
        entry, flat, _ = lookup(args, kwargs)
        entry.optimized.example_inputs = flat
        return entry.optimized

    jitted.graph = graph_of
    jitted.cache_size = lambda: len(cache)
    jitted.clear_cache = cache.clear
    return jitted
