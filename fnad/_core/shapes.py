"""Shape and dtype helpers for rules, on plain arrays, tracers and Python scalars alike.

They use only attributes and array methods (`.shape`, `.sum`, `.reshape`), which tracers
have, so they belong to no array library; `fnad.extend` exports them to the layers above.
"""

import numpy as np

from .tracer import getval

__all__ = ["unbroadcast", "shape", "ndim", "dtype_of", "norm_axes"]


def shape(x):
    """The shape of an array, tracer or Python scalar."""
    s = getattr(x, "shape", ())
    return s if type(s) is tuple else tuple(s)


def ndim(x):
    return len(getattr(x, "shape", ()))


def dtype_of(x):
    v = getval(x)
    return v.dtype if hasattr(v, "dtype") else np.result_type(v)


def norm_axes(axis, nd):
    """`axis` (None, int or tuple; negatives allowed) as a sorted tuple of non-negative ints."""
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(a % nd if nd else a for a in axis))
    return (axis % nd if nd else axis,)


def unbroadcast(g, to_shape):
    """Sum `g` over the axes along which a value of `to_shape` was broadcast.

    Handles added leading axes and interior size-1 axes in one place, e.g. a (B, 1, C)
    operand of a (B, T, C) result gets `sum(g, axis=1, keepdims=True)`.
    """
    g_shape = shape(g)
    if g_shape == to_shape:  # the common case, first and cheap
        return g
    to_shape = tuple(to_shape)  # a list given by a caller
    if g_shape == to_shape:
        return g
    lead = len(g_shape) - len(to_shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(to_shape) if s == 1 and g_shape[lead + i] != 1)
    # The array methods (which tracers have too) cost half of fnp.sum/fnp.reshape's wrappers.
    # With no leading axes, keepdims gives `to_shape` at once.
    if axes:
        g = g.sum(axis=axes, keepdims=lead == 0)
    if shape(g) != to_shape:
        g = g.reshape(to_shape)
    return g

