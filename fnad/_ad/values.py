"""What both autodiff modes share: tracers that hold a value, zeros and sums of cotangents
and tangents, and the way a non-differentiable primitive passes through."""

import numpy as np

from .._core.abstract import aval_of
from .._core.backend import array_module
from .._core.tracer import ConcretizationError, Tracer, bind_traced, getval, raise_if_escaped

__all__ = ["ValueTracer", "zeros_like_value", "add_cotangents", "pass_through", "shape_dtype",
           "fit_cotangent"]


class ValueTracer(Tracer):
    """An autodiff tracer, which holds a value (`_value`): its abstract value comes from the
    value's shape and dtype, and the four fields are read from the value directly (the same
    answer, without building a ShapedArray per access)."""

    __slots__ = ()
    transforms = "differentiation"  # the kind of transform, for messages
    aval = property(lambda s: aval_of(s._value))
    shape = property(lambda s: s._value.shape)
    dtype = property(lambda s: s._value.dtype)
    ndim = property(lambda s: s._value.ndim)
    size = property(lambda s: s._value.size)

    # float() and complex() of a value that carries a derivative would cut it off silently
    # (`return float(loss)` gave a zero gradient): refused, as np.asarray(x) is. bool(),
    # int() and indexing stay (Python control flow; an integer has no derivative anyway).
    def __float__(self):
        return float(_number(self, "float"))

    def __complex__(self):
        return complex(_number(self, "complex"))


def _number(x, conversion):
    """The value of autodiff tracer `x` for `conversion`() when its dtype carries no
    derivative; else a ConcretizationError saying what to do."""
    raise_if_escaped(x, f"{conversion}()")
    if x.dtype.kind not in "fc":
        return x.value
    raise ConcretizationError(
        f"{conversion}() of a {x.dtype} value of shape {tuple(x.shape)} traced by a "
        f"{x.transforms} transform: a Python number carries no derivative, so the result would be "
        f"cut off from the gradient silently (e.g. `return {conversion}(loss)` gives zero). "
        "Keep the array (return it as it is; for control flow compare it directly, "
        "`if x > 0:` works), or, to read the number without its derivative (logging), "
        f"call {conversion}(fnad.stop_gradient(x)).")


def zeros_like_value(x):
    """A plain zero array shaped like `x` (which may be traced)."""
    v = getval(x)
    xp = array_module(v)
    if isinstance(x, Tracer):  # its own shape: a batched value's has no batch axis
        return xp.zeros(x.shape, dtype=x.dtype)
    return xp.zeros(getattr(v, "shape", ()), dtype=getattr(v, "dtype", xp.float64))


def add_cotangents(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def pass_through(trace, prim, args, kwargs):
    """A non-differentiable primitive under an autodiff trace: computed on the values inside
    this trace's tracers, its outputs plain (or traced only by outer traces, which see it in
    turn, so that a staging trace can record it)."""
    vals = [a._value if isinstance(a, Tracer) and a._trace is trace else a for a in args]
    for v in vals:
        if isinstance(v, Tracer):
            return bind_traced(prim, vals, kwargs)
    return prim.impl(*vals, **kwargs)


def shape_dtype(x):
    """(shape, dtype) of an array, a tracer (its own shape: a batched value's has no batch
    axis) or a Python scalar."""
    if isinstance(x, Tracer):
        return tuple(x.shape), x.dtype
    v = getval(x)
    if not hasattr(v, "dtype"):  # a Python scalar
        v = np.asarray(v)
    return tuple(v.shape), v.dtype


def fit_cotangent(g, x):
    """Cotangent `g` of input `x` with `x`'s shape and dtype (a rule may return one that only
    broadcasts to it, or has a wider dtype)."""
    (g_shape, g_dtype), (x_shape, x_dtype) = shape_dtype(g), shape_dtype(x)
    if g_shape != x_shape:
        g = g + zeros_like_value(x)
        if shape_dtype(g)[0] != x_shape:
            raise ValueError(f"internal: cotangent of shape {shape_dtype(g)[0]} for an input "
                             f"of shape {x_shape}")
        g_dtype = shape_dtype(g)[1]
    if g_dtype != x_dtype:
        g = g.astype(x_dtype)
    return g
