"""Module namespaces that forward to fnad's: autograd wraps the whole of NumPy (and parts of
SciPy), so an `fnad.autograd` module answers a name from fnad's module first and otherwise
from the NumPy/SciPy module itself, as autograd does for the functions it gives no gradient:
the arguments are stripped of tracing and the plain function runs (no derivative flows)."""

import functools
import importlib

from .._core.tracer import getval

__all__ = ["forwarding", "notrace"]


def notrace(fun):
    """`fun` called on the untraced values of its arguments (autograd's notrace_primitive)."""
    @functools.wraps(fun)
    def untraced(*args, **kwargs):
        return fun(*[getval(a) for a in args], **{k: getval(v) for k, v in kwargs.items()})

    return untraced


def _module(src):
    """A source module; a dotted name (SciPy's, an optional dependency; "module:attribute"
    for an object in it) is imported on first use, so that fnad.autograd.scipy loads without
    SciPy as long as fnad has the name."""
    if not isinstance(src, str):
        return src
    name, _, attr = src.partition(":")
    try:
        module = importlib.import_module(name)
    except ImportError as e:
        raise AttributeError(f"{src} is not installed ({e}); fnad.scipy has no such name "
                             "either. Install scipy for its non-differentiable functions.") from e
    return getattr(module, attr) if attr else module


def forwarding(modname, *sources, plain=()):
    """A module `__getattr__` looking a name up in `sources` (modules, or dotted names of
    optional modules imported when first needed) in turn; callables (not classes) found only
    in the last source are wrapped with `notrace`. Names in `plain` come from the last
    source (e.g. `rvs`: autograd draws from NumPy's global generator, fnad takes keys)."""
    cache = {}

    def __getattr__(name):
        if name in cache:
            return cache[name]
        if name.startswith("__"):
            raise AttributeError(f"module {modname!r} has no attribute {name!r}")
        for k, src in enumerate(sources):
            if k == len(sources) - 1:
                src = _module(src)
            if hasattr(src, name) and (name not in plain or k == len(sources) - 1):
                value = getattr(src, name)
                if k == len(sources) - 1 and len(sources) > 1 and callable(value) and \
                        not isinstance(value, type):
                    value = notrace(value)
                cache[name] = value
                return value
        raise AttributeError(f"module {modname!r} has no attribute {name!r} (it looks in "
                             f"{', '.join(getattr(s, '__name__', str(s)) for s in sources)})")

    return __getattr__
