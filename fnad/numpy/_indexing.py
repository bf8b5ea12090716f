"""Indexing: gathers (x[idx], take, take_along_axis), functional updates (`at`), and the
scatter-add that is the gather's transpose. Repeated indices accumulate."""

import numpy as np

from .. import numpy as fnp
from .._abstract import (ShapedArray, data_dependent_rule, eval_on_standins, is_aval,
                         reduction_rule, xp_of)
from ..extend import as_primitive, defabstract_eval, defjvp, defjvp_linear, defvjp
from .._tracer import getval
from ._scatter import is_basic as is_basic, is_unique as _is_unique, scatter_add
from ._util import dtype_of, shape, unbroadcast, wrap, wrap_nondiff


def normalize_index(idx):
    """An index as a tuple of ints, slices, None, Ellipsis and plain integer/bool arrays."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    out = []
    for i in idx:
        i = getval(i)
        if isinstance(i, list):
            i = np.asarray(i)
            if i.dtype.kind == "f" or (i.size == 0 and i.dtype.kind != "b"):
                i = i.astype(np.intp)
        if hasattr(i, "dtype") and getattr(i, "ndim", 1) and i.dtype.kind not in "biu":
            raise IndexError(f"fnad.numpy indexing: index arrays must be integer or boolean, got "
                             f"dtype {i.dtype}; cast with .astype(int).")
        out.append(i)
    return tuple(out)


def _getitem(x, idx):
    return x[idx]


def _index_add(x, idx, v):
    return scatter_add(x.copy(), idx, v)


def _gather_transpose(g, idx, x_shape):
    """The VJP of x[idx]: zeros of x's shape with g scattered in (added where repeated)."""
    z = np.zeros_like(g, shape=x_shape)  # dispatches to CuPy for CuPy arrays
    if _is_unique(idx):
        z[idx] = g
        return z
    return scatter_add(z, idx, g, fresh=True)


def _index_set(x, idx, v):
    z = x.copy()
    z[idx] = v
    return z


def _index_mul(x, idx, v):
    z = x.copy()
    if _is_unique(idx):
        z[idx] *= v
    else:
        np.multiply.at(z, idx, v)
    return z


getitem = wrap(_getitem, "getitem")
gather_transpose = wrap(_gather_transpose, "gather_transpose")
index_add = wrap(_index_add, "index_add")
index_set = wrap(_index_set, "index_set")
index_mul = wrap(_index_mul, "index_mul")


def _zeros_for(x, g):
    return fnp.zeros(shape(x), dtype=dtype_of(g))


defvjp(getitem, lambda g, ans, x, idx: gather_transpose(g, idx, shape(x)))
defjvp_linear(getitem)
defvjp(gather_transpose, lambda g, ans, v, idx, x_shape: getitem(g, idx))
defjvp_linear(gather_transpose)
defvjp(index_add, lambda g, ans, x, idx, v: g,
       None,
       lambda g, ans, x, idx, v: unbroadcast(getitem(g, idx), shape(v)))
defjvp(index_add, lambda t, ans, x, idx, v: t,
       None,
       lambda t, ans, x, idx, v: index_add(_zeros_for(x, t), idx, t))
defvjp(index_set, lambda g, ans, x, idx, v: index_set(g, idx, fnp.zeros((), dtype_of(g))),
       None,
       lambda g, ans, x, idx, v: unbroadcast(getitem(g, idx), shape(v)))
defjvp(index_set, lambda t, ans, x, idx, v: index_set(t, idx, fnp.zeros((), dtype_of(t))),
       None,
       lambda t, ans, x, idx, v: index_set(_zeros_for(x, t), idx, t))


def _vjp_index_mul_v(g, ans, x, idx, v):
    # unique positions: d/dv = g * x; repeated positions use the product rule through ans / v
    if _is_unique(idx):
        return unbroadcast(getitem(g * x, idx), shape(v))
    return unbroadcast(getitem(g * ans, idx) / v, shape(v))


defvjp(index_mul, lambda g, ans, x, idx, v: index_mul(g, idx, v), None, _vjp_index_mul_v)
def _jvp_index_mul_v(t, ans, x, idx, v):
    # unique positions: x[idx] * t; repeated positions multiply several factors, so the
    # tangents t / v of the factors landing on one position add up (times ans)
    if _is_unique(idx):
        return index_set(fnp.zeros_like(ans), idx, getitem(x, idx) * t)
    return ans * index_add(fnp.zeros_like(ans), idx, t / v)


defjvp(index_mul, lambda t, ans, x, idx, v: index_mul(t, idx, v), None, _jvp_index_mul_v)


