"""autograd.tracer's public names on fnad: `primitive`, `notrace_primitive`, `Box`, `isbox`,
`getval`. fnad's tracers (fnad.extend.Tracer) are autograd's boxes: `isinstance(x, Box)` and
`isbox(x)` are true of them. autograd's tracing internals (`trace`, `Node`, `new_box`,
`TraceStack`) have no counterpart: fnad's transforms own their traces, and importing those
names raises an ImportError saying what to use instead."""

from .._core.tracer import Tracer
from .._core.tracer import getval as getval
from .._core.tracer import primitive as _primitive
from ._namespace import notrace

__all__ = ["Box", "isbox", "getval", "primitive", "notrace_primitive", "register_notrace"]


def primitive(f_raw):
    """Wrap `f_raw` as a primitive (autograd's `primitive`): called with no traced positional
    argument it runs `f_raw` as is; register its rules with `fnad.autograd.extend.defvjp`."""
    return _primitive(f_raw, getattr(f_raw, "__name__", None) or "primitive")


def notrace_primitive(f_raw):
    """`f_raw` called on untraced values: its output carries no derivative."""
    return notrace(f_raw)


def register_notrace(trace_type, primitive_fun):
    """autograd registers per-trace exceptions; fnad's `notrace_primitive` untraces every
    argument already, so there is nothing to register."""


def isbox(x):
    """Whether `x` is traced by a transform (autograd's Box; fnad's Tracer)."""
    return isinstance(x, Tracer)


class _BoxType(type):
    def __instancecheck__(cls, x):
        return isinstance(x, Tracer)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, Tracer) or type.__subclasscheck__(cls, sub)


class Box(metaclass=_BoxType):
    """autograd's Box: fnad's tracers are instances (`isinstance(x, Box)`). `Box.register`
    is accepted and changes nothing (fnad traces arrays and pytrees of them). A Box subclass
    for a value type of your own (as autograd's rkhs example builds) cannot be honoured: its
    `register` and its construction raise, saying to register the type as a pytree with
    `fnad.register_pytree_node`."""

    types = set()
    type_mappings = {}

    def __init__(self, *args, **kwargs):
        raise TypeError(_own_box_message(type(self).__name__))

    @classmethod
    def register(cls, value_type):
        if cls is not Box:  # a Box subclass for a value type of the user's own
            raise TypeError(_own_box_message(f"{cls.__name__} (for {value_type.__name__})"))
        cls.types.add(cls)
        cls.type_mappings[value_type] = cls


def _own_box_message(what):
    return (f"fnad.autograd: the Box subclass {what} is autograd's way of tracing a value "
            "type of your own; fnad's tracers wrap arrays only. Register the type as a pytree "
            "(fnad.register_pytree_node) so that transforms see its array leaves.")


_INTERNALS = {"trace": "fnad.vjp / fnad.jvp (each transform runs its own trace)",
              "Node": "fnad.make_graph (the traced program) or fnad.vjp",
              "new_box": "fnad.vjp / fnad.jvp", "TraceStack": "fnad's transforms",
              "find_top_boxed_args": "fnad.extend.Tracer"}


def __getattr__(name):
    if name in _INTERNALS:
        raise ImportError(f"fnad.autograd.tracer.{name}: autograd's tracing internals have no "
                          f"counterpart in fnad; use {_INTERNALS[name]}.")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
