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
import inspect
import weakref

import numpy as np

from .._core.abstract import aval_of
from .._core.settings import setting
from .._core.tracer import Tracer, require_callable
from .._core.tree import _registry, tree_flatten, tree_unflatten
from .._graph.memory import output_copies
from .compile import compile_graph
from .._core.fpcheck import checks_on, restate
from . import fusion
from .attention import fuse_attention
from .fusion import fuse_elementwise, get_backend
from .loops import batch_loop_gemms
from .passes import eliminate_common_subexpressions, eliminate_dead_code, fold_constants
from .remat import rematerialize
from .rows import fast_step, fuse_rows
from .simplify import simplify
from .staging import split_static, static_key, trace_to_graph
from .unroll import unroll_scans

__all__ = ["jit", "optimize_graph", "PASSES", "passes_of", "clear_caches", "options_key"]


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
PASSES = ("unroll", "fold", "simplify", "cse", "dce", "loops", "rows", "fusion", "inplace")
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
    CSE, dead code, under fast math the weight GEMMs of unrolled loops batched
    (fnad/_jit/loops.py) and attention fused per (batch, head) tile (fnad/_jit/attention.py,
    with numba), row fusion (with the numba backend), elementwise fusion (`fusion`:
    a backend name, default the one set; `fast_math`: with fast math's approximations, and
    their cheap chains recomputed by later readers, fnad/_jit/remat.py).
    ("inplace" is the compiler's: `compile_graph`.)"""
    if unroll and "unroll" in passes:
        graph = unroll_scans(graph, unroll)
    for name, run in _GRAPH_PASSES:
        if name in passes:
            graph = run(graph)
    if fast_math and "loops" in passes:
        graph = batch_loop_gemms(graph)  # reassociates: fast math only
    numba = (fusion or get_backend()) == "numba"
    if fast_math and numba and {"rows", "fusion"} & set(passes):
        graph = fuse_attention(graph)  # attention per (batch, head) tile, with its backward
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


def _ints(value, what):
    """`value` (an int or a collection of ints) as a sorted tuple of distinct ints."""
    nums = (value,) if isinstance(value, (int, np.integer)) else value
    try:
        nums = tuple(nums)
    except TypeError:
        nums = (value,)
    for n in nums:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"jit: {what} must be an int or a tuple of ints, got {value!r}; "
                            f"e.g. {what}=0 or {what}=(0, 2).")
    return tuple(sorted({int(n) for n in nums}))


def _strs(value, what):
    """`value` (a str or a collection of them) as a sorted tuple of distinct names."""
    names = (value,) if isinstance(value, str) else tuple(value)
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"jit: {what} must be a str or a tuple of str, got {value!r}; "
                            f"e.g. {what}=\"training\".")
    return tuple(sorted(set(names)))


def _positional_names(fun):
    """The names of `fun`'s positional parameters, or None where there is no signature."""
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _infer_statics(fun, nums, names):
    """JAX's rule: a static parameter is static whether passed by position or by keyword, so
    static_argnums name their parameters and static_argnames give their positions."""
    params = _positional_names(fun) if nums or names else None
    if params is None:
        return nums, names
    nums = tuple(sorted(set(nums) | {params.index(n) for n in names if n in params}))
    names = tuple(sorted(set(names) | {params[n] for n in nums if 0 <= n < len(params)}))
    return nums, names


def options_key(static_argnums, static_argnames, donate_argnums, passes, unroll,
                fast_math=False):
    """Everything besides the function that a jitted function's traces depend on, as one
    tuple: with the function it keys the traces that every `jit(fun, ...)` with the same
    options shares. A new option of jit is one more field here. The fusion backend and its
    size threshold, read when a trace is optimised, are part of it: a jit made after they
    change optimises afresh."""
    return (static_argnums, static_argnames, donate_argnums, passes, unroll, fast_math,
            get_backend(), fusion.MIN_SIZE)


# function -> {options_key: (traces by signature, traces by the fast key)}: `jit(f)(x)`
# written inline makes a new jit each call, and finds the traces the last one made, as JAX's
# cache keyed on the function does. Weak: a function collected takes its traces with it.
_SHARED = weakref.WeakKeyDictionary()


def _shared_caches(fun, key):
    """The trace caches shared by every jit of `fun` with these options (fresh ones when
    `fun` cannot key a weak dictionary: unhashable or not weakly referable)."""
    try:
        per_fun = _SHARED.get(fun)
        if per_fun is None:
            per_fun = _SHARED[fun] = {}
    except TypeError:
        return {}, {}
    caches = per_fun.get(key)
    if caches is None:
        caches = per_fun[key] = ({}, {})
    return caches


def clear_caches():
    """Forget the traces of every jitted function (`jax.clear_caches`): each traces again at
    its next call. Compiled kernels on disk (FNAD_CACHE_DIR) stay."""
    for per_fun in list(_SHARED.values()):
        for cache, fast in per_fun.values():
            cache.clear()
            fast.clear()


def _check_hashable(name, what, value):
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"{name}: static argument {what} is a {type(value).__name__}, which is "
                        "not hashable; static arguments key the trace cache, so pass a hashable "
                        "value (a tuple instead of a list), or make it a dynamic argument."
                        ) from None


