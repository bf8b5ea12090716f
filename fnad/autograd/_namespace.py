"""Module namespaces that forward to fnad's: autograd wraps the whole of NumPy (and parts of
SciPy), so an `fnad.autograd` module answers a name from fnad's module first and otherwise
from the NumPy/SciPy module itself, as autograd does for the functions it gives no gradient:
the arguments are stripped of tracing and the plain function runs (no derivative flows)."""

import functools

from .._core.tracer import getval

__all__ = ["forwarding", "notrace"]


def notrace(fun):
    """`fun` called on the untraced values of its arguments (autograd's notrace_primitive)."""
    @functools.wraps(fun)
    def untraced(*args, **kwargs):
        return fun(*[getval(a) for a in args], **{k: getval(v) for k, v in kwargs.items()})

    return untraced


def forwarding(modname, *sources, plain=()):
    """A module `__getattr__` looking a name up in `sources` in turn; callables (not classes)
    found only in the last source are wrapped with `notrace`. Names in `plain` come from the
    last source (e.g. `rvs`: autograd draws from NumPy's global generator, fnad takes keys)."""
    cache = {}

    def __getattr__(name):
        if name in cache:
            return cache[name]
        if name.startswith("__"):
            raise AttributeError(f"module {modname!r} has no attribute {name!r}")
        for k, src in enumerate(sources):
            if hasattr(src, name) and (name not in plain or k == len(sources) - 1):
                value = getattr(src, name)
                if k == len(sources) - 1 and len(sources) > 1 and callable(value) and \
                        not isinstance(value, type):
                    value = notrace(value)
                cache[name] = value
                return value
        raise AttributeError(f"module {modname!r} has no attribute {name!r} (it looks in "
                             f"{', '.join(s.__name__ for s in sources)})")

    return __getattr__
