"""np.pad's value modes for traced arrays: linear_ramp, maximum, minimum, mean, median, empty.

Like NumPy, the axes are padded one after another, so the statistics and ramp ends of a
later axis see the padding already added along the earlier ones. The pad values are
compositions of slicing, reductions and broadcasting, whose rules give the derivatives.
"""

import numpy as np

from .. import numpy as fnp
from .._core.backend import array_module
from ._util import dtype_of, ndim, shape

_STATS = {"maximum": "max", "minimum": "min", "mean": "mean", "median": "median"}
VALUE_MODES = ("linear_ramp", "empty") + tuple(_STATS)
_KWARGS = {"linear_ramp": ("end_values",), "empty": ()}


def _per_axis(value, nd, name, dtype):
    try:
        return np.broadcast_to(np.asarray(value, dtype=dtype), (nd, 2))
    except ValueError:
        raise ValueError(f"fnad.numpy.pad: {name}={value!r} does not broadcast to one "
                         f"(before, after) pair per axis of a {nd}-d array.") from None


def _slab(x, ax, lo, hi):
    return x[(slice(None),) * ax + (slice(lo, hi),)]


def _widen(v, ax, width, x):
    s = list(shape(x))
    s[ax] = width
    return fnp.broadcast_to(v, tuple(s))


def _pad_values(x, ax, lo, hi, mode, opt):
    """The (before, after) blocks of padding along `ax` of `x`."""
    n = shape(x)[ax]
    if mode == "empty":
        return (fnp.zeros_like(x, shape=shape(x)[:ax] + (w,) + shape(x)[ax + 1:])
                for w in (lo, hi))
    if mode == "linear_ramp":
        end_lo, end_hi = opt
        edge_lo, edge_hi = _slab(x, ax, 0, 1), _slab(x, ax, n - 1, n)
        ramp = lambda w: array_module(x).arange(w, dtype=np.float64).reshape(
            (w,) + (1,) * (ndim(x) - ax - 1))  # on x's device
        before = end_lo + (edge_lo - end_lo) * (ramp(lo) / max(lo, 1))
        after = edge_hi + (end_hi - edge_hi) * ((ramp(hi) + 1) / max(hi, 1))
        return before.astype(dtype_of(x)), after.astype(dtype_of(x))
    if n == 0:
        raise ValueError(f"fnad.numpy.pad: can't compute the {mode} of an empty axis {ax}.")
    stat = getattr(fnp, _STATS[mode])
    len_lo, len_hi = (n, n) if opt is None else (min(int(opt[0]), n), min(int(opt[1]), n))
    if len_lo < 1 or len_hi < 1:
        raise ValueError(f"fnad.numpy.pad: stat_length must be positive for mode {mode!r}.")
    v_lo = stat(_slab(x, ax, 0, len_lo), axis=ax, keepdims=True)
    v_hi = stat(_slab(x, ax, n - len_hi, n), axis=ax, keepdims=True)
    return _widen(v_lo, ax, lo, x), _widen(v_hi, ax, hi, x)


def pad_values(array, pw, mode, kwargs):
    """`array` padded by `pw` ((before, after) per axis) in one of VALUE_MODES."""
    allowed = _KWARGS.get(mode, ("stat_length",))
    extra = sorted(set(kwargs) - set(allowed))
    if extra:
        raise TypeError(f"fnad.numpy.pad: unsupported keyword(s) {extra} for mode {mode!r} "
                        f"(it takes {list(allowed) or 'none'}).")
    nd = ndim(array)
    if mode == "linear_ramp":
        opts = _per_axis(kwargs.get("end_values", 0), nd, "end_values", np.float64)
    elif mode == "empty" or kwargs.get("stat_length") is None:
        opts = [None] * nd
    else:
        opts = _per_axis(kwargs["stat_length"], nd, "stat_length", np.int64)
    out = array
    for ax, (lo, hi) in enumerate(pw):
        if lo or hi:
            before, after = _pad_values(out, ax, lo, hi, mode, opts[ax])
            out = fnp.concatenate([before, out, after], axis=ax)
    return out
