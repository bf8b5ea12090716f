"""Statistics built from differentiable pieces: var, std, average, ptp, nan-reductions.

These are compositions of primitives, so their derivatives (of any order) come from the
rules of sum, mean, multiply, sqrt and where. var/std of complex inputs are real, as NumPy's.
"""

import numpy as np

from .. import numpy as fnp
from .._core.tracer import Tracer, getval
from ._util import (as_input, check_axes, const_of, dtype_of, maybe_any, ndim, norm_axes, shape,
                    values_hidden)


def _no_out(fname, out):
    if out is not None:
        raise TypeError(f"fnad.numpy.{fname}: out= is not supported; use the returned array.")


def _count(a, axis):
    s = shape(a)
    return int(np.prod([s[i] for i in norm_axes(axis, len(s))]))


def _float(a):
    return a if dtype_of(a).kind in "fc" else fnp.astype(a, np.float64)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    """Variance over `axis` with `ddof` (or NumPy 2's `correction`) degrees of freedom.

    Example:
      fnp.var(x, axis=0, ddof=1)
    """
    _no_out("var", out)
    a = as_input(a)
    if correction is not None:
        ddof = correction
    a = _float(a) if dtype is None else fnp.astype(a, dtype, copy=False)
    if where is not None:  # the mean and count of the selected elements of each slice
        m = fnp.mean(a, axis=axis, keepdims=True, where=where) if mean is None else mean
        d = fnp.where(where, a - m, fnp.zeros_like(a))
        n = fnp.sum(fnp.broadcast_to(where, shape(a)), axis=axis, keepdims=keepdims)
        return fnp.sum(_abs2(d), axis=axis, keepdims=keepdims) / fnp.maximum(n - ddof, 0)
    m = fnp.mean(a, axis=axis, keepdims=True) if mean is None else mean
    n = _count(a, axis)
    return fnp.sum(_abs2(a - m), axis=axis, keepdims=keepdims) / builtin_max(n - ddof, 0)


def _abs2(d):
    """|d|^2, real for complex d (NumPy's var of complex input is real)."""
    return fnp.real(d * fnp.conj(d)) if dtype_of(d).kind == "c" else d * d


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    """Standard deviation over `axis` (sqrt of `var`). Where the spread is zero its gradient
    is 0, as PyTorch's (not sqrt'(0) * 0 = NaN), like the norm's at 0."""
    return _sqrt_or_zero(var(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                             where=where, mean=mean, correction=correction))


def _sqrt_or_zero(v):
    """sqrt(v), with a zero derivative (to every order) where v == 0."""
    zero = const_of(v) == 0
    if not maybe_any(zero):
        return fnp.sqrt(v)
    return fnp.where(zero, fnp.zeros_like(v), fnp.sqrt(fnp.where(zero, fnp.ones_like(v), v)))


def builtin_max(a, b):
    return a if a > b else b


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted mean over `axis`; differentiable in both `a` and `weights`.

    1-D `weights` of the length of a single `axis` are aligned with that axis, as NumPy does.
    """
    a = _float(as_input(a))
    if weights is None:
        avg = fnp.mean(a, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        return avg, fnp.full_like(avg, _count(a, axis) * 1.0)
    w = weights
    if shape(w) != shape(a):
        if axis is None or ndim(w) != 1 or isinstance(axis, (tuple, list)):
            raise TypeError(f"average: weights of shape {shape(w)} differ from a's shape "
                            f"{shape(a)}; give axis with 1-D weights, or weights shaped like a.")
        ax = axis % ndim(a)
        if shape(w)[0] != shape(a)[ax]:
            raise ValueError(f"average: length of weights ({shape(w)[0]}) differs from a's "
                             f"axis {axis} ({shape(a)[ax]}).")
        w = fnp.reshape(w, tuple(shape(w)[0] if i == ax else 1 for i in range(ndim(a))))
    wsum = fnp.sum(fnp.broadcast_to(w, shape(a)), axis=axis, keepdims=keepdims)
    if not values_hidden(wsum) and np.any(getval(wsum) == 0):  # jit, device: not checked
        raise ZeroDivisionError("average: weights sum to zero, can't be normalized.")
    avg = fnp.sum(a * w, axis=axis, keepdims=keepdims) / wsum
    return (avg, wsum) if returned else avg


def ptp(a, axis=None, out=None, keepdims=False):
    """Range (max - min) over `axis`."""
    _no_out("ptp", out)
    a = as_input(a)
    return fnp.max(a, axis=axis, keepdims=keepdims) - fnp.min(a, axis=axis, keepdims=keepdims)


def _nan_to(a, value):
    return fnp.where(fnp.isnan(a), fnp.full_like(a, value, shape=()), a)  # on a's device


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum treating NaNs as zero; NaN positions get zero gradient."""
    _no_out("nansum", out)
    a = as_input(a)
    kw = {k: v for k, v in (("initial", initial), ("where", where)) if v is not None}
    return fnp.sum(_nan_to(a, 0), axis=axis, dtype=dtype, keepdims=keepdims, **kw)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Mean of the non-NaN elements."""
    _no_out("nanmean", out)
    a = as_input(a)
    n = fnp.sum(~fnp.isnan(a), axis=axis, keepdims=keepdims)
    return nansum(a, axis=axis, dtype=dtype, keepdims=keepdims) / n


def nanmax(a, axis=None, out=None, keepdims=False):
    """Maximum ignoring NaNs."""
    _no_out("nanmax", out)
    a = as_input(a)
    return fnp.max(_nan_to(a, -np.inf), axis=axis, keepdims=keepdims)


def nanmin(a, axis=None, out=None, keepdims=False):
    """Minimum ignoring NaNs."""
    _no_out("nanmin", out)
    a = as_input(a)
    return fnp.min(_nan_to(a, np.inf), axis=axis, keepdims=keepdims)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance of the non-NaN elements."""
    _no_out("nanvar", out)
    a = as_input(a)
    ok = ~fnp.isnan(a)
    n = fnp.sum(ok, axis=axis, keepdims=True)
    m = nansum(a, axis=axis, keepdims=True) / n
    d = _nan_to(a - m, 0)
    n2 = n if keepdims else fnp.sum(ok, axis=axis)
    return fnp.sum(d * d, axis=axis, keepdims=keepdims) / (n2 - ddof)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Standard deviation of the non-NaN elements (gradient 0 where the spread is zero)."""
    return _sqrt_or_zero(nanvar(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims))


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over `axis` (NumPy semantics): the middle element, or the mean of the two
    middle ones, of the sorted values; the gradient goes to those elements.

    Example:
      fnp.median(x, axis=0)
    """
    _no_out("median", out)
    a = as_input(a)
    if not isinstance(a, Tracer):  # plain arrays: the backend's own median
        return np.median(a, axis=axis, keepdims=keepdims)
    a = _float(fnp.asarray(a) if not hasattr(a, "shape") else a)
    nd = ndim(a)
    axes = check_axes(axis, nd)
    kept = [i for i in range(nd) if i not in axes]
    moved = fnp.transpose(a, kept + list(axes))
    flat = fnp.reshape(moved, tuple(shape(a)[i] for i in kept) + (-1,))
    n = shape(flat)[-1]
    if n == 0:
        raise ValueError("fnad.numpy.median: can't take the median of an empty selection.")
    srt = fnp.sort(flat, axis=-1)
    res = fnp.mean(srt[..., (n - 1) // 2:n // 2 + 1], axis=-1)
    if keepdims:
        res = fnp.reshape(res, tuple(1 if i in axes else s for i, s in enumerate(shape(a))))
    return res
