"""Rearranging elements: flip, rot90, roll, tile, repeat, pad, diff.

All are compositions of basic slicing, gathers, broadcast_to, reshape and concatenate,
except constant-mode `pad`, a linear primitive whose transpose is a slice.
"""

import numpy as np

from .. import numpy as fnp
from .._core.abstract import AbstractEvalError
from .._core.backend import array_module
from .._core.devices import to_numpy
from .._core.tracer import getval
from .._batching.families import fallback, only_first, to_front
from .._core.rules import defabstract_eval, defbatch, defjvp, defvjp
from ._pad_modes import VALUE_MODES, pad_values
from ._util import as_input, check_axes, check_axis, dtype_of, is_staged, ndim, shape, wrap


def flip(m, axis=None):
    """Reverse the order of elements along `axis` (all axes when None)."""
    axes = check_axes(axis, ndim(m))
    idx = tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(ndim(m)))
    return fnp.getitem(m, idx)


def fliplr(m):
    """Reverse the order of columns (axis 1)."""
    if ndim(m) < 2:
        raise ValueError(f"fliplr: input must be >= 2-d, got shape {shape(m)}.")
    return flip(m, 1)


def flipud(m):
    """Reverse the order of rows (axis 0)."""
    if ndim(m) < 1:
        raise ValueError("flipud: input must be >= 1-d.")
    return flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees `k` times in the plane of `axes` (from the first towards the
    second)."""
    if len(axes) != 2:
        raise ValueError("rot90: len(axes) must be 2.")
    a0, a1 = (a % ndim(m) for a in axes)
    if a0 == a1:
        raise ValueError("rot90: axes must be different.")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(ndim(m)))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return fnp.transpose(flip(m, a1), perm)
    return flip(fnp.transpose(m, perm), a1)


def roll(a, shift, axis=None):
    """Shift elements along `axis` cyclically (of the flattened array when None)."""
    if axis is None:
        return fnp.reshape(roll(fnp.ravel(a), shift, 0), shape(a))
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("roll: 'shift' and 'axis' should be scalars or 1D sequences of the "
                         "same length.")
    total = {}
    for s, ax in zip(shifts, axes):
        ax = ax % ndim(a)
        total[ax] = total.get(ax, 0) + int(s)
    for ax, s in total.items():
        n = shape(a)[ax]
        s = s % n if n else 0
        if s:
            pre = (slice(None),) * ax
            a = fnp.concatenate([fnp.getitem(a, pre + (slice(n - s, None),)),
                                 fnp.getitem(a, pre + (slice(0, n - s),))], axis=ax)
    return a


def tile(A, reps):
    """Repeat `A` the number of times given by `reps` along each axis (broadcast + reshape,
    so the backward pass is a sum)."""
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (int(reps),)
    s = shape(A)
    d = max(len(s), len(reps))
    s = (1,) * (d - len(s)) + s
    reps = (1,) * (d - len(reps)) + reps
    a = fnp.reshape(A, tuple(x for n in s for x in (1, n)))
    a = fnp.broadcast_to(a, tuple(x for r, n in zip(reps, s) for x in (r, n)))
    return fnp.reshape(a, tuple(r * n for r, n in zip(reps, s)))


def repeat(a, repeats, axis=None):
    """Repeat each element `repeats` times along `axis` (of the flattened array when None).

    Scalar repeats are a broadcast (backward: a sum); per-element repeats are a gather
    (backward: a scatter-add).
    """
    if axis is None:
        a, axis = fnp.ravel(a), 0
    axis = axis % ndim(a)
    s = shape(a)
    if is_staged(repeats):
        raise AbstractEvalError("repeat: the shape of its result depends on the values of "
                                "`repeats`, which are not known while staging (jit); pass "
                                "repeats as a constant (a Python int, a list, or an array "
                                "closed over) or mark it static.")
    reps = np.asarray(to_numpy(getval(repeats)))  # counts on a device are read back
    if reps.ndim == 0 or reps.size == 1:
        r = int(reps.reshape(()))
        x = fnp.expand_dims(a, axis + 1)
        x = fnp.broadcast_to(x, s[:axis + 1] + (r,) + s[axis + 1:])
        return fnp.reshape(x, s[:axis] + (s[axis] * r,) + s[axis + 1:])
    if reps.shape != (s[axis],):
        raise ValueError(f"repeat: repeats of shape {reps.shape} don't match axis {axis} of "
                         f"length {s[axis]}; give one count per element or a scalar.")
    idx = array_module(a).asarray(np.repeat(np.arange(s[axis]), reps))  # to a's device
    return fnp.getitem(a, (slice(None),) * axis + (idx,))


def _pad_constant(x, pad_width, constant_values):
    return np.pad(x, pad_width, mode="constant", constant_values=constant_values)


_pad_constant_p = wrap(_pad_constant, "pad")


def _unpad_index(pad_width, s):
    return tuple(slice(lo, lo + n) for (lo, _), n in zip(pad_width, s))


def _batch_pad(args, dims, **kw):
    x, pw, cv = args
    if not only_first(dims):
        return fallback(_pad_constant_p, args, dims, kw)
    return _pad_constant_p(to_front(x, dims[0]), ((0, 0),) + tuple(pw), cv), 0


defvjp(_pad_constant_p, lambda g, ans, x, pw, cv: fnp.getitem(g, _unpad_index(pw, shape(x))))
defjvp(_pad_constant_p, lambda t, ans, x, pw, cv: _pad_constant_p(t, pw, 0))
defbatch(_pad_constant_p, _batch_pad)


def _pad_widths(pad_width, nd):
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (nd, 2))
    if np.any(pw < 0):
        raise ValueError(f"pad: pad_width {pad_width!r} holds negative values.")
    return tuple((int(lo), int(hi)) for lo, hi in pw)


_GATHER_MODES = ("edge", "reflect", "symmetric", "wrap")


def pad(array, pad_width, mode="constant", **kwargs):
    """Pad an array (NumPy semantics). Modes "constant" (differentiable in `array`; the
    constant carries no gradient), "edge", "reflect", "symmetric" and "wrap" (gathers,
    so repeated source elements accumulate their gradients), "linear_ramp", "maximum",
    "minimum", "mean", "median" (differentiable through the pad values) and "empty" (zeros
    in the padding). Callable modes are not supported."""
    pw = _pad_widths(pad_width, ndim(array))
    if mode == "constant":
        cv = kwargs.pop("constant_values", 0)
        if kwargs:
            raise TypeError(f"pad: unsupported keyword(s) {sorted(kwargs)} for mode 'constant'.")
        return _pad_constant_p(array, pw, cv)
    if mode in VALUE_MODES:
        return pad_values(array, pw, mode, kwargs)
    if mode not in _GATHER_MODES:
        raise NotImplementedError(f"fnad.numpy.pad: mode {mode!r} is not supported; use one of "
                                  f"'constant', {', '.join(map(repr, _GATHER_MODES))}, "
                                  f"{', '.join(map(repr, VALUE_MODES))}.")
    out = array
    for ax, (lo, hi) in enumerate(pw):
        if lo or hi:
            n = shape(out)[ax]
            xp = array_module(out)  # the index on the array's device
            idx = xp.pad(xp.arange(n), (lo, hi), mode=mode, **kwargs)
            out = fnp.getitem(out, (slice(None),) * ax + (idx,))
    return out


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """n-th discrete difference along `axis` (NumPy's: n=0 gives `a` itself, prepend and
    append ignored; booleans differ by `!=`).

    Example:
      fnp.diff(x, axis=0, prepend=0.0)
    """
    a = as_input(a)
    if n == 0:
        return a
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n!r}.")
    if ndim(a) == 0:
        raise ValueError("diff requires input that is at least one dimensional; got a 0-d "
                         "array.")
    axis = check_axis(axis, ndim(a))
    if prepend is not None or append is not None:
        parts = [_edge(e, a, axis) for e in (prepend,) if e is not None] + [a]
        parts += [_edge(e, a, axis) for e in (append,) if e is not None]
        a = fnp.concatenate(parts, axis=axis)
    pre = (slice(None),) * axis
    op = fnp.not_equal if dtype_of(a).kind == "b" else fnp.subtract
    for _ in range(n):
        a = op(fnp.getitem(a, pre + (slice(1, None),)), fnp.getitem(a, pre + (slice(None, -1),)))
    return a


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integrate along `axis` with the trapezoidal rule."""
    axis = axis % ndim(y)
    pre = (slice(None),) * axis
    hi = fnp.getitem(y, pre + (slice(1, None),))
    lo = fnp.getitem(y, pre + (slice(None, -1),))
    if x is None:
        return fnp.sum((hi + lo) * (dx / 2.0), axis=axis)
    d = diff(x, axis=axis if ndim(x) > 1 else -1)
    if ndim(x) == 1 and ndim(y) > 1:
        d = fnp.reshape(d, tuple(-1 if i == axis else 1 for i in range(ndim(y))))
    return fnp.sum(d * (hi + lo) / 2.0, axis=axis)


def _edge(e, a, axis):
    """A prepend/append value for `diff`: scalars are broadcast to one slice of `a`."""
    if ndim(e):
        return e
    s = list(shape(a))
    s[axis] = 1
    if not hasattr(e, "dtype"):  # a Python scalar: made on a's device
        return fnp.full_like(a, e, shape=tuple(s))
    return fnp.broadcast_to(fnp.asarray(e, dtype=dtype_of(a)), tuple(s))

# ----------------------------------------------------------------------------- abstract evaluation


def _pad_aval(x, pad_width, constant_values):
    tiny = _pad_constant(np.zeros((1,) * x.ndim, x.dtype), pad_width, constant_values)
    return x.update(shape=tuple(n - 1 + s for n, s in zip(tiny.shape, x.shape)), weak_type=False)


defabstract_eval(_pad_constant_p, _pad_aval)
