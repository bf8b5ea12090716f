"""`jit`: trace a function once per input signature into a Graph, optimise it, and replay
the compiled program on later calls.

The signature of a call is the pytree structure of its arguments, each leaf's shape, dtype,
weak type and device (the same for a tracer as for the array it stands for), and the types
and values of the static arguments. On arrays the optimised,
compiled program runs (no tracers at all). When an argument is a tracer of another
transform (grad(jit(f)), jvp, vmap, an outer jit), the unoptimised graph is replayed by
binding each primitive, so that transform sees exactly the operations `f` performs.
"""

import functools

import numpy as np

from .._core.abstract import aval_of
from .._core.settings import setting
from .._core.tracer import Tracer, require_callable
from .._core.tree import _registry, tree_flatten, tree_unflatten
from .._graph.memory import output_copies
from .compile import compile_graph
from .fusion import fuse_elementwise, get_backend
from .passes import eliminate_common_subexpressions, eliminate_dead_code, fold_constants
from .remat import rematerialize
from .rows import fast_step, fuse_rows
from .simplify import simplify
from .staging import split_static, trace_to_graph
from .unroll import unroll_scans

__all__ = ["jit", "optimize_graph", "PASSES", "passes_of"]


def _aval_key(a):
    return (a.shape, a.dtype, a.weak_type, a.device)


# Python scalars key as their abstract values (weakly typed 0-d arrays)
_SCALAR_KEYS = {t: _aval_key(aval_of(t())) for t in (float, int, bool, complex)}


def _leaf_key(x, name, i):
    """A leaf's part of the cache key: its abstract value (shape, dtype, weak type, device),
    the same for an array and for a tracer of another transform that stands for one, so
    that grad, jvp and vmap of a jitted function replay the trace its plain calls made."""
    t = type(x)
    if t is np.ndarray or isinstance(x, np.generic):  # a NumPy scalar keys as a 0-d array
        return (x.shape, x.dtype, False, "cpu")
    key = _SCALAR_KEYS.get(t)
    if key is not None:
        return key
    try:
        a = aval_of(x)
    except TypeError:
        raise TypeError(f"{name}: argument leaf {i} is a {t.__name__}, which is not an array "
                        "or a Python scalar; pass it through static_argnums (a hashable "
                        "Python value), or make it an array.") from None
    return _aval_key(a)


def _fast_key(x, leaves, depth=0):
    """The cache key of a call's dynamic arguments (structure and each leaf's shape and
    dtype) built in one walk with the leaves, for plain arrays, Python scalars, tuples,
    lists, dicts with sortable keys, namedtuples and None; None for anything else (a
    tracer, another array type, a registered node): the full lookup handles those."""
    t = type(x)
    if t is np.ndarray:
        leaves.append(x)
        return (x.shape, x.dtype)
    if t is float or t is int or t is bool:
        leaves.append(x)
        return t
    if depth > 50:
        return None
    if t is dict:
        try:
            keys = sorted(x)
        except TypeError:
            return None
        out = [dict, tuple(keys)]
        for k in keys:
            c = _fast_key(x[k], leaves, depth + 1)
            if c is None:
                return None
            out.append(c)
        return tuple(out)
    if t is tuple or t is list or (isinstance(x, tuple) and hasattr(t, "_fields")
                                   and t not in _registry):
        out = [t]
        for v in x:
            c = _fast_key(v, leaves, depth + 1)
            if c is None:
                return None
            out.append(c)
        return tuple(out)
    if x is None:
        return ()
    return None


def _builder(treedef):
    """A function `leaves -> pytree of structure treedef`, made once per output structure."""
    ns = {"tree_unflatten": tree_unflatten, "treedef": treedef}
    count = [0]

    def expr(td):
        t = td.node_type
        if t is None:
            count[0] += 1
            return f"o[{count[0] - 1}]"
        kids = [expr(c) for c in td.children]
        if t is tuple:
            return f"({', '.join(kids)}{',' if len(kids) == 1 else ''})"
        if t is list:
            return f"[{', '.join(kids)}]"
        if t is dict and all(type(k) is str for k in td.aux):
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(td.aux, kids)) + "}"
        if t is type(None):
            return "None"
        if isinstance(t, type) and issubclass(t, tuple) and hasattr(t, "_fields"):
            name = f"T{len(ns)}"
            ns[name] = t
            return f"{name}({', '.join(kids)})"
        raise LookupError
    try:
        body = expr(treedef)
    except (LookupError, RecursionError):
        return lambda o: tree_unflatten(treedef, o)
    exec(f"def build(o):\n    return {body}\n", ns)  # our own source
    return ns["build"]


