"""Staging: trace a function on abstract values (shape and dtype) into a `Graph`.

A `StagingTrace` has tracers that hold an abstract value and a `Var`, never a number. Each
primitive call on them is recorded as an `Eqn` (primitive, arguments with `Var`s in place
of tracers, keyword arguments, output `Var`s) after the primitive's `abstract_eval` gives
the outputs' shapes and dtypes. Arrays the function closes over become constants of the
trace, copied when it first meets them (read-only copies), so that every later call and
every transform of the staged function (grad, jvp, vmap of jit(f)) sees the values they
had while tracing, as in JAX; tracers of other (outer) transforms it closes over become
extra inputs ("captured").
Python control flow on a staged value cannot be decided and raises `ConcretizationError`.
Each equation records the `named_scope`s open when it was staged (`Eqn.scope`), which the
pictures use to group and fold blocks.
"""

import numpy as np

from .._ad.forward import forward_mode_error
from .._ad.reverse import custom_jvp_cotangents, rule_cotangents
from .._ad.transforms import jvp_with_ints as jvp
from .._ad.transforms import vjp_with_ints as vjp
from .._batching.vmap import batch_checkpoint, batch_custom_jvp, batch_custom_vjp
from .._core.abstract import abstract_eval, aval_of, is_aval
from .._core.backend import is_device_array
from .._core.custom import CustomVJPRule
from .._core.tracer import ConcretizationError as ConcretizationError
from .._core.tracer import (Primitive, Trace, Tracer, bind_traced, finish_trace,
                            raise_if_escaped)
from .._core.tree import tree_flatten, tree_structure, tree_unflatten
from .._graph.graph import Graph
from .._graph.ir import Eqn, Var
from .compile import compile_graph
from .scopes import current_scope

__all__ = ["StagingTrace", "StagingTracer", "ConcretizationError", "trace_to_graph",
           "make_graph", "split_static", "static_key"]

def _concretization_error(tracer, conversion):
    return ConcretizationError(
        f"{conversion}() of a staged value ({tracer.aval}) inside "
        f"{tracer._trace.transform}: while staging, values have a shape and a dtype but no "
        "numbers, so Python control flow (if/while/bool/int/float/indexing with them) cannot "
        "be decided. Two ways out: mark the argument it comes from static "
        "(fnad.jit(f, static_argnums=(i,))), so each value gets its own trace; or express the "
        "choice as data, e.g. fnp.where(c, a, b) or fnad.lax.cond / fnad.lax.while_loop / "
        "fnad.lax.fori_loop / fnad.lax.scan.")


def _frozen_copy(x):
    """A read-only copy of `x` with its memory layout: NumPy picks a matmul's algorithm (BLAS
    or its own loop, so the summation order) by the operands' strides. A broadcast view
    (stride 0, as a sum's cotangent) keeps its zero strides and copies only the values it
    repeats, so jit's constant takes NumPy's path that eager's view took."""
    if not isinstance(x, np.ndarray) or x.size == 0 or 0 not in x.strides:
        c = x.copy(order="K")
        if isinstance(c, np.ndarray):
            c.flags.writeable = False
        return c
    values = x[tuple(slice(0, 1) if s == 0 else slice(None) for s in x.strides)]
    values = values.copy(order="K")
    strides = tuple(0 if s == 0 else t for s, t in zip(x.strides, values.strides))
    return np.lib.stride_tricks.as_strided(values, x.shape, strides, writeable=False)


