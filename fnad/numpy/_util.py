"""Helpers shared by the rule tables: wrapping NumPy functions as primitives, unbroadcast."""

import numpy as np

from .._abstract import ShapedArray, is_aval, ufunc_rule, xp_of
from .._tracer import PRIMITIVE_OF, Primitive, primitive, register_callable

__all__ = ["wrap", "wrap_nondiff", "unbroadcast", "shape", "ndim", "dtype_of", "norm_axes",
           "linalg_rule"]


def wrap(np_fun, name=None, **kw):
    """A primitive running `np_fun` (NumPy functions dispatch to CuPy for CuPy arrays).

    A single-output ufunc is returned as itself: on plain arrays it then costs exactly what
    NumPy costs, and tracers reach its primitive through `Tracer.__array_ufunc__`. An
    elementwise ufunc gets its abstract evaluation from NumPy's own type resolution.
    """
    if isinstance(np_fun, np.ufunc) and np_fun.nout == 1:
        if np_fun not in PRIMITIVE_OF:
            prim = Primitive(name or np_fun.__name__, np_fun, **kw)
            if np_fun.signature is None:
                prim.abstract_eval = ufunc_rule(np_fun)
            register_callable(np_fun, prim)
        return np_fun
    fun = primitive(np_fun, name or np_fun.__name__, **kw)
    if getattr(np_fun, "__doc__", None):
        fun.__doc__ = (f"fnad.numpy.{fun.__name__}: differentiable wrapper of "
                       f"numpy.{np_fun.__name__}.")
    return fun


def wrap_nondiff(np_fun, name=None):
    """A primitive whose outputs carry no derivative (comparisons, floor, argmax, ...)."""
    return wrap(np_fun, name, nondiff=True)


def shape(x):
    """The shape of an array, tracer or Python scalar."""
    s = getattr(x, "shape", ())
    return s if type(s) is tuple else tuple(s)


def ndim(x):
    return len(getattr(x, "shape", ()))


def dtype_of(x):
    """The dtype of an array, a tracer (from its abstract value) or a Python scalar."""
    d = getattr(x, "dtype", None)
    return d if d is not None else np.result_type(x)


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



def linalg_rule(fn, out_shapes):
    """The abstract evaluation of a linalg op on stacks of matrices: `out_shapes(*avals)`
    gives the result shape(s); the dtype(s) come from `fn` on small identity-like stand-ins
    (batch axes of size 1, square or wide or tall as the input is)."""
    def rule(*args, **kwargs):
        tiny = [_tiny_matrix(a) if is_aval(a) else a for a in args]
        with np.errstate(all="ignore"):
            out = fn(*tiny, **kwargs)
        shapes = out_shapes(*args, **kwargs)
        xp = xp_of(args)
        if isinstance(out, tuple):
            return tuple(ShapedArray(s, np.result_type(o), xp=xp) for s, o in zip(shapes, out))
        return ShapedArray(shapes, np.result_type(out), xp=xp)
    return rule


def _tiny_matrix(a):
    if a.ndim < 2:
        return np.ones((2,) * a.ndim, a.dtype)
    m, n = a.shape[-2:]
    core = (2, 2) if m == n else ((2, 3) if m < n else (3, 2))
    return np.broadcast_to(np.eye(*core, dtype=a.dtype), (1,) * (a.ndim - 2) + core)
