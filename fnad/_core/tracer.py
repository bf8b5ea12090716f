"""Layer 1: tracers, trace levels and primitives.

This module knows how a primitive call is recorded and nothing about
derivatives or NumPy. A `Primitive` holds the slots that transforms fill in
(backend implementation, VJP rules, JVP rules, batching rule, abstract
evaluation). Calling a primitive with no tracer among its positional
arguments runs the implementation straight away; otherwise the call goes to
the trace of the innermost (highest-level) tracer, which records it.
"""

import itertools
import weakref

__all__ = ["Primitive", "Tracer", "Trace", "primitive", "new_level", "getval", "levels",
           "require_callable", "top_trace", "register_callable", "PRIMITIVE_OF", "PRIMITIVES",
           "register_array_methods", "set_impl_error_hook", "UnexpectedTracerError",
           "finish_trace", "raise_if_escaped", "set_array_like_hook", "ConcretizationError",
           "set_impl_wrapper"]

_levels = itertools.count(1)


def new_level():
    """Return a fresh trace level, higher than every level handed out before."""
    return next(_levels)


class UnexpectedTracerError(Exception):
    """A traced value was used after the transform that made it had returned."""


class ConcretizationError(TypeError):
    """A traced value was used where Python needs a concrete number: a staged (jit) value
    has none, and a differentiated value's number would lose its derivative."""


class Trace:
    """A trace at one level; subclasses implement `process`."""

    __slots__ = ("level",)
    escaped_from = None  # set (by `finish_trace`) to the transform's name once it returns

    def __init__(self):
        self.level = new_level()

    def process(self, prim, args, kwargs):  # pragma: no cover - abstract
        """Handle one call of `prim` with tracers of this trace among `args`: every primitive,
        the non-differentiable ones (`prim.nondiff`) included, comes here."""
        raise NotImplementedError

    def process_custom_vjp(self, rule, args):  # pragma: no cover - abstract
        """Handle a call of a custom_vjp function (`rule`, a `CustomVJPRule`) whose
        differentiable arguments hold tracers of this trace; see `bind_custom_vjp`."""
        raise NotImplementedError(f"{type(self).__name__} has no custom_vjp rule")

    def process_custom_jvp(self, rule, args):  # pragma: no cover - abstract
        """Handle a call of a custom_jvp function (`rule`, a `CustomJVPRule`) whose
        differentiable arguments hold tracers of this trace; see `bind_custom_jvp`."""
        raise NotImplementedError(f"{type(self).__name__} has no custom_jvp rule")

    def process_checkpoint(self, fun, args, kwargs, name):  # pragma: no cover - abstract
        """Handle a call of a `fnad.checkpoint` function `fun` whose arguments hold tracers
        of this trace; see `bind_checkpoint`."""
        raise NotImplementedError(f"{type(self).__name__} has no checkpoint rule")


class _Finished:
    """Mixed into the class of a finished trace: any further use of its tracers raises."""

    __slots__ = ()

    def _escaped(self, where):
        return UnexpectedTracerError(
            f"{where}: a traced value created inside {self.escaped_from} was used after "
            f"{self.escaped_from} returned (it escaped, e.g. stored in a global, a list or a "
            "closure), where it has no meaning. Return it from the transformed function "
            "instead (has_aux=True for extra outputs), or store a plain value "
            "(fnad.stop_gradient(x)) rather than the tracer."
        )

    def process(self, prim, args, kwargs):
        raise self._escaped(f"primitive '{prim.name}'")

    def process_custom_vjp(self, rule, args):
        raise self._escaped(f"custom_vjp function {rule.name}")

    def process_custom_jvp(self, rule, args):
        raise self._escaped(f"custom_jvp function {rule.name}")

    def process_checkpoint(self, fun, args, kwargs, name):
        raise self._escaped(name)

    def record(self, prim, *args):
        raise self._escaped(prim.name)

    def new_input(self, value):
        raise self._escaped("new_input")


_FINISHED = {}  # (trace class, transform name) -> its finished class