class _IndexUpdateRef:
    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, normalize_index(idx)

    def get(self):
        return getitem(self.x, self.idx)

    def set(self, values):
        return index_set(self.x, self.idx, values)

    def add(self, values):
        return index_add(self.x, self.idx, values)

    def multiply(self, values):
        return index_mul(self.x, self.idx, values)

    def subtract(self, values):
        return index_add(self.x, self.idx, -values)

    def divide(self, values):
        return index_mul(self.x, self.idx, 1 / values)


class _IndexUpdateHelper:
    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.x, idx)


def at(x):
    """Functional index updates: `fnp.at(x)[idx].set(v)`, `.add(v)`, `.multiply(v)`, `.get()`.

    Returns new arrays; `x` is never modified. Repeated indices accumulate for add and
    multiply.

    Example:
      y = fnp.at(x)[[0, 0, 2]].add(1.0)   # y[0] == x[0] + 2
    """
    return _IndexUpdateHelper(x)


def take(a, indices, axis=None, out=None, mode=None):
    """Elements of `a` at `indices` along `axis` (of the flattened array when axis is None)."""
    if axis is None:
        return getitem(fnp.ravel(a), normalize_index(indices))
    axis = axis % len(shape(a))
    return getitem(a, (slice(None),) * axis + normalize_index(indices))


def take_along_axis(arr, indices, axis):
    """Pick values from `arr` by matching 1-D slices of `indices` along `axis`."""
    indices = getval(indices)
    if axis is None:
        return getitem(fnp.ravel(arr), (indices,))
    nd = len(shape(arr))
    axis = axis % nd
    idx = []
    for d in range(nd):
        if d == axis:
            idx.append(indices)
        else:
            s = [1] * nd
            s[d] = shape(indices)[d]
            idx.append(np.arange(shape(indices)[d]).reshape(s))
    return getitem(arr, tuple(idx))


argsort = wrap_nondiff(np.argsort, "argsort")
argmax = wrap_nondiff(np.argmax, "argmax")
argmin = wrap_nondiff(np.argmin, "argmin")
nonzero = wrap_nondiff(np.nonzero, "nonzero")
argwhere = wrap_nondiff(np.argwhere, "argwhere")
flatnonzero = wrap_nondiff(np.flatnonzero, "flatnonzero")
searchsorted = wrap_nondiff(np.searchsorted, "searchsorted")


def sort(a, axis=-1, kind=None, order=None, stable=None):
    """Sorted copy of `a`; differentiable (the gradient follows the sorting permutation)."""
    if axis is None:
        return sort(fnp.ravel(a), axis=-1, kind=kind)
    return take_along_axis(a, argsort(a, axis=axis, kind=kind, stable=stable), axis)

# ----------------------------------------------------------------------------- abstract evaluation


def _getitem_aval(x, idx):
    # Integer index arrays become zeros of their shape: the result's shape depends only on
    # theirs; a boolean mask's result depends on how many entries are true.
    idx = idx if isinstance(idx, tuple) else (idx,)
    if any(is_aval(i) and i.dtype == bool and i.ndim for i in idx):
        return _data_dependent_index(x, idx)
    return eval_on_standins(_getitem, x, tuple(_standin_index(i) for i in idx))


def _standin_index(i):
    if is_aval(i):
        return np.zeros(i.shape, i.dtype)
    if isinstance(i, np.ndarray) and i.dtype == bool and i.ndim:
        return i  # a concrete mask: its count is known
    return i


_data_dependent_index = data_dependent_rule(
    "getitem", "index with fnp.where(mask, x, 0) to keep the shape fixed")


def _argsort_aval(a, axis=-1, *args, **kwargs):
    flat = axis is None or a.ndim == 0  # NumPy sorts a 0-d array as a 1-d one
    return ShapedArray((a.size,) if flat else a.shape, np.intp, xp=a.xp)


def _searchsorted_aval(a, v, *args, **kwargs):
    return ShapedArray(v.shape if is_aval(v) else np.shape(v), np.intp, xp=xp_of((a, v)))


defabstract_eval(getitem, _getitem_aval)
defabstract_eval(gather_transpose, lambda g, idx, x_shape: g.update(shape=x_shape))
for _f in (index_add, index_set, index_mul):
    defabstract_eval(_f, lambda x, idx, v: x.update(weak_type=False))
defabstract_eval(argsort, _argsort_aval)
defabstract_eval(argmax, reduction_rule(np.argmax))
defabstract_eval(argmin, reduction_rule(np.argmin))
defabstract_eval(searchsorted, _searchsorted_aval)
for _f in (nonzero, argwhere, flatnonzero):
    defabstract_eval(_f, data_dependent_rule(as_primitive(_f).name,
                                             "use a fixed-size form such as fnp.where"))
del _f