class StagingTracer(Tracer):
    """A staged value: an abstract value and the `Var` that names it in the graph."""

    __slots__ = ("_trace", "var")

    def __init__(self, trace, var):
        self._trace = trace
        self.var = var

    @property
    def aval(self):
        return self.var.aval

    @property
    def value(self):
        return self  # nothing more concrete below: getval stops here

    def __bool__(self):
        raise _concretization_error(self, "bool")

    def __float__(self):
        raise _concretization_error(self, "float")

    def __int__(self):
        raise _concretization_error(self, "int")

    def __index__(self):
        raise _concretization_error(self, "index")

    def __complex__(self):
        raise _concretization_error(self, "complex")

    def __array__(self, dtype=None, copy=None):
        raise_if_escaped(self, "numpy.asarray() (or another NumPy conversion)")
        cast = f"cast it with x.astype({dtype}), " if dtype is not None else ""
        raise ConcretizationError(
            f"a staged value ({self.aval}) inside {self._trace.transform} was converted to a "
            "NumPy array (plain NumPy, np.asarray, or a function that reads its values): "
            f"while staging it has a shape and a dtype but no numbers. Use fnad.numpy "
            f"functions on it ({cast}not numpy's), mark the argument it comes from static "
            "(fnad.jit(f, static_argnums=(i,))), or call that code outside the jitted "
            "function.")

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of a 0-d staged value")
        return self.aval.shape[0]

    def __repr__(self):
        return f"StagingTracer({self.aval}, {self.var})"


class StagingTrace(Trace):
    """Records every primitive call on its tracers as an equation."""

    __slots__ = ("eqns", "invars", "captured", "transform", "_captured_ids", "_consts",
                 "freeze")

    def __init__(self, transform="jit", freeze=True):
        super().__init__()
        self.eqns = []
        self.invars = []
        self.captured = []  # (var, outer tracer) for tracers of other traces used inside
        self._captured_ids = {}
        self._consts = {}  # id(array met) -> (that array, its frozen copy)
        self.transform = transform
        self.freeze = freeze  # False: arrays stay as they are (a body whose caller lifts them)

    def new_arg(self, aval):
        var = Var(aval)
        self.invars.append(var)
        return StagingTracer(self, var)

    def atom(self, x):
        """`x` as it appears in an equation: a Var for a tracer, a frozen copy for an array
        (`constant`), `x` itself otherwise."""
        if isinstance(x, Tracer):
            if type(x) is StagingTracer and x._trace is self:
                return x.var
            return self._capture(x)
        if self.freeze and (isinstance(x, np.ndarray) or is_device_array(x)):
            return self.constant(x)
        if type(x) in (list, tuple):
            for y in x:
                if isinstance(y, (Tracer, np.ndarray, list, tuple)) or is_device_array(y):
                    return type(x)(self.atom(y) for y in x)
        return x

    def constant(self, x):
        """The trace's copy of the array `x`, made when the trace first meets `x`: the
        values of closed-over arrays are those they had while tracing (JAX's semantics),
        and the copy is read-only, so nothing the program hands out can change it."""
        hit = self._consts.get(id(x))
        if hit is not None:
            return hit[1]
        c = _frozen_copy(x)
        self._consts[id(x)] = (x, c)  # x is kept alive, so its id is not reused
        return c

    def _capture(self, x):
        var = self._captured_ids.get(id(x))
        if var is None:
            var = self._captured_ids[id(x)] = Var(x.aval)
            self.captured.append((var, x))
        return var

    def process(self, prim, args, kwargs):
        out = abstract_eval(prim, *args, **kwargs)
        atoms = tuple(self.atom(a) for a in args)
        if kwargs:
            kwargs = {k: self.atom(v) for k, v in kwargs.items()}
        if prim.multiple_results:
            outvars = [Var(a) for a in out]
            self.eqns.append(Eqn(prim, atoms, kwargs, outvars, current_scope()))
            return tuple(StagingTracer(self, v) for v in outvars)
        var = Var(out)
        self.eqns.append(Eqn(prim, atoms, kwargs, [var], current_scope()))
        return StagingTracer(self, var)

    def process_custom_vjp(self, rule, args):
        flat, in_tree = rule.flatten(args)
        prim, out_tree = _custom_vjp_primitive(rule, args, flat, in_tree, self.transform)
        return tree_unflatten(out_tree, list(bind_traced(prim, tuple(flat), {})))

    def process_custom_jvp(self, rule, args):
        flat, in_tree = rule.flatten(args)
        prim, out_tree = _custom_jvp_primitive(rule, args, flat, in_tree, self.transform)
        return tree_unflatten(out_tree, list(bind_traced(prim, tuple(flat), {})))

    def process_checkpoint(self, fun, args, kwargs, name):
        flat, in_tree = tree_flatten((args, kwargs))
        dyn = [i for i, x in enumerate(flat) if _is_operand(x)]
        prim, out_tree, operands = _checkpoint_primitive(fun, flat, in_tree, dyn, name,
                                                         self.transform)
        return tree_unflatten(out_tree, list(bind_traced(prim, tuple(operands), {})))


