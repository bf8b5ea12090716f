"""Staging: trace a function on abstract values (shape and dtype) into a `Graph`.

A `StagingTrace` has tracers that hold an abstract value and a `Var`, never a number. Each
primitive call on them is recorded as an `Eqn` (primitive, arguments with `Var`s in place
of tracers, keyword arguments, output `Var`s) after the primitive's `abstract_eval` gives
the outputs' shapes and dtypes. Arrays the function closes over become constants;
tracers of other (outer) transforms it closes over become extra inputs ("captured").
Python control flow on a staged value cannot be decided and raises `ConcretizationError`.
Each equation records the `named_scope`s open when it was staged (`Eqn.scope`), which the
pictures use to group and fold blocks.
"""

import functools
import threading

from .._core.abstract import abstract_eval, aval_of, is_aval
from .._graph.ir import Eqn, Graph, Var
from .._core.tracer import Trace, Tracer, finish_trace
from .._core.tree import tree_flatten, tree_unflatten

__all__ = ["StagingTrace", "StagingTracer", "ConcretizationError", "trace_to_graph",
           "make_graph", "named_scope", "current_scope"]

class _Scopes(threading.local):
    stack = ()  # the open scope names of this thread, outermost first


_scopes = _Scopes()


class _ScopeName(str):
    """A scope name; one object per entry, so two calls of one scope are told apart."""

    __slots__ = ()


def current_scope():
    """The names of the `named_scope`s open in this thread, outermost first."""
    return _scopes.stack


class named_scope:  # noqa: N801 - used like a function, as a context manager
    """Name the operations staged inside a `with` block, for reading and drawing graphs.

    Equations staged by `jit`/`make_graph` inside the block record the open scope names
    (`Eqn.scope`); `Graph.to_dot` draws each scope as a cluster, folds repeated scopes
    with the same structure, or draws one scope alone (`to_dot(scope="block_2")`). It
    changes nothing else and costs a few hundred nanoseconds when nothing is staged.

    As a decorator, `@fnad.named_scope("attention")` opens the scope on every call.

    Example:
      with fnad.named_scope(f"block_{i}"):
          x = block(params[i], x)
    """

    __slots__ = ("name", "_prev")

    def __init__(self, name):
        if not isinstance(name, str) or not name:
            raise TypeError(f"named_scope: the name must be a non-empty str, got {name!r}; "
                            "e.g. fnad.named_scope('block_0').")
        self.name = name

    def __enter__(self):
        self._prev = prev = _scopes.stack
        _scopes.stack = prev + (_ScopeName(self.name),)
        return self

    def __exit__(self, *exc):
        _scopes.stack = self._prev
        return False

    def __call__(self, fun):
        name = self.name

        @functools.wraps(fun)
        def scoped(*args, **kwargs):
            prev = _scopes.stack
            _scopes.stack = prev + (_ScopeName(name),)
            try:
                return fun(*args, **kwargs)
            finally:
                _scopes.stack = prev

        return scoped


class ConcretizationError(TypeError):
    """A staged (abstract) value was used where Python needs a concrete one."""


def _concretization_error(tracer, conversion):
    return ConcretizationError(
        f"{conversion}() of a staged value ({tracer.aval}) inside "
        f"{tracer._trace.transform}: while staging, values have a shape and a dtype but no "
        "numbers, so Python control flow (if/while/bool/int/float/indexing with them) cannot "
        "be decided. Two ways out: mark the argument it comes from static "
        "(fnad.jit(f, static_argnums=(i,))), so each value gets its own trace; or express the "
        "choice as data, e.g. fnp.where(c, a, b) or fnad.lax.cond / fnad.lax.while_loop / "
        "fnad.lax.fori_loop / fnad.lax.scan.")


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
        raise ConcretizationError(
            f"a staged value ({self.aval}) inside {self._trace.transform} was converted to a "
            "NumPy array (plain NumPy, np.asarray, or a function that reads its values): "
            "while staging it has a shape and a dtype but no numbers. Use fnad.numpy "
            "functions on it, mark the argument it comes from static "
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

    __slots__ = ("eqns", "invars", "captured", "transform", "_captured_ids")

    def __init__(self, transform="jit"):
        super().__init__()
        self.eqns = []
        self.invars = []
        self.captured = []  # (var, outer tracer) for tracers of other traces used inside
        self._captured_ids = {}
        self.transform = transform

    def new_arg(self, aval):
        var = Var(aval)
        self.invars.append(var)
        return StagingTracer(self, var)

    def atom(self, x):
        """`x` as it appears in an equation: a Var for a tracer, `x` itself otherwise."""
        if isinstance(x, Tracer):
            if type(x) is StagingTracer and x._trace is self:
                return x.var
            return self._capture(x)
        if type(x) in (list, tuple):
            for y in x:
                if isinstance(y, Tracer) or type(y) in (list, tuple):
                    return type(x)(self.atom(y) for y in x)
        return x

    def _capture(self, x):
        var = self._captured_ids.get(id(x))
        if var is None:
            var = self._captured_ids[id(x)] = Var(x.aval)
            self.captured.append((var, x))
        return var

    def process(self, prim, args, kwargs):
        out = abstract_eval(prim, *args, **kwargs)
        atoms = tuple(self.atom(a) for a in args)
        if prim.multiple_results:
            outvars = [Var(a) for a in out]
            self.eqns.append(Eqn(prim, atoms, kwargs, outvars, current_scope()))
            return tuple(StagingTracer(self, v) for v in outvars)
        var = Var(out)
        self.eqns.append(Eqn(prim, atoms, kwargs, [var], current_scope()))
        return StagingTracer(self, var)


def _leaf_aval(x, name, i):
    try:
        return aval_of(x)
    except TypeError:
        raise TypeError(f"{name}: input leaf {i} has type {type(x).__name__}, which is not an "
                        "array, a Python scalar or a tracer; pass it through static_argnums "
                        "(a hashable Python value), or make it an array.") from None


def trace_to_graph(fun, flat_avals, in_tree, transform="jit"):
    """Trace `fun(*tree_unflatten(in_tree, ...))` on abstract inputs into a Graph."""
    trace = StagingTrace(transform)
    tracers = [trace.new_arg(a) for a in flat_avals]
    try:
        args, kwargs = tree_unflatten(in_tree, tracers)
        out = fun(*args, **kwargs)
    finally:
        finish_trace(trace, transform)
    out_flat, out_tree = tree_flatten(out)
    outvars = []
    for k, o in enumerate(out_flat):
        if isinstance(o, Tracer) or is_aval(o) or hasattr(o, "shape") or \
                isinstance(o, (bool, int, float, complex)):
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
    from .jit import split_static  # noqa: PLC0415 - jit builds on this module

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