# The optimisations, in the order they run; `fnad.jit(f, optimize=...)` takes a set of them.
PASSES = ("unroll", "fold", "simplify", "cse", "dce", "rows", "fusion", "inplace")
_GRAPH_PASSES = (("fold", fold_constants), ("simplify", simplify),
                 ("cse", eliminate_common_subexpressions), ("dce", eliminate_dead_code))


def passes_of(optimize):
    """The set of pass names an `optimize=` value selects: True every pass, False none, or
    a collection of names from PASSES (the others are switched off)."""
    if optimize is True:
        return frozenset(PASSES)
    if optimize is False or optimize is None:
        return frozenset()
    if isinstance(optimize, str):
        optimize = (optimize,)
    try:
        names = frozenset(optimize)
    except TypeError:
        raise TypeError(f"jit: optimize must be True, False or a collection of pass names "
                        f"from {PASSES}, got {optimize!r}.") from None
    unknown = names - set(PASSES)
    if unknown:
        raise ValueError(f"jit: unknown optimisation(s) {sorted(unknown)}; the passes are "
                         f"{PASSES} (optimize=True runs them all, False none).")
    return names


def unroll_of(unroll):
    """`unroll=` checked: a non-negative int, the most body equations a scan unrolls into."""
    what = ("jit: unroll is the most body equations a short lax.scan may be unrolled into: "
            "an int >= 0 (0 keeps every scan)")
    if isinstance(unroll, bool) or not isinstance(unroll, int):
        raise TypeError(f"{what}, got {unroll!r}.")
    if unroll < 0:
        raise ValueError(f"{what}, got {unroll}.")
    return unroll


def optimize_graph(graph, fusion=None, passes=PASSES, unroll=0, fast_math=False):
    """The graph passes among `passes`, in order: unrolling of the scans whose length x body
    equations is at most `unroll` (0: none), constant folding, algebraic simplification,
    CSE, dead code, row fusion (with the numba backend), elementwise fusion (`fusion`: a
    backend name, default the one set; `fast_math`: with fast math's approximations, and
    their cheap chains recomputed by later readers, fnad/_jit/remat.py).
    ("inplace" is the compiler's: `compile_graph`.)"""
    if unroll and "unroll" in passes:
        graph = unroll_scans(graph, unroll)
    for name, run in _GRAPH_PASSES:
        if name in passes:
            graph = run(graph)
    numba = (fusion or get_backend()) == "numba"
    if fast_math and numba and {"rows", "fusion"} & set(passes):
        graph = rematerialize(graph, fast_step)  # cheap chains recomputed where read again
    if "rows" in passes and numba:
        graph = fuse_rows(graph, fast_math=fast_math)
    return fuse_elementwise(graph, fusion, fast_math) if "fusion" in passes else graph


class _Entry:
    """One traced signature: the graph, the optimised graph and its compiled program."""

    __slots__ = ("graph", "optimized", "run", "build", "copies")

    def __init__(self, graph, passes, unroll, fast_math=False):
        self.graph = graph
        self.optimized = optimize_graph(graph, passes=passes, unroll=unroll,
                                        fast_math=fast_math)
        self.run = None if graph.captured else compile_graph(
            self.optimized, inplace="inplace" in passes, reference=graph)
        self.build = _builder(graph.out_tree)
        self.copies = output_copies(graph)  # what a replay must copy too (constants)

    def replay(self, flat):
        """The unoptimised graph bound primitive by primitive (for other transforms'
        tracers), its outputs that are constants of the trace copied as compiled runs do."""
        outs = self.graph.run_flat(flat)
        for k in self.copies:
            if not isinstance(outs[k], Tracer) and hasattr(outs[k], "copy"):
                outs[k] = outs[k].copy(order="K")
        return outs


