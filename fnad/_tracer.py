"""Layer 1: tracers, trace levels and primitives.

This module knows how a primitive call is recorded and nothing about
derivatives or NumPy. A `Primitive` holds the slots that transforms fill in
(backend implementation, VJP rules, JVP rules, batching rule, abstract
evaluation). Calling a primitive with no tracer among its positional
arguments runs the implementation straight away; otherwise the call goes to
the trace of the innermost (highest-level) tracer, which records it.
"""

import itertools

__all__ = ["Primitive", "Tracer", "Trace", "primitive", "new_level", "getval", "register_callable",
           "PRIMITIVE_OF", "ALL_PRIMITIVES"]

_levels = itertools.count(1)


def new_level():
    """Return a fresh trace level, higher than every level handed out before."""
    return next(_levels)


class Trace:
    """A trace at one level; subclasses implement `process`."""

    __slots__ = ("level",)

    def __init__(self):
        self.level = new_level()

    def process(self, prim, args, kwargs):  # pragma: no cover - abstract
        raise NotImplementedError


class Tracer:
    """A value being traced at some level. `fnad.numpy` adds operator overloads.

    Every tracer has an abstract value `aval` (a `fnad._abstract.ShapedArray`: shape, dtype,
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
        return bool(self.value)

    def __float__(self):
        return float(self.value)

    def __int__(self):
        return int(self.value)

    def __index__(self):
        return self.value.__index__()

    def __len__(self):
        return len(self.value)

    def __hash__(self):
        return id(self)

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            f"a traced value ({type(self).__name__} of shape {self.shape}) was passed to plain "
            "NumPy, which would drop its derivative; use fnad.numpy (import fnad.numpy as fnp) "
            "inside functions you transform, or fnad.stop_gradient if that is what you meant."
        )


def getval(x):
    """Strip every level of tracing from `x`."""
    while isinstance(x, Tracer):
        x = x.value
    return x


ALL_PRIMITIVES = []  # every Primitive ever made, in creation order (for rule-coverage tests)


class Primitive:
    """One operation and the rules that transforms look up.

    Slots: `impl` (backend implementation), `vjps` (per-argument VJP rules
    `rule(g, ans, *args, **kwargs)`), `jvps` (per-argument JVP rules
    `rule(t, ans, *args, **kwargs)`), `batch` (batching rule), `abstract_eval`
    (`rule(*avals_or_consts, **kwargs) -> aval`, see fnad._abstract), `nondiff` (outputs
    carry no derivative), `multiple_results`.
    """

    __slots__ = ("name", "impl", "vjps", "jvps", "batch", "abstract_eval", "nondiff",
                 "multiple_results", "fun")

    def __init__(self, name, impl, *, nondiff=False, multiple_results=False):
        self.name = name
        self.impl = impl
        self.vjps = {}
        self.jvps = {}
        self.batch = None
        self.abstract_eval = None
        self.nondiff = nondiff
        self.multiple_results = multiple_results
        self.fun = None
        ALL_PRIMITIVES.append(self)

    def __repr__(self):
        return f"<fnad primitive {self.name}>"

    def bind(self, *args, **kwargs):
        for a in args:
            if isinstance(a, Tracer):
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


def bind_traced(prim, args, kwargs):
    """Send a primitive call with tracers among `args` to the innermost trace."""
    top = None
    for a in args:
        if isinstance(a, Tracer):
            t = a._trace
            if top is None or t.level > top.level:
                top = t
    try:
        if prim.nondiff:
            return prim.impl(*[getval(a) for a in args], **kwargs)
        return top.process(prim, args, kwargs)
    except Exception as e:
        diagnose(prim, args, kwargs, e)
        raise


# Set by fnad._backend: `hook(prim, args, kwargs, exc)` may raise a clearer error (e.g.
# arrays of two devices mixed) when an implementation fails; costs nothing otherwise.
impl_error_hook = None


def diagnose(prim, args, kwargs, exc):
    """Give `impl_error_hook` a chance to replace `exc` with a clearer error."""
    if impl_error_hook is not None:
        impl_error_hook(prim, args, kwargs, exc)


PRIMITIVE_OF = {}  # public callables that cannot carry a `.primitive` attribute (ufuncs)


def register_callable(fun, prim):
    """Make `fun` (e.g. a NumPy ufunc whose tracer dispatch goes through a protocol) the
    public face of `prim`, so that `fnad.extend` finds the primitive from it."""
    PRIMITIVE_OF[fun] = prim
    prim.fun = fun


def primitive(impl, name=None, *, nondiff=False, multiple_results=False):
    """Wrap a backend function as a primitive; returns the public function.

    The returned function calls `impl` directly when no positional argument is a
    tracer, and carries the `Primitive` as its `.primitive` attribute.
    """
    prim = Primitive(name or impl.__name__, impl, nondiff=nondiff,
                     multiple_results=multiple_results)

    def fun(*args, **kwargs):
        for a in args:
            if isinstance(a, Tracer):
                return bind_traced(prim, args, kwargs)
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
