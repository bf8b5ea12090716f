"""Shape manipulation primitives and their rules."""

import numpy as np

from .. import numpy as fnp
from .._core.abstract import ShapedArray, standin_rule, xp_of
from .._batching.families import (all_to_front, fallback, keep_batch, logical_ndim, only_first,
                                  to_front)
from .._core.rules import (as_primitive, defabstract_eval, defbatch, defjvp_linear, defvjp,
                           defvjp_all)
from ._util import dtype_of, ndim, shape, unbroadcast, wrap, wrap_nondiff


def _reshape(a, newshape, order="C"):
    return np.reshape(a, newshape, order=order)


_reshape_p = wrap(_reshape, "reshape")
_transpose_p = wrap(np.transpose, "transpose")
broadcast_to = wrap(np.broadcast_to, "broadcast_to")
_concatenate_p = wrap(lambda *arrays, axis=0: np.concatenate(arrays, axis=axis), "concatenate")


def _astype(x, dtype):
    # a Python scalar argument of jit reaches the compiled program as it is (weakly typed)
    return x.astype(dtype) if hasattr(x, "astype") else np.asarray(x, dtype)


_astype_p = wrap(_astype, "astype")
# A cast to an integer or bool dtype is piecewise constant: its output carries no derivative.
_astype_exact_p = wrap_nondiff(_astype, "astype_exact")


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """Give `a` a new shape (NumPy 2 semantics; -1 infers one axis)."""
    shape = newshape if shape is None else shape
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    return _reshape_p(a, tuple(shape), order)


def transpose(a, axes=None):
    """Permute the axes of `a` (reverse them when axes is None)."""
    return _transpose_p(a, None if axes is None else tuple(axes))


def astype(x, dtype, copy=True):
    """`x` cast to `dtype`; the gradient is cast back to `x`'s dtype. A cast to an integer or
    bool dtype has no derivative (zero tangent and gradient, as JAX). As NumPy's, a cast to
    `x`'s own dtype copies an array unless `copy=False` (so a jitted function hands out a
    fresh array where the eager one does; jit drops the copy where nothing needs it)."""
    dtype = np.dtype(dtype)
    if dtype_of(x) == dtype:
        return fnp.copy(x) if copy and hasattr(x, "shape") and not isinstance(
            x, np.generic) else x
    if dtype.kind not in "fc":
        return _astype_exact_p(x, dtype)
    return _astype_p(x, dtype)


def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """Join arrays along an existing axis."""
    if out is not None:
        raise TypeError("fnad.numpy.concatenate: out= is not supported (arrays are immutable "
                        "under transforms); use the returned array.")
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    res = _concatenate_p(*arrays, axis=axis)
    return res if dtype is None else astype(res, dtype)


def ravel(a, order="C"):
    return reshape(a, (-1,), order)


def swapaxes(a, axis1, axis2):
    perm = list(range(ndim(a)))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return transpose(a, perm)


def expand_dims(a, axis):
    s = list(shape(a))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = len(s) + len(axes)
    for ax in sorted(x % nd for x in axes):
        s.insert(ax, 1)
    return reshape(a, tuple(s))


def squeeze(a, axis=None):
    s = shape(a)
    if axis is None:
        axes = {i for i, d in enumerate(s) if d == 1}
    else:
        axes = {x % len(s) for x in (axis if isinstance(axis, (tuple, list)) else (axis,))}
        bad = [x for x in axes if s[x] != 1]
        if bad:
            raise ValueError(f"squeeze: cannot select an axis to squeeze out which has size not "
                             f"equal to one (axis {bad[0]} of shape {s}).")
    return reshape(a, tuple(d for i, d in enumerate(s) if i not in axes))


def stack(arrays, axis=0, out=None, dtype=None):
    """Join arrays along a new axis."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("stack: need at least one array to stack.")
    nd = ndim(arrays[0]) + 1
    return concatenate([expand_dims(a, axis % nd) for a in arrays], axis=axis % nd,
                       out=out, dtype=dtype)


# ----------------------------------------------------------------------------- rules
# The batching rules put the batch axis first and rewrite the static arguments to match.

def _batch_reshape(args, dims, **kw):
    a, newshape = args[0], args[1]
    order = args[2] if len(args) > 2 else kw.get("order", "C")
    if not only_first(dims) or order != "C":
        return fallback(_reshape_p, args, dims, kw)
    a = to_front(a, dims[0])
    return fnp.reshape(a, (shape(a)[0],) + tuple(newshape)), 0


def _batch_transpose(args, dims, **kw):
    a, d = args[0], dims[0]
    axes = args[1] if len(args) > 1 else kw.get("axes")
    nd = logical_ndim(a, d)
    axes = tuple(range(nd))[::-1] if axes is None else tuple(int(x) % nd for x in axes)
    phys = [i for i in range(nd + 1) if i != d]  # logical axis -> physical axis
    return fnp.transpose(a, (d,) + tuple(phys[x] for x in axes)), 0


def _batch_broadcast_to(args, dims, **kw):
    a, target = to_front(args[0], dims[0]), tuple(args[1])
    s = shape(a)
    a = fnp.reshape(a, s[:1] + (1,) * (len(target) - len(s) + 1) + s[1:])
    return fnp.broadcast_to(a, s[:1] + target), 0


def _batch_concatenate(args, dims, axis=0):
    arrays = all_to_front(args, dims)
    if axis is None:
        arrays = [fnp.reshape(a, (shape(a)[0], -1)) for a in arrays]
        return fnp.concatenate(arrays, axis=1), 0
    nd = logical_ndim(args[0], dims[0])
    return _concatenate_p(*arrays, axis=int(axis) % nd + 1), 0


def _real_if_real(g, x):
    """A real input's cotangent is the real part of a complex one (docs/api.md)."""
    return fnp.real(g) if dtype_of(g).kind == "c" and dtype_of(x).kind != "c" else g