class jit:  # used like a function, as in JAX
    """Compile `fun`: trace it once per input signature, then replay the optimised program.

    Args:
      fun: a pure function of arrays (pytrees of arrays); Python scalars are dynamic
        (weakly typed) inputs; other Python values must be static. Arrays it closes over
        are constants of the trace: their values when it was traced, on every path
        (docs/jit.md, "What a jitted function reads and returns").
      static_argnums: positional arguments that are Python values (sizes, flags, configs):
        they must be hashable, and each distinct value (of each type: 1, 1.0 and True are
        three) gets its own trace.
      optimize: which optimisations run: True (all of them), False (none: the traced
        program as it is) or a collection of names from `jit.PASSES` ("unroll", "fold",
        "simplify", "cse", "dce", "rows", "fusion", "inplace"), e.g. `set(jit.PASSES) - {"fusion"}`
        to switch fusion off. Each gives the unoptimised program's bits (docs/jit.md).
      unroll: the most body equations a `lax.scan` may be unrolled into (its length times
        its body's equations): such scans become their steps in the program, so the other
        passes work across steps; same bits. 0 (the default) keeps every scan. Runs when
        "unroll" is among the `optimize` passes.
      fast_math: False (the default) keeps NumPy's bits. True (or FNAD_FAST_MATH=1 for
        every jit) lets the compiled program trade them for speed: exp, tanh, log, erf
        (float32) and expit join the fused numba kernels as vectorised approximations,
        each within the error bound docs/jit.md states (a few ulps), negations join them
        (NaN signs may differ from NumPy's), and fused row sums are reassociated. Only the
        compiled program changes: grad(jit(f)), vmap and other transforms replay the
        exact operations. Part of the compile-cache key.

    Returns:
      A callable with `fun`'s signature, returning new arrays wherever `fun` would.
      `.graph(*args)` gives the optimised Graph a call with these arguments runs (print
      it, or `.to_dot()`); `.cache_size()` the number of traces made; `.clear_cache()`
      forgets them.

    Example:
      step = fnad.jit(train_step)
      params, state, loss = step(params, state, batch)   # traced once, then replayed
      rnn = fnad.jit(rnn_loss, unroll=4000)              # its short scans unrolled
      gelu = fnad.jit(tanh_gelu, fast_math=True)          # vectorised tanh, ~2 ulps
    """

    PASSES = PASSES

    def __init__(self, fun, static_argnums=(), *, optimize=True, unroll=0, fast_math=False):
        require_callable(fun, "jit")
        self.passes = passes_of(optimize)
        self.unroll = unroll_of(unroll)
        if not isinstance(fast_math, (bool, np.bool_)):
            raise TypeError(f"jit: fast_math must be True or False, got {fast_math!r}.")
        self.fast_math = bool(fast_math)
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.static_argnums = static_argnums
        self.optimize = optimize
        self._name = getattr(fun, "__name__", "function")
        self._cache = {}
        self._fast = {}  # _fast_key of the arguments -> entry, for calls on plain arrays
        self._plain = not static_argnums and static_argnums != 0

    def __get__(self, obj, objtype=None):  # a jitted method binds like a function
        return self if obj is None else functools.partial(self, obj)

    def _lookup(self, args, kwargs):
        name = f"jit({self._name})"
        dyn, static, rebuild = split_static(args, self.static_argnums, name)
        flat, in_tree = tree_flatten((dyn, kwargs))
        traced = False
        sig = []
        for i, x in enumerate(flat):
            if isinstance(x, Tracer):
                traced = True
            sig.append(_leaf_key(x, name, i))
        fast = self.fast_math or bool(setting("FNAD_FAST_MATH"))
        key = (in_tree, static, tuple(sig), fast)
        entry = self._cache.get(key)
        if entry is None:
            fun = self.fun
            graph = trace_to_graph(lambda *d, **kw: fun(*rebuild(d), **kw),
                                   [aval_of(x) for x in flat], in_tree, "jit")
            graph.name = self._name
            entry = _Entry(graph, self.passes, self.unroll, fast)
            if not graph.captured:  # a trace that closed over outer tracers is not reusable
                self._cache[key] = entry
        return entry, flat, traced

    def __call__(self, *args, **kwargs):
        key = None
        if self._plain and not kwargs:
            flat = []
            key = _fast_key(args, flat)
            entry = self._fast.get(key) if key is not None else None
            if entry is not None:
                return entry.build(entry.run(*flat))
        entry, flat, traced = self._lookup(args, kwargs)
        if key is not None and not traced and entry.run is not None and len(self._fast) < 64:
            self._fast[key] = entry
        graph = entry.graph
        if traced or entry.run is None:
            outs = entry.replay(flat)
        else:
            outs = entry.run(*flat)
        return tree_unflatten(graph.out_tree, outs)

    def graph(self, *args, **kwargs):
        """The optimised Graph that a call with these arguments runs."""
        entry, flat, _ = self._lookup(args, kwargs)
        entry.optimized.example_inputs = flat
        return entry.optimized

    def _entry(self, *args, **kwargs):
        return self._lookup(args, kwargs)[0]

    def cache_size(self):
        """The number of traces made (one per input signature)."""
        return len(self._cache)

    def clear_cache(self):
        """Forget every trace; the next call traces again."""
        self._cache.clear()
        self._fast.clear()
