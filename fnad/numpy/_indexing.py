"""Indexing: gathers (x[idx], take, take_along_axis), functional updates (`at`), and the
scatter-add that is the gather's transpose. Repeated indices accumulate."""

import numpy as np

from .. import numpy as fnp
from .._core.abstract import (ShapedArray, data_dependent_rule, eval_on_standins, is_aval,
                              reduction_rule, xp_of)
from .._core.rules import as_primitive, defabstract_eval, defbatch, defjvp, defjvp_linear, defvjp
from .._core.backend import array_module
from .._batching.families import axis_batch
from .._batching.vmap import index_dispatch, unbatched_value
from .._core.tracer import Tracer, getval
from ._indexing_batch import gather_transpose_batch, getitem_batch, update_batch
from ._scatter import is_basic as is_basic, is_unique as _is_unique, scatter_add
from ._util import check_axis, dtype_of, ndim, shape, unbroadcast, wrap, wrap_nondiff


def normalize_index(idx):
    """An index as a tuple of ints, slices, None, Ellipsis and plain integer/bool arrays."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    out = []
    for i in idx:
        i = unbatched_value(i)  # a batched index (vmap) stays traced
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
    elif isinstance(z, np.ndarray):
        np.multiply.at(z, idx, v)
    else:
        _multiply_at(z, idx, v)
    return z


def _multiply_at(z, idx, v):
    """`np.multiply.at(z, idx, v)` on a device, whose ufuncs have no `multiply.at` (CuPy's
    has only add and subtract): the factors landing on one position are laid out in a row
    of a (positions, most repeats) table padded with ones, and each row's product
    multiplies its position once. The table's size is read back (it depends on the index
    values)."""
    xp = array_module(z)
    pos = xp.arange(z.size).reshape(z.shape)[idx]
    vals = xp.broadcast_to(v, pos.shape).ravel()
    pos = pos.ravel()
    order = xp.argsort(pos)
    srt = pos[order]
    new = xp.concatenate([xp.ones(min(srt.size, 1), bool), srt[1:] != srt[:-1]])
    group = xp.cumsum(new) - 1
    starts = xp.flatnonzero(new)
    rank = xp.arange(srt.size) - starts[group]
    width = int(rank.max()) + 1 if rank.size else 1
    table = xp.ones((starts.size, width), dtype=vals.dtype)
    table[group, rank] = vals[order]
    flat = z.reshape(-1)
    flat[srt[starts]] *= table.prod(axis=1)


getitem = wrap(index_dispatch(_getitem, 1), "getitem")
gather_transpose = wrap(index_dispatch(_gather_transpose, 1), "gather_transpose")
index_add = wrap(index_dispatch(_index_add, 1), "index_add")
index_set = wrap(index_dispatch(_index_set, 1), "index_set")
index_mul = wrap(index_dispatch(_index_mul, 1), "index_mul")
for _f in (getitem, gather_transpose, index_add, index_set, index_mul):
    as_primitive(_f).impl.primitive = as_primitive(_f)


def _zeros_for(x, g):
    return fnp.zeros_like(g, shape=shape(x))  # on g's device


defvjp(getitem, lambda g, ans, x, idx: gather_transpose(g, idx, shape(x)))
defjvp_linear(getitem)
defbatch(getitem, getitem_batch(getitem))
defvjp(gather_transpose, lambda g, ans, v, idx, x_shape: getitem(g, idx))
defjvp_linear(gather_transpose)
defbatch(gather_transpose, gather_transpose_batch(gather_transpose))
defvjp(index_add, lambda g, ans, x, idx, v: g,
       None,
       lambda g, ans, x, idx, v: unbroadcast(getitem(g, idx), shape(v)))
defjvp(index_add, lambda t, ans, x, idx, v: t,
       None,
       lambda t, ans, x, idx, v: index_add(_zeros_for(x, t), idx, t))
def _vjp_index_set_v(g, ans, x, idx, v):
    # a position named twice keeps one writer (the last, as NumPy's assignment): only that
    # writer's entry of v gets the position's cotangent. The winners are found by the same
    # assignment, of each writer's number, so they are the forward's winners.
    gv = getitem(g, idx)
    if not _is_unique(idx):
        ids = array_module(getval(g)).arange(int(np.prod(shape(gv)))).reshape(shape(gv))
        won = getitem(index_set(fnp.full_like(g, -1, dtype=ids.dtype), idx, ids), idx) == ids
        gv = fnp.where(won, gv, fnp.zeros_like(gv, shape=()))
    return unbroadcast(gv, shape(v))


defvjp(index_set, lambda g, ans, x, idx, v: index_set(g, idx, fnp.zeros_like(g, shape=())),
       None, _vjp_index_set_v)
defjvp(index_set, lambda t, ans, x, idx, v: index_set(t, idx, fnp.zeros_like(t, shape=())),
       None,
       lambda t, ans, x, idx, v: index_set(_zeros_for(x, t), idx, t))
for _f in (index_add, index_set, index_mul):  # index_mul's derivatives are below
    defbatch(_f, update_batch(_f, getitem))


def _other_factors(x, idx, v):
    """For each factor v_k (v broadcast to the shape of x[idx]), the product of the other
    factors landing on the same position of x: exclusive products, exact at zeros (no
    division by v). The factors are laid out in a (positions, most repeats) table padded
    with ones, whose prefix and suffix cumulative products give the exclusive products."""
    xp = array_module(getval(x))
    pos = xp.arange(int(np.prod(shape(x))), dtype=np.intp).reshape(shape(x))[idx]
    pos_shape = pos.shape
    pos = pos.ravel()
    order = xp.argsort(pos, kind="stable")
    srt = pos[order]
    new = xp.concatenate([xp.ones(min(srt.size, 1), bool), srt[1:] != srt[:-1]])
    group = xp.empty_like(order)
    group[order] = xp.cumsum(new) - 1
    starts = xp.flatnonzero(new)
    rank = xp.empty_like(order)
    rank[order] = xp.arange(srt.size) - xp.repeat(starts, xp.diff(xp.append(starts, srt.size)))
    n_groups, width = int(starts.size), int(rank.max()) + 1 if rank.size else 1
    vf = fnp.ravel(fnp.broadcast_to(v, pos_shape))
    table = index_set(fnp.ones_like(vf, shape=(n_groups, width)), (group, rank), vf)
    one = fnp.ones_like(vf, shape=(n_groups, 1))
    before = fnp.concatenate([one, fnp.cumprod(table, axis=1)[:, :-1]], axis=1)
    after = fnp.concatenate([fnp.flip(fnp.cumprod(fnp.flip(table, 1), axis=1), 1)[:, 1:], one],
                            axis=1)
    return fnp.reshape(getitem(before * after, (group, rank)), pos_shape)


def _quotient_ok(ans, x, v):
    """True when ans / v is the product of the other factors exactly enough: first order
    (nothing traced further: its derivatives cancel badly at small v), no zero or tiny
    factor, and no product underflowed to 0 (where x is not 0). False on a device, where
    checking would read values back: the product form is exact anyway."""
    if (isinstance(ans, Tracer) or isinstance(x, Tracer) or isinstance(v, Tracer)
            or not isinstance(ans, np.ndarray)):
        return False
    small = np.finfo(np.result_type(dtype_of(v), 1.0)).tiny ** 0.25
    return not bool(np.any(abs(v) < small)) and not bool(np.any((ans == 0) & (x != 0)))


def _vjp_index_mul_v(g, ans, x, idx, v):
    # unique positions: d/dv = g * x; repeated positions: g * x times the other factors
    if _is_unique(idx):
        return unbroadcast(getitem(g * x, idx), shape(v))
    if _quotient_ok(ans, x, v):
        return unbroadcast(getitem(g * ans, idx) / v, shape(v))
    return unbroadcast(getitem(g * x, idx) * _other_factors(x, idx, v), shape(v))


defvjp(index_mul, lambda g, ans, x, idx, v: index_mul(g, idx, v), None, _vjp_index_mul_v)
def _jvp_index_mul_v(t, ans, x, idx, v):
    # unique positions: x[idx] * t; repeated positions multiply several factors, so the
    # tangents of the factors landing on one position add up, each times the others
    if _is_unique(idx):
        return index_set(fnp.zeros_like(ans), idx, getitem(x, idx) * t)
    if _quotient_ok(ans, x, v):
        return ans * index_add(fnp.zeros_like(ans), idx, t / v)
    tb = fnp.broadcast_to(t, getval(x)[idx].shape)
    return x * index_add(fnp.zeros_like(ans), idx, tb * _other_factors(x, idx, v))


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
    """Elements of `a` at `indices` along `axis` (of the flattened array when axis is None).

    mode: None or "raise" (out-of-range indices raise IndexError), "clip" (clipped to
    [0, n-1], negative ones too, as NumPy; JAX's gathers clamp likewise) or "wrap" (modulo n).

    Example:
      fnp.take(x, np.array([0, 11]), mode="clip")     # x[0], x[-1] for a 10-element x
    """
    if out is not None:
        raise TypeError("fnad.numpy.take: out= is not supported; use the returned array.")
    if mode not in (None, "raise", "clip", "wrap"):
        raise ValueError(f"fnad.numpy.take: mode {mode!r} is not 'raise', 'clip' or 'wrap'.")
    if axis is None:
        a = fnp.ravel(a)
        axis = 0
    axis = axis % len(shape(a))
    if mode in ("clip", "wrap"):
        n = shape(a)[axis]
        indices = fnp.clip(indices, 0, n - 1) if mode == "clip" else fnp.mod(indices, n)
    return getitem(a, (slice(None),) * axis + normalize_index(indices))


def take_along_axis(arr, indices, axis=-1):
    """Pick values from `arr` by matching 1-D slices of `indices` along `axis`; the other
    axes of `arr` and `indices` broadcast against each other, as NumPy's.

    Example:
      fnp.take_along_axis(x, fnp.argsort(x, axis=1), axis=1)   # x sorted along axis 1
    """
    indices = unbatched_value(indices)
    if not hasattr(indices, "dtype"):
        indices = np.asarray(indices)
    if dtype_of(indices).kind not in "iu":
        raise IndexError(f"take_along_axis: `indices` must be an integer array, got dtype "
                         f"{dtype_of(indices)}; cast with .astype(int).")
    if axis is None:
        if len(shape(indices)) != 1:
            raise ValueError(f"take_along_axis: when axis=None, `indices` must have a single "
                             f"dimension, got shape {shape(indices)}.")
        return getitem(fnp.ravel(arr), (indices,))
    nd = len(shape(arr))
    if len(shape(indices)) != nd:
        raise ValueError(f"take_along_axis: `indices` and `arr` must have the same number of "
                         f"dimensions, got shapes {shape(indices)} and {shape(arr)}; add axes "
                         "of length 1 to `indices` (they broadcast).")
    axis = check_axis(axis, nd)
    idx = []
    for d, n in enumerate(shape(arr)):  # arr's axes, broadcast against indices' (as NumPy)
        if d == axis:
            idx.append(indices)
        else:
            s = [1] * nd
            s[d] = n
            idx.append(array_module(arr).arange(n).reshape(s))  # on arr's device
    return getitem(arr, tuple(idx))


argsort = wrap_nondiff(np.argsort, "argsort")
argmax = wrap_nondiff(np.argmax, "argmax")
argmin = wrap_nondiff(np.argmin, "argmin")
nonzero = wrap(np.nonzero, "nonzero", nondiff=True, multiple_results=True)  # one array per axis
argwhere = wrap_nondiff(np.argwhere, "argwhere")
flatnonzero = wrap_nondiff(np.flatnonzero, "flatnonzero")
searchsorted = wrap_nondiff(np.searchsorted, "searchsorted")
argpartition = wrap_nondiff(np.argpartition, "argpartition")
for _f in (argsort, argmax, argmin, argpartition):  # axis=None: the flattened array
    defbatch(_f, axis_batch(_f, none="flat"))
# nonzero, argwhere, flatnonzero and searchsorted have no rule: vmap runs them per example.


def sort(a, axis=-1, kind=None, order=None, stable=None):
    """Sorted copy of `a`, as `numpy.sort`; differentiable.

    The gradient follows the stable sorting permutation whatever `kind` is (the sorted
    values are the same for every kind): among tied entries, the k-th smallest output slot
    sends its gradient to the k-th tied input in order, where `argsort(a, kind="stable")`
    puts it. NumPy's default quicksort may order ties differently.

    Example:
      fnad.grad(lambda v: fnp.sum(fnp.sort(v) * np.arange(3.0)))(np.array([1.0, 0.0, 1.0]))
      # [1, 0, 2]: the first 1.0 takes slot 1, the second slot 2
    """
    if axis is None:
        return sort(fnp.ravel(a), axis=-1, kind=kind)
    check_axis(axis, ndim(a))  # NumPy's error for a 0-d `a` (whose argsort takes axis 0)
    return take_along_axis(a, argsort(a, axis=axis, kind="stable"), axis)


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A copy of `a` with its kth-smallest entries in their sorted places, the smaller ones
    before them and the larger after (in no particular order), as `numpy.partition`;
    differentiable: each output takes the gradient of the input `argpartition` put there
    (the same arrangement as NumPy's partition).

    Example:
      fnp.partition(np.array([3.0, 1.0, 2.0]), 1)   # [1., 2., 3.]
    """
    if order is not None:
        raise ValueError("fnad.numpy.partition: order= (structured arrays) is not supported.")
    if kind != "introselect":
        raise ValueError(f"fnad.numpy.partition: kind={kind!r}; NumPy has only 'introselect'.")
    if axis is None:
        return partition(fnp.ravel(a), kth, axis=-1)
    check_axis(axis, ndim(a))
    return take_along_axis(a, argpartition(a, kth, axis=axis), axis)  # no kind: CuPy has none


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
defabstract_eval(argpartition, lambda a, kth, axis=-1, *args, **kw: _argsort_aval(a, axis))
defabstract_eval(argmax, reduction_rule(np.argmax))
defabstract_eval(argmin, reduction_rule(np.argmin))
defabstract_eval(searchsorted, _searchsorted_aval)
for _f in (nonzero, argwhere, flatnonzero):
    defabstract_eval(_f, data_dependent_rule(as_primitive(_f).name,
                                             "use a fixed-size form such as fnp.where"))
del _f
