"""autograd.misc.tracers' `const_graph` on fnad."""

import functools

__all__ = ["const_graph"]


def const_graph(fun, *args, **kwargs):
    """`fun` with `args`/`kwargs` bound. autograd replays a cached graph of primitive calls to
    save Python overhead; fnad's way to that speed is `fnad.jit`, so this returns the function
    itself, which gives the same values."""
    return functools.wraps(fun)(functools.partial(fun, *args, **kwargs))