def finish_trace(trace, transform):
    """Mark `trace` finished when `transform` returns: its tracers then raise
    `UnexpectedTracerError` when used in a primitive or converted to a Python value. The class
    swap costs nothing on the hot path (live traces are untouched)."""
    cls = type(trace)
    dead = _FINISHED.get((cls, transform))
    if dead is None:
        dead = _FINISHED[(cls, transform)] = type(
            f"Finished{cls.__name__}", (_Finished, cls),
            {"__slots__": (), "escaped_from": transform})
    trace.__class__ = dead


def raise_if_escaped(x, conversion):
    """Raise UnexpectedTracerError when tracer `x` escaped its (finished) transform and is
    being converted by `conversion` (e.g. "float()")."""
    t = getattr(x, "_trace", None)
    if t is not None and t.escaped_from is not None:
        raise t._escaped(f"{conversion} of a traced value")


def _live_value(x, conversion):
    raise_if_escaped(x, f"{conversion}()")
    return x.value


class Tracer:
    """A value being traced at some level.

    The array methods and operators (`x + y`, `x[i]`, `x.sum()`) come from the array layer,
    registered once with `register_array_methods` (fnad/__init__.py registers fnad.numpy's).

    Every tracer has an abstract value `aval` (a `fnad._core.abstract.ShapedArray`: shape, dtype,
    array module) that needs no concrete value; `shape`, `dtype`, `ndim` and `size` are read
    from it. Tracers that hold a concrete value (autodiff) may answer them from the value's
    own fields, which is the same thing and cheaper; a staging tracer has only `aval`.
    """

    __slots__ = ()
    __array_ufunc__ = None  # make NumPy defer binary operators to the tracer
    __array_priority__ = 1000

    @property
    def value(self):
        """The concrete value, at the next level down (may itself be a tracer)."""
        raise NotImplementedError

    @property
    def aval(self):
        """The abstract value (shape, dtype, array module) of this tracer."""
        raise NotImplementedError

    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return self.aval.size

    def __bool__(self):
        return bool(_live_value(self, "bool"))

    def __float__(self):
        return float(_live_value(self, "float"))

    def __int__(self):
        return int(_live_value(self, "int"))

    def __index__(self):
        return _live_value(self, "index").__index__()

    def __len__(self):
        return len(self.value)

    def __hash__(self):
        return id(self)

    def __array__(self, dtype=None, copy=None):
        """NumPy asks for the values: refused (they would lose their derivative), except for
        a cast to an integer or bool dtype (np.int64(x), np.asarray(x, dtype=int)), whose
        result has no derivative anyway: that one gets the values where they are known."""
        raise_if_escaped(self, "numpy.asarray() (or another NumPy conversion)")
        kind = getattr(dtype, "kind", None)
        if kind in ("b", "i", "u"):
            value = getval(self)
            if not isinstance(value, Tracer) and getattr(value, "shape", None) == self.shape:
                value = value.get() if hasattr(value, "get") else value  # CuPy: to the host
                return value.astype(dtype)
            raise TypeError(
                f"a traced value ({type(self).__name__} of shape {self.shape}) was cast to "
                f"{dtype} by plain NumPy (numpy.{dtype}(x) or numpy.asarray(x, dtype=...)), "
                "which needs its values: inside jit and vmap they are not known; use "
                f"x.astype(fnad.numpy.{dtype}) instead (no derivative, as any integer cast).")
        cast = f" (use x.astype({dtype}) to cast it)" if dtype is not None else ""
        raise TypeError(
            f"a traced value ({type(self).__name__} of shape {self.shape}) was passed to plain "
            "NumPy, which would drop its derivative; use fnad.numpy (import fnad.numpy as fnp) "
            f"inside functions you transform{cast}, or fnad.stop_gradient if that is what you "
            "meant."
        )


_ARRAY_METHODS = []  # the mixin classes registered, in order


def register_array_methods(mixin):
    """Give every tracer the methods, operators and properties defined by class `mixin`.

    The tracer layer knows no array library; the layer that provides one (fnad.numpy)
    defines a mixin class, and the package __init__ registers it here, once. Its attributes
    are copied onto `Tracer` (so onto every trace's tracer class) and override the base's.
    """
    if mixin in _ARRAY_METHODS:
        return
    for name, value in vars(mixin).items():
        if name not in ("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__",
                        "__slots__"):
            setattr(Tracer, name, value)
    _ARRAY_METHODS.append(mixin)