class jit:  # used like a function, as in JAX
    """Compile `fun`: trace it once per input signature, then replay the optimised program.

    Args:
      fun: a pure function of arrays (pytrees of arrays); Python scalars are dynamic
        (weakly typed) inputs; other Python values must be static. Arrays it closes over
        are constants of the trace: their values when it was traced, on every path
        (docs/jit.md, "What a jitted function reads and returns"). None: `jit(**options)`
        returns a decorator (`@fnad.jit(static_argnums=1)`).
      static_argnums: positional arguments that are Python values (sizes, flags, configs):
        they must be hashable, and each distinct value (of each type: 1, 1.0 and True are
        three) gets its own trace.
      static_argnames: the same by parameter name. As in JAX, a static parameter is static
        however it is passed (by position or by keyword).
      donate_argnums, donate_argnames: accepted and checked, as JAX's; fnad does not reuse
        a donated input's buffer for the outputs (NumPy arrays), so donating changes nothing.
      optimize: which optimisations run: True (all of them), False (none: the traced
        program as it is) or a collection of names from `jit.PASSES` ("unroll", "fold",
        "simplify", "cse", "dce", "loops", "rows", "fusion", "inplace"), e.g.
        `set(jit.PASSES) - {"fusion"}` to switch fusion off. Each gives the unoptimised
        program's bits (docs/jit.md), but "loops", which runs under fast math only.
      unroll: the most body equations a `lax.scan` may be unrolled into (its length times
        its body's equations): such scans become their steps in the program, so the other
        passes work across steps; same bits. 0 (the default) keeps every scan. Runs when
        "unroll" is among the `optimize` passes.
      fast_math: False (the default) keeps NumPy's bits. True (or FNAD_FAST_MATH=1 for
        every jit) lets the compiled program trade them for speed: exp, tanh, log, erf
        (float32) and expit join the fused numba kernels as vectorised approximations,
        each within the error bound docs/jit.md states (a few ulps), negations join them
        (NaN signs may differ from NumPy's), fused row sums are reassociated, and the
        weight GEMMs of unrolled loops are batched into one (the "loops" pass). Only the
        compiled program changes: grad(jit(f)), vmap and other transforms replay the
        exact operations. Part of the compile-cache key.

    Every jit of the same function with the same options shares its traces, so `jit(f)(x)`
    written inline traces once (`fnad.clear_caches()` forgets them all).

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

    def __new__(cls, fun=None, *args, **kwargs):
        if fun is None:  # @jit(static_argnums=...): a decorator factory, as jax.jit
            return lambda f: cls(f, *args, **kwargs)
        return super().__new__(cls)

    def __init__(self, fun=None, static_argnums=(), *, static_argnames=(), donate_argnums=(),
                 donate_argnames=(), optimize=True, unroll=0, fast_math=False):
        require_callable(fun, "jit")
        self.passes = passes_of(optimize)
        self.unroll = unroll_of(unroll)
        if not isinstance(fast_math, (bool, np.bool_)):
            raise TypeError(f"jit: fast_math must be True or False, got {fast_math!r}.")
        self.fast_math = bool(fast_math)
        functools.update_wrapper(self, fun)
        self.fun = fun
        nums, names = _infer_statics(fun, _ints(static_argnums, "static_argnums"),
                                     _strs(static_argnames, "static_argnames"))
        self.static_argnums, self.static_argnames = nums, names
        self._params = (_positional_names(fun) or []) if nums or names else []
        given = _ints(static_argnums, "static_argnums")
        self._spec = static_argnums if given == nums else nums  # as given, for its errors
        self.donate_argnums = _ints(donate_argnums, "donate_argnums")
        self.donate_argnames = _strs(donate_argnames, "donate_argnames")
        self.optimize = optimize
        self._name = getattr(fun, "__name__", "function")
        self._cache, self._fast = _shared_caches(fun, options_key(
            nums, names, self.donate_argnums, self.passes, self.unroll, self.fast_math))
        self._plain = not nums and not names

    def __get__(self, obj, objtype=None):  # a jitted method binds like a function
        return self if obj is None else functools.partial(self, obj)

    def _split_kwargs(self, kwargs, name):
        """(dynamic keyword arguments, static ones, their cache key)."""
        if not self.static_argnames or not kwargs:
            return kwargs, {}, ()
        static = {k: v for k, v in kwargs.items() if k in self.static_argnames}
        if not static:
            return kwargs, {}, ()
        for k, v in static.items():
            _check_hashable(name, repr(k), v)
        dyn = {k: v for k, v in kwargs.items() if k not in static}
        return dyn, static, tuple((k, static_key(static[k])) for k in sorted(static))

    def _lookup(self, args, kwargs):
        name = f"jit({self._name})"
        kwargs, static_kw, kw_key = self._split_kwargs(kwargs, name)
        nums = self.static_argnums
        if nums and nums[-1] >= len(args):  # named parameters given by keyword, or defaulted
            kept = tuple(n for n in nums if n < len(args) or n >= len(self._params))
            nums = nums if kept == nums else kept
        dyn, static, rebuild = split_static(
            args, self._spec if nums is self.static_argnums else nums, name)
        flat, in_tree = tree_flatten((dyn, kwargs))
        traced = False
        sig = []
        for i, x in enumerate(flat):
            if isinstance(x, Tracer):
                traced = True
            sig.append(_leaf_key(x, name, i))
        fast = self.fast_math or bool(setting("FNAD_FAST_MATH"))
        key = (in_tree, static, kw_key, tuple(sig), fast)
        entry = self._cache.get(key)
        if entry is None:
            fun = self.fun
            graph = trace_to_graph(lambda *d, **kw: fun(*rebuild(d), **kw, **static_kw),
                                   [aval_of(x) for x in flat], in_tree, "jit")
            graph.name = self._name
            entry = _Entry(graph, self.passes, self.unroll, fast)
            if not graph.captured:  # a trace that closed over outer tracers is not reusable
                self._cache[key] = entry
        return entry, flat, traced

    def __call__(self, *args, **kwargs):
        if checks_on():  # debug_nans: op by op, so a NaN is named with its line (JAX re-runs)
            try:
                return self.fun(*args, **kwargs)
            except FloatingPointError as e:
                raise restate(e) from e
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
