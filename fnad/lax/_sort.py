"""`jax.lax`'s sorting and cumulative operations, from fnad.numpy and associative_scan.

Sorting is stable and puts NaNs last, as in JAX. `cummax`, `cummin` and `cumlogsumexp` are
associative scans of `maximum`, `minimum` and `logaddexp`, so their gradients are those
of the elementwise operations they combine.
"""

import numpy as np

from .. import numpy as fnp
from .._core.abstract import aval_of
from ._flow import associative_scan
from ._reduce import keep_dtype

__all__ = ["sort", "sort_key_val", "top_k", "approx_max_k", "approx_min_k", "cumsum",
           "cumprod", "cummax", "cummin", "cumlogsumexp"]


def _axis(fname, axis, nd):
    if not -nd <= axis < nd:
        raise ValueError(f"{fname}: axis {axis} is out of range for an operand of {nd} "
                         "dimensions.")
    return axis % nd


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """`operand` sorted along `dimension` (`jax.lax.sort`). Given a sequence of arrays of
    one shape, sorts them all by the first `num_keys` (lexicographically) and returns a
    tuple. The sort is always stable (`is_stable` is accepted).

    Example:
      sort((keys, values), num_keys=1)  # values in the order of the sorted keys
    """
    if not isinstance(operand, (tuple, list)):
        return fnp.sort(operand, axis=dimension, kind="stable")
    operands = [fnp.asarray(x) for x in operand]
    shapes = {aval_of(x).shape for x in operands}
    if len(shapes) != 1:
        raise ValueError(f"lax.sort: the operands have different shapes {sorted(shapes)}; "
                         "sort arrays of one shape.")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"lax.sort: num_keys={num_keys} must lie in [1, {len(operands)}].")
    dim = _axis("lax.sort", dimension, aval_of(operands[0]).ndim)
    perm = None
    for key in reversed(operands[:num_keys]):  # stable sorts, last key first
        k = key if perm is None else fnp.take_along_axis(key, perm, dim)
        step = fnp.argsort(k, axis=dim, kind="stable")
        perm = step if perm is None else fnp.take_along_axis(perm, step, dim)
    return tuple(fnp.take_along_axis(x, perm, dim) for x in operands)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """`(sorted keys, values in the keys' order)` (`jax.lax.sort_key_val`)."""
    return sort((keys, values), dimension, is_stable, 1)


def top_k(operand, k, *, axis=-1):
    """The `k` largest entries along `axis` and their indices (int32), largest first, ties
    in index order (`jax.lax.top_k`).

    Example:
      top_k(np.array([1.0, 3.0, 2.0]), 2)  # ([3., 2.], [1, 2])
    """
    x = fnp.asarray(operand)
    nd = aval_of(x).ndim
    if nd == 0:
        raise ValueError("lax.top_k: the operand needs at least one dimension.")
    axis = _axis("lax.top_k", axis, nd)
    n = aval_of(x).shape[axis]
    if not isinstance(k, (int, np.integer)) or not 0 <= k <= n:
        raise ValueError(f"lax.top_k: k must be an int in [0, {n}] (the size of axis {axis}), "
                         f"got {k!r}.")
    # a stable ascending sort of the reversed axis, read backwards: largest first, and
    # among equal entries the lower index first (no negation: unsigned and int-min work)
    order = fnp.argsort(fnp.flip(x, axis), axis=axis, kind="stable")
    index = (slice(None),) * axis + (slice(n - 1, n - 1 - int(k) if k < n else None, -1),)
    idx = (n - 1 - order[index]).astype(np.int32)
    return fnp.take_along_axis(x, idx, axis), idx


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """`top_k` along `reduction_dimension` (`jax.lax.approx_max_k`): exact here (recall 1),
    so the recall and aggregation arguments are accepted and change nothing."""
    return top_k(operand, k, axis=reduction_dimension)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The `k` smallest entries along `reduction_dimension` and their indices (int32),
    smallest first, ties in index order (`jax.lax.approx_min_k`, exact here)."""
    x = fnp.asarray(operand)
    axis = _axis("lax.approx_min_k", reduction_dimension, aval_of(x).ndim)
    n = aval_of(x).shape[axis]
    if not isinstance(k, (int, np.integer)) or not 0 <= k <= n:
        raise ValueError(f"lax.approx_min_k: k must be an int in [0, {n}], got {k!r}.")
    index = (slice(None),) * axis + (slice(0, int(k)),)
    idx = fnp.argsort(x, axis=axis, kind="stable")[index].astype(np.int32)
    return fnp.take_along_axis(x, idx, axis), idx


def _cumulative(fname, fn, operand, axis, reverse):
    x = fnp.asarray(operand)
    axis = _axis(fname, axis, aval_of(x).ndim)
    return associative_scan(fn, x, reverse=reverse, axis=axis)


def _running(fname, fn, operand, axis, reverse):
    x = fnp.asarray(operand)
    axis = _axis(fname, axis, aval_of(x).ndim)
    if reverse:
        return fnp.flip(fn(fnp.flip(x, axis), axis=axis), axis)
    return fn(x, axis=axis)


def cumsum(operand, axis=0, reverse=False):
    """Running sums along `axis`, from the end with `reverse=True` (`jax.lax.cumsum`)."""
    return _running("lax.cumsum", keep_dtype(fnp.cumsum), operand, axis, reverse)


def cumprod(operand, axis=0, reverse=False):
    """Running products along `axis` (`jax.lax.cumprod`)."""
    return _running("lax.cumprod", keep_dtype(fnp.cumprod), operand, axis, reverse)


def cummax(operand, axis=0, reverse=False):
    """Running maxima along `axis` (`jax.lax.cummax`)."""
    return _cumulative("lax.cummax", fnp.maximum, operand, axis, reverse)


def cummin(operand, axis=0, reverse=False):
    """Running minima along `axis` (`jax.lax.cummin`)."""
    return _cumulative("lax.cummin", fnp.minimum, operand, axis, reverse)


def cumlogsumexp(operand, axis=0, reverse=False):
    """Running `log(sum(exp(...)))` along `axis`, computed stably
    (`jax.lax.cumlogsumexp`)."""
    return _cumulative("lax.cumlogsumexp", fnp.logaddexp, operand, axis, reverse)