def levels(x):
    """`x` and each value below it, one trace level at a time, down to a plain value or a
    staged one (which has nothing more concrete below it)."""
    yield x
    while isinstance(x, Tracer):
        v = x.value
        if v is x:
            return
        x = v
        yield x


def getval(x):
    """Strip every level of tracing from `x`: the last of `levels(x)`."""
    while isinstance(x, Tracer):
        v = x.value
        if v is x:  # a staged value: nothing more concrete below
            return x
        x = v
    return x


def top_trace(values):
    """The innermost (highest-level) trace among `values` and the items of the tuples and
    lists among them (an index tuple may hold a traced array), or None."""
    top = None
    for a in values:
        for x in (a,) if type(a) not in (tuple, list) else a:
            if isinstance(x, Tracer):
                t = x._trace
                if top is None or t.level > top.level:
                    top = t
    return top


class Primitive:
    """One operation and the rules that transforms look up.

    Slots: `impl` (backend implementation), `vjps` (per-argument VJP rules
    `rule(g, ans, *args, **kwargs)`), `vjp_all` (one rule `vjp_all(g, ans, *args, **kwargs)`
    returning a tuple with every argument's cotangent, None for none; the backward pass
    prefers it to `vjps`), `jvps` (per-argument JVP rules
    `rule(t, ans, *args, **kwargs)`), `jvp_all` (one rule `jvp_all(tangents, ans, *args,
    **kwargs)`, `tangents` one per argument, None where untraced; forward mode prefers it),
    `batch` (batching rule), `abstract_eval` (`rule(*avals_or_consts, **kwargs) -> aval`,
    see fnad._core.abstract), `nondiff` (outputs carry no derivative), `multiple_results`,
    `effect` (it does something besides its results, e.g. prints: jit's passes keep each call,
    in order, used or not). Every primitive created is in `PRIMITIVES`.
    """

    __slots__ = ("name", "impl", "vjps", "vjp_all", "jvps", "jvp_all", "batch", "abstract_eval",
                 "nondiff", "multiple_results", "effect", "fun", "__weakref__")

    def __init__(self, name, impl, *, nondiff=False, multiple_results=False, effect=False):
        self.name = name
        self.impl = impl if impl_wrapper is None else impl_wrapper(self, impl)
        self.vjps = {}
        self.vjp_all = None
        self.jvps = {}
        self.jvp_all = None
        self.batch = None
        self.abstract_eval = None
        self.nondiff = nondiff
        self.multiple_results = multiple_results
        self.effect = effect
        self.fun = None
        PRIMITIVES.add(self)

    def __repr__(self):
        return f"<fnad primitive {self.name}>"

    def bind(self, *args, **kwargs):
        for a in args:
            if isinstance(a, Tracer) or (type(a) is tuple and _has_tracer(a)):
                return bind_traced(self, args, kwargs)
        try:
            return self.impl(*args, **kwargs)
        except Exception as e:
            diagnose(self, args, kwargs, e)
            raise

    def missing(self, rule, argnum):
        return NotImplementedError(
            f"primitive '{self.name}' has no {rule} rule for argument {argnum}; register one "
            f"with fnad.extend.def{rule}({self.name}, ...) or wrap the computation in "
            "fnad.stop_gradient if no derivative is needed."
        )


def _has_tracer(items):
    for x in items:
        if isinstance(x, Tracer):
            return True
    return False


def _holds_tracer(seq):
    """True when the (nested) list or tuple `seq` holds a tracer."""
    for x in seq:
        if isinstance(x, Tracer) or (type(x) in (list, tuple) and _holds_tracer(x)):
            return True
    return False


def bind_traced(prim, args, kwargs):
    """Send a primitive call with tracers among `args` (or in a tuple among them, as an
    index tuple holding a staged index array) to the innermost trace."""
    try:
        return top_trace(args).process(prim, args, kwargs)
    except Exception as e:
        diagnose(prim, args, kwargs, e)
        raise


