"""Helpers shared by the rule tables: wrapping NumPy functions as primitives; the shape
helpers (unbroadcast, ...) come from the core, fnad._core.shapes, as fnad.extend exports them."""

import functools

import numpy as np

from .. import numpy as fnp
from .._core.abstract import ShapedArray, is_aval, ufunc_rule, xp_of
from .._core.backend import is_device_array
from .._core.shapes import dtype_of as dtype_of
from .._core.shapes import ndim as ndim
from .._core.shapes import norm_axes as norm_axes
from .._core.shapes import shape as shape
from .._core.shapes import unbroadcast as unbroadcast
from .._batching.families import elementwise_batch
from .._batching.vmap import unbatched_value
from .._jit.staging import ConcretizationError
from .._ad.transforms import stop_gradient
from .._core.rules import defbatch
from .._core.tracer import PRIMITIVE_OF, Primitive, Tracer, getval, primitive, register_callable

__all__ = ["wrap", "wrap_nondiff", "accepts_sequences", "as_input", "unbroadcast", "shape",
           "ndim", "dtype_of", "norm_axes", "expand_reduced", "linalg_rule", "is_staged",
           "values_hidden", "maybe_any", "const_of", "refuse_staged", "check_axis", "check_axes"]


def wrap(np_fun, name=None, **kw):
    """A primitive running `np_fun` (NumPy functions dispatch to CuPy for CuPy arrays).

    A single-output ufunc is returned as itself: on plain arrays it then costs exactly what
    NumPy costs, and tracers reach its primitive through `Tracer.__array_ufunc__`. An
    elementwise ufunc gets its abstract evaluation from NumPy's own type resolution and the
    elementwise batching rule.
    """
    if isinstance(np_fun, np.ufunc) and np_fun.nout == 1:
        if np_fun not in PRIMITIVE_OF:
            prim = Primitive(name or np_fun.__name__, np_fun, **kw)
            if np_fun.signature is None:
                prim.abstract_eval = ufunc_rule(np_fun)
                defbatch(prim, elementwise_batch(prim))
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


def as_input(a):
    """`a` unchanged, except a (nested) list/tuple, which becomes one array as NumPy would
    convert it; traced values in it are stacked, so they keep their derivatives
    (`fnp.mean([x, x + 2])`)."""
    if isinstance(a, (list, tuple)):
        return fnp.asarray(a)
    return a


def accepts_sequences(fun):
    """`fun` (a wrapped primitive taking an array first) also taking a list/tuple of traced
    values there; plain calls pay one type check."""
    def wrapper(a, *args, **kwargs):
        if type(a) is list or type(a) is tuple:
            a = as_input(a)
        return fun(a, *args, **kwargs)
    functools.update_wrapper(wrapper, fun)
    wrapper.primitive = fun.primitive
    return wrapper


def is_staged(x):
    """True when `x` has no numbers below its tracers: a staged value (inside jit)."""
    return isinstance(getval(x), Tracer)


def values_hidden(x):
    """True when fnad does not read the numbers of `x`: a staged value (inside jit there are
    none) or a device array (reading them back would cost a device synchronisation). Value
    checks and shortcuts chosen by values are skipped for such values, as under jit."""
    v = getval(x)
    return isinstance(v, Tracer) or is_device_array(v)


def maybe_any(mask):
    """`bool(mask.any())` for concrete NumPy values; True for a staged mask (jit knows no
    values) or one on a device (reading it back is a synchronisation), so that a caller
    which skips a masking step where nothing is masked takes the general branch, which
    gives the same values."""
    m = unbatched_value(mask)
    return True if isinstance(m, Tracer) or is_device_array(m) else bool(m.any())


def refuse_staged(x, name, why, way_out):
    """Raise ConcretizationError when `x` is staged (jit): `name` needs its values to
    `why`; `way_out` says what to do instead."""
    if is_staged(x):
        raise ConcretizationError(f"{name}: inside jit its input has a shape and a dtype but no "
                                  f"values, and it needs them to {why}; {way_out}.")


def const_of(x):
    """The values of `x` as a constant with no derivative: the array itself when concrete;
    a staged (jit) or batched (vmap) value through stop_gradient, so that a replay of the
    staged program under grad sees no derivative through it either."""
    v = unbatched_value(x)
    return stop_gradient(v) if isinstance(v, Tracer) else v


def check_axis(axis, nd):
    """One axis of an array of `nd` dimensions, made non-negative, with NumPy's errors: a
    TypeError for a non-integer, an AxisError for one out of range."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an integer")
    if not -nd <= axis < nd:
        raise np.exceptions.AxisError(int(axis), nd)
    return int(axis) % nd


def check_axes(axis, nd):
    """`axis` (None, an int or a sequence of them) as a sorted tuple of non-negative axes,
    with NumPy's errors (`check_axis`'s, and a ValueError for a repeated axis)."""
    if axis is None:
        return tuple(range(nd))
    axes = [check_axis(a, nd) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    return tuple(sorted(axes))


def expand_reduced(v, x_shape, axis, keepdims):
    """`v`, reduced over `axis` of an array of `x_shape`, with those axes put back as size 1
    (unchanged if it was reduced with keepdims)."""
    if keepdims:
        return v
    axes = norm_axes(axis, len(x_shape))
    return v.reshape(tuple(1 if i in axes else s for i, s in enumerate(x_shape)))


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