# ----------------------------------------------------------------------------- custom rules
# A custom_vjp or checkpoint call inside jit is one primitive in the graph, made for that
# call: its implementation runs the function, its rules run the custom VJP (or the function
# again, under vjp, for checkpoint), so grad of the staged program in either order uses them,
# and the optimiser cannot merge a checkpointed forward pass with its recomputation.

def _is_operand(x):
    return isinstance(x, (Tracer, bool, int, float, complex)) or hasattr(x, "dtype")


def _staged(fun, flat, transform):
    """Trace `fun(*flat)`: (the graph, its outputs' structure, their abstract values)."""
    graph = trace_to_graph(fun, [aval_of(x) for x in flat], tree_structure((tuple(flat), {})),
                           transform)
    return graph, graph.out_tree, tuple(v.aval if type(v) is Var else aval_of(v)
                                        for v in graph.outvars)


def _replay(graph):
    """`graph` as a function of its flat inputs returning its output pytree: run on arrays
    it calls the implementations, on tracers it binds each primitive (as `jit` replays)."""
    return lambda *flat: tree_unflatten(graph.out_tree, graph.run_flat(list(flat)))


def _frozen_rule(rule, args, flat, in_tree, transform, fun_g):
    """`rule` with `fun`, `fwd` and `bwd` replaced by replays of programs traced now, so that
    the arrays they close over keep their values of this moment, on every path (the call,
    grad(jit(f)), vmap(jit(f))), as the rest of the trace does. None when one of them
    cannot be traced (it closes over outer tracers, reads values, or returns residuals
    that are not arrays): then they run as Python code when called."""
    def of_leaves(f):
        return lambda *vals: f(*rule.fill_leaves(args, vals, in_tree))

    fixed = [args[i] for i in rule.nondiff_argnums]
    try:
        fwd_g = _staged(of_leaves(rule.fwd), flat, transform)[0]
        out_def, res_def = fwd_g.out_tree.children
        n_out = out_def.num_leaves
        res_avals = [v.aval if type(v) is Var else aval_of(v) for v in fwd_g.outvars[n_out:]]
        out_avals = [v.aval if type(v) is Var else aval_of(v) for v in fwd_g.outvars[:n_out]]

        def bwd_of_leaves(*leaves):
            res = tree_unflatten(res_def, list(leaves[:len(res_avals)]))
            return rule.bwd(*fixed, res, tree_unflatten(out_def, list(leaves[len(res_avals):])))
        bwd_g = trace_to_graph(bwd_of_leaves, res_avals + out_avals,
                               tree_structure((tuple(res_avals + out_avals), {})), transform)
    except Exception:  # not traceable: the rules run as Python code instead
        return None
    if fun_g.captured or fwd_g.captured or bwd_g.captured:
        return None
    fun_run, fwd_run, bwd_run = _replay(fun_g), _replay(fwd_g), _replay(bwd_g)

    def fun(*full):
        return fun_run(*rule.flatten(full)[0])

    def fwd(*full):
        return fwd_run(*rule.flatten(full)[0])

    def bwd(*fixed_and_res_g):
        res, g = fixed_and_res_g[-2:]
        return bwd_run(*tree_flatten(res)[0], *tree_flatten(g)[0])

    return CustomVJPRule(fun, fwd, bwd, rule.nondiff_argnums, rule.name)


def _impl_of(fun, graph):
    """The implementation of a custom rule's primitive: `graph` compiled (the program traced
    now, whose closed-over arrays keep their values), or `fun` run as Python code (None)."""
    if graph is None:
        return lambda *vals: tuple(tree_flatten(fun(*vals))[0])
    run = compile_graph(graph)
    return lambda *vals: tuple(run(*vals))