# `hook(prim, args, kwargs, exc)` may raise a clearer error (e.g. arrays of two devices
# mixed) when an implementation fails; costs nothing otherwise. fnad/__init__.py installs
# fnad._core.backend's with `set_impl_error_hook`.
impl_error_hook = None


# `hook(seq)` turns a (nested) list holding tracers into one traced array, as NumPy turns an
# array_like list into an array; fnad/__init__.py installs fnad.numpy's asarray with
# `set_array_like_hook`. Without it such lists reach the implementation unchanged.
array_like_hook = None


def set_array_like_hook(hook):
    """Install `hook(seq) -> array` for list arguments of primitives that hold tracers (None
    removes it)."""
    global array_like_hook
    array_like_hook = hook


def _lists_as_arrays(args):
    return tuple(array_like_hook(a) if type(a) is list and _holds_tracer(a) else a
                 for a in args)


def set_impl_error_hook(hook):
    """Install `hook(prim, args, kwargs, exc)`, called when a primitive's implementation
    raises `exc`; it may raise a clearer error in its place (None removes it)."""
    global impl_error_hook
    impl_error_hook = hook


def diagnose(prim, args, kwargs, exc):
    """Give `impl_error_hook` a chance to replace `exc` with a clearer error."""
    if impl_error_hook is not None:
        impl_error_hook(prim, args, kwargs, exc)


PRIMITIVES = weakref.WeakSet()  # every Primitive created (e.g. to check names are unique)

# `wrapper(prim, impl) -> impl` replaces the implementation of every primitive, those made
# later included, while it is set (`set_impl_wrapper`): fnad's debug_nans checks each result.
impl_wrapper = None


def set_impl_wrapper(wrapper):
    """Wrap every primitive's implementation with `wrapper(prim, impl)` (None: unwrap; the
    wrapped function keeps the original as `.wrapped`). Costs nothing while unset."""
    global impl_wrapper
    for p in list(PRIMITIVES):
        p.impl = getattr(p.impl, "wrapped", p.impl)
        if wrapper is not None:
            p.impl = wrapper(p, p.impl)
    impl_wrapper = wrapper
PRIMITIVE_OF = {}  # public callables that cannot carry a `.primitive` attribute (ufuncs)


def register_callable(fun, prim):
    """Make `fun` (e.g. a NumPy ufunc whose tracer dispatch goes through a protocol) the
    public face of `prim`, so that `fnad.extend` finds the primitive from it."""
    PRIMITIVE_OF[fun] = prim
    prim.fun = fun


def primitive(impl, name=None, *, nondiff=False, multiple_results=False, effect=False):
    """Wrap a backend function as a primitive; returns the public function.

    The returned function calls `impl` directly when no positional argument is a tracer
    (`set_impl_wrapper` does not reach these calls), and carries the `Primitive` as its
    `.primitive` attribute.
    """
    prim = Primitive(name or impl.__name__, impl, nondiff=nondiff,
                     multiple_results=multiple_results, effect=effect)

    def fun(*args, **kwargs):
        for a in args:
            if isinstance(a, Tracer) or (type(a) is tuple and _has_tracer(a)):
                return bind_traced(prim, args, kwargs)
            if type(a) is list and array_like_hook is not None and _holds_tracer(a):
                return fun(*_lists_as_arrays(args), **kwargs)  # an array_like of tracers
        try:
            return impl(*args, **kwargs)
        except Exception as e:
            diagnose(prim, args, kwargs, e)
            raise

    fun.__name__ = prim.name
    fun.__qualname__ = prim.name
    fun.__doc__ = getattr(impl, "__doc__", None)
    fun.primitive = prim
    prim.fun = fun
    return fun


def require_callable(fun, transform):
    """Raise TypeError at once when a transform is given something it cannot call (as JAX
    does), rather than on the first call of the transformed function."""
    if not callable(fun):
        raise TypeError(f"{transform}: expected a function to transform, got "
                        f"{type(fun).__name__} {fun!r}; pass the function itself, e.g. "
                        f"fnad.{transform}(f)(x), not its result.")
