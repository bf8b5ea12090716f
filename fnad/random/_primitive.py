"""Random functions as primitives without derivatives.

A function that draws from a key runs straight away on plain arrays. With a traced argument
(a staged key under jit, a batch of keys under vmap) the call goes to the innermost trace
as one primitive, every argument passed positionally (keywords and defaults filled in from
the signature): its abstract evaluation runs the function on zeros of the inputs' shapes,
and its batching rule draws once per key and stacks the draws, so the numbers are bit for
bit those of a loop over the keys.
"""

import functools
import inspect

import numpy as np

from .._batching.families import loop_batch
from .._core.abstract import as_avals, is_aval
from .._core.rules import defbatch
from .._core.tracer import Primitive, Tracer, bind_traced

__all__ = ["random_primitive"]


def _zeros_like_aval(a):
    if not is_aval(a):
        return a
    if a.weak_type and a.shape == ():
        return {"b": False, "i": 0, "u": 0}.get(a.dtype.kind, 0.0)
    return np.zeros(a.shape, a.dtype)


def random_primitive(fun):
    """`fun` (a random function of plain arrays) as the public function of a primitive."""
    sig = inspect.signature(fun)
    prim = Primitive(f"random_{fun.__name__.strip('_')}", fun, nondiff=True)
    prim.abstract_eval = lambda *args: as_avals(fun(*map(_zeros_like_aval, args)), np)
    defbatch(prim, loop_batch(prim))

    @functools.wraps(fun)
    def draw(*args, **kwargs):
        for a in args + tuple(kwargs.values()):
            if isinstance(a, Tracer):
                bound = sig.bind(*args, **kwargs)
                bound.apply_defaults()
                return bind_traced(prim, tuple(bound.arguments.values()), {})
        return fun(*args, **kwargs)

    draw.primitive = prim
    return draw