def _custom_vjp_primitive(rule, args, flat, in_tree, transform):
    fixed = [args[i] for i in rule.nondiff_argnums]

    def fun(*vals):
        return rule.fun(*rule.fill_leaves(args, vals, in_tree))

    fun_g, out_tree, out_avals = _staged(fun, flat, transform)
    frozen = _frozen_rule(rule, args, flat, in_tree, transform, fun_g)
    if frozen is not None:  # the traced programs: closed-over arrays keep these values
        rule = frozen
    impl = _impl_of(fun, fun_g if frozen is not None else None)

    def vjp_all(g, ans, *vals):
        out, res = rule.fwd(*rule.fill_leaves(args, vals, in_tree))
        g = tree_unflatten(tree_flatten(out)[1], list(g))
        return tuple(rule_cotangents(rule, fixed, res, g, in_tree, list(vals)))

    def jvp_all(tangents, ans, *vals):
        raise forward_mode_error(rule.name)

    def batch(vals, dims):
        outs = tree_flatten(batch_custom_vjp(rule, args, vals, dims, in_tree))[0]
        return outs, (0,) * len(outs)

    return _primitive(f"custom_vjp[{rule.name}]", impl, out_avals, vjp_all, jvp_all,
                      batch), out_tree


def _custom_jvp_primitive(rule, args, flat, in_tree, transform):
    """One primitive for a custom_jvp call: it runs the function's traced program; forward
    mode calls the jvp rule, reverse mode transposes its tangent map, vmap batches both."""
    def fun(*vals):
        return rule.fun(*rule.fill_leaves(args, vals, in_tree))

    fun_g, out_tree, out_avals = _staged(fun, flat, transform)
    impl = _impl_of(fun, fun_g if not fun_g.captured else None)

    def jvp_all(tangents, ans, *vals):
        tans = [a.xp.zeros(a.shape, a.dtype) if t is None else t
                for t, a in zip(tangents, map(aval_of, vals))]
        return tuple(tree_flatten(rule.jvp_leaves(args, in_tree, vals, tans)[1])[0])

    def vjp_all(g, ans, *vals):
        return tuple(custom_jvp_cotangents(rule, args, in_tree, list(vals), g))

    def batch(vals, dims):
        outs = tree_flatten(batch_custom_jvp(rule, args, vals, dims, in_tree))[0]
        return outs, (0,) * len(outs)

    return _primitive(f"custom_jvp[{rule.name}]", impl, out_avals, vjp_all, jvp_all,
                      batch), out_tree


def _checkpoint_primitive(fun, flat, in_tree, dyn, name, transform):
    """The primitive of one checkpoint call, its output structure and its operands: the
    array leaves of the call (the others, flags and strings, stay fixed), then the outer
    values `fun` closes over (so that gradients reach them)."""
    def call(*vals):
        leaves = list(flat)
        for i, v in zip(dyn, vals):
            leaves[i] = v
        a, kw = tree_unflatten(in_tree, leaves)
        return fun(*a, **kw)

    operands = [flat[i] for i in dyn]
    graph = trace_to_graph(call, [aval_of(x) for x in operands],
                           tree_structure((tuple(operands), {})), transform)
    body = Graph(graph.invars + [v for v, _ in graph.captured], graph.eqns, graph.outvars,
                 None, None, name=name)
    run = compile_graph(body)

    def again(*vals):  # the body, primitive by primitive, for the traces that bind it
        return body.run_flat(list(vals))

    def vjp_all(g, ans, *vals):  # the forward pass again, then back through it
        return vjp(again, *vals)[1](list(g))

    def jvp_all(tangents, ans, *vals):
        t = [a.xp.zeros(a.shape, a.dtype) if t is None else t
             for t, a in zip(tangents, map(aval_of, vals))]
        return tuple(jvp(again, vals, t)[1])

    def batch(vals, dims):
        outs = batch_checkpoint(again, vals, dims, tree_structure((tuple(vals), {})), name)
        return list(outs), (0,) * len(outs)

    out_avals = tuple(v.aval if type(v) is Var else aval_of(v) for v in graph.outvars)
    prim = _primitive(name, lambda *vals: tuple(run(*vals)), out_avals, vjp_all, jvp_all,
                      batch)
    return prim, graph.out_tree, operands + [t for _, t in graph.captured]