defvjp(_reshape_p, lambda g, ans, a, newshape, order="C": fnp.reshape(g, shape(a), order))
defjvp_linear(_reshape_p)
defbatch(_reshape_p, _batch_reshape)
defvjp(_transpose_p, lambda g, ans, a, axes=None: fnp.transpose(
    g, None if axes is None else tuple(np.argsort([x % len(axes) for x in axes]))))
defjvp_linear(_transpose_p)
defbatch(_transpose_p, _batch_transpose)
defvjp(broadcast_to, lambda g, ans, a, shape_, **k: unbroadcast(g, shape(a)))
defjvp_linear(broadcast_to)
defbatch(broadcast_to, _batch_broadcast_to)
defvjp(_astype_p, lambda g, ans, x, dtype: fnp.astype(_real_if_real(g, x), dtype_of(x),
                                                        copy=False))
defjvp_linear(_astype_p)
for _f in (_astype_p, _astype_exact_p):
    defbatch(_f, keep_batch(_f))


def _vjp_concatenate(g, ans, *arrays, axis=0):
    """Every argument's cotangent in one call: consecutive slices of g."""
    nd = ndim(ans)
    idx = [slice(None)] * nd
    cts, start = [], 0
    for a in arrays:
        n = shape(a)[axis % nd]
        idx[axis % nd] = slice(start, start + n)
        cts.append(g[tuple(idx)])
        start += n
    return tuple(cts)


class _ConcatJVPs(dict):
    def get(self, k, default=None):
        def jvp(t, ans, *arrays, axis=0):
            parts = [t if i == k else fnp.zeros_like(t, shape=shape(a))  # on t's device
                     for i, a in enumerate(arrays)]
            return fnp.concatenate(parts, axis=axis)
        return jvp


defvjp_all(_concatenate_p, _vjp_concatenate)
_concatenate_p.primitive.jvps = _ConcatJVPs()  # any number of arguments
defbatch(_concatenate_p, _batch_concatenate)


def rollaxis(a, axis, start=0):
    """Roll `axis` backwards until it lies before position `start`, as `numpy.rollaxis`
    (prefer moveaxis); a transpose, so linear.

    Example:
      fnp.rollaxis(np.ones((2, 3, 4)), 2).shape   # (4, 2, 3)
    """
    n = ndim(a)
    if not -n <= axis < n:
        raise np.exceptions.AxisError(axis, n)
    axis = axis % n
    start = start + n if start < 0 else start
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(
            f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    axes = [i for i in range(n) if i != axis]
    axes.insert(start, axis)
    return transpose(a, axes)


def moveaxis(a, source, destination):
    """Move axes of `a` to new positions; the other axes keep their order."""
    nd = ndim(a)
    src = [s % nd for s in (source if isinstance(source, (tuple, list)) else (source,))]
    dst = [d % nd for d in (destination if isinstance(destination, (tuple, list))
                            else (destination,))]
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source!r} and destination {destination!r} must "
                         "have the same number of elements.")
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def permute_dims(a, axes=None):
    """NumPy 2's array-API name for `transpose`."""
    return transpose(a, axes)


def matrix_transpose(x):
    """Swap the last two axes (NumPy 2)."""
    if ndim(x) < 2:
        raise ValueError(f"matrix_transpose: input must be at least 2-D, got shape {shape(x)}.")
    return swapaxes(x, -1, -2)


def concat(arrays, /, *, axis=0):
    """NumPy 2's array-API name for `concatenate`."""
    return concatenate(arrays, axis=axis)


broadcast_shapes = np.broadcast_shapes


def broadcast_arrays(*args, subok=False):
    """The arguments broadcast against each other (a tuple, as NumPy 2 returns)."""
    s = np.broadcast_shapes(*[shape(a) for a in args])
    return tuple(a if shape(a) == s else broadcast_to(a, s) for a in args)

# ----------------------------------------------------------------------------- abstract evaluation


def _concatenate_aval(*arrays, axis=0):
    # The dtype (and the axis check) from size-1 stand-ins; the shape adds up along `axis`.
    tiny = [np.zeros((1,) * a.ndim, a.dtype) for a in arrays]
    dtype = np.concatenate(tiny, axis=axis).dtype
    ax = axis % arrays[0].ndim
    rest = {a.shape[:ax] + a.shape[ax + 1:] for a in arrays}
    if len(rest) > 1:
        raise ValueError(f"concatenate: the shapes {[a.shape for a in arrays]} differ outside "
                         f"axis {axis}; make them match there.")
    out = list(arrays[0].shape)
    out[ax] = sum(a.shape[ax] for a in arrays)
    return ShapedArray(out, dtype, xp=xp_of(arrays))


for _f in (_reshape_p, _transpose_p, broadcast_to):  # views: stand-ins cost nothing
    defabstract_eval(_f, standin_rule(as_primitive(_f).impl))
defabstract_eval(_concatenate_p, _concatenate_aval)
for _f in (_astype_p, _astype_exact_p):
    defabstract_eval(_f, lambda x, dtype: x.update(dtype=dtype, weak_type=False))
del _f
