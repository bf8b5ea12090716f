"""autograd.builtins on fnad. fnad traces arrays, and tuples, lists and dicts are pytrees
whose leaves are traced, so autograd's container boxes are the plain containers here:
`tuple`, `list` and `dict` are Python's; `isinstance` and `type` look through tracing (as
autograd's do: `isinstance(x, np.ndarray)` is true of a traced array)."""

import builtins as _builtins

from .._core.tracer import getval

__all__ = ["tuple", "list", "dict", "isinstance", "type", "SequenceBox", "DictBox"]

tuple = _builtins.tuple
list = _builtins.list
dict = _builtins.dict


def isinstance(obj, classinfo):
    """`builtins.isinstance` of the untraced value."""
    return _builtins.isinstance(getval(obj), classinfo)


def type(obj):
    """`builtins.type` of the untraced value."""
    return _builtins.type(getval(obj))


class _ContainerType(_builtins.type):
    def __instancecheck__(cls, x):
        return _builtins.isinstance(x, cls.kinds)


class SequenceBox(metaclass=_ContainerType):
    """A tuple or list that holds traced values: in fnad, the tuple or list itself."""

    kinds = (_builtins.tuple, _builtins.list)


class DictBox(metaclass=_ContainerType):
    """A dict that holds traced values: in fnad, the dict itself."""

    kinds = (_builtins.dict,)