def _primitive(name, impl, out_avals, vjp_all, jvp_all, batch):
    prim = Primitive(name, impl, multiple_results=True)
    prim.abstract_eval = lambda *avals: out_avals
    prim.vjp_all, prim.jvp_all, prim.batch = vjp_all, jvp_all, batch
    return prim


def _leaf_aval(x, name, i):
    try:
        return aval_of(x)
    except TypeError:
        raise TypeError(f"{name}: input leaf {i} has type {type(x).__name__}, which is not an "
                        "array, a Python scalar or a tracer; pass it through static_argnums "
                        "(a hashable Python value), or make it an array.") from None


def trace_to_graph(fun, flat_avals, in_tree, transform="jit", freeze=True):
    """Trace `fun(*tree_unflatten(in_tree, ...))` on abstract inputs into a Graph (`freeze`:
    arrays met become frozen copies, `StagingTrace.constant`)."""
    trace = StagingTrace(transform, freeze)
    tracers = [trace.new_arg(a) for a in flat_avals]
    try:
        args, kwargs = tree_unflatten(in_tree, tracers)
        out = fun(*args, **kwargs)
    finally:
        finish_trace(trace, transform)
    out_flat, out_tree = tree_flatten(out)
    outvars = []
    for k, o in enumerate(out_flat):
        if (isinstance(o, Tracer) or is_aval(o) or hasattr(o, "shape")
                or isinstance(o, (bool, int, float, complex))):
            outvars.append(trace.atom(o))
        else:
            raise TypeError(f"{transform}: output leaf {k} is a {type(o).__name__}, not an "
                            "array; a staged function returns arrays (pytrees of them).")
    return Graph(trace.invars, trace.eqns, outvars, in_tree, out_tree,
                 captured=trace.captured, name=getattr(fun, "__name__", "function"))


def make_graph(fun, static_argnums=()):
    """Return a function that traces `fun` at its arguments' shapes and dtypes into a Graph.

    The graph prints as a small program (one primitive application a line), draws itself
    (`to_dot`, `render`) and runs (`graph(*args)`).

    Example:
      g = fnad.make_graph(lambda x: fnp.sum(fnp.tanh(x) ** 2))(np.ones(3))
      print(g)
      print(fnad.make_graph(fnad.grad(f))(x))     # the backward pass, as a program
    """
    def make(*args, **kwargs):
        dyn, static, rebuild = split_static(args, static_argnums, "make_graph")
        flat, in_tree = tree_flatten((dyn, kwargs))
        avals = [_leaf_aval(x, "make_graph", i) for i, x in enumerate(flat)]
        graph = trace_to_graph(lambda *d, **kw: fun(*rebuild(d), **kw), avals, in_tree,
                               "make_graph")
        graph.name = getattr(fun, "__name__", "function")
        graph.example_inputs = flat
        return graph

    return make


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


def static_key(value):
    """The cache key of a static argument: its type and value, looked into through tuples
    (namedtuples too) and frozensets, so that values equal across types (1, 1.0 and True;
    (1,) and (1.0,)) get traces of their own, as in JAX."""
    t = type(value)
    if isinstance(value, tuple):
        return (t, tuple(static_key(v) for v in value))
    if t is frozenset:
        return (t, frozenset(static_key(v) for v in value))
    return (t, value)


def split_static(args, static_argnums, name):
    """(dynamic args, static args as cache keys (`static_key`), rebuild(dynamic) -> all
    args)."""
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
    key = tuple(static_key(s) for s in static)

    def rebuild(d):
        full, it_d, it_s = [], iter(d), iter(static)
        for i in range(len(args)):
            full.append(next(it_s) if i in nums else next(it_d))
        return tuple(full)

    return dyn, key, rebuild
