"""`jax.lax`'s map, switch and associative_scan, built on scan, cond and fnad.numpy.

`map` is a `scan` with no carry (one staged body under jit); `switch` is a balanced tree
of `cond`s (depth log2 of the number of branches); `associative_scan` is the parallel
prefix scan: O(log n) levels of vectorised calls of `fn`, each on strided slices.
"""

import builtins

import numpy as np

from .. import numpy as fnp
from .._batching.vmap import vmap
from .._core.abstract import aval_of
from .._core.tracer import Tracer
from .._core.tree import tree_flatten, tree_map, tree_unflatten
from ._control import cond, scan

__all__ = ["map", "switch", "associative_scan"]


def map(f, xs, *, batch_size=None):
    """`f` over the leading axis of the pytree `xs`, stacking the results (`jax.lax.map`):
    a `scan` with no carry. With `batch_size`, `f` is vmapped over chunks of that many
    rows (and once over the remainder), trading memory for fewer steps.

    Example:
      map(lambda x: x * 2, np.arange(3.0))  # [0., 2., 4.]
    """
    if batch_size is None:
        return scan(lambda c, x: (c, f(x)), (), xs)[1]
    leaves = tree_flatten(xs)[0]
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"lax.map: batch_size must be a positive int, got {batch_size!r}.")
    if not leaves:
        raise ValueError("lax.map: xs has no array leaves to map over.")
    n = aval_of(leaves[0]).shape[0]
    steps, rest = divmod(n, int(batch_size))
    bf = vmap(f)
    parts = []
    if steps:
        chunks = tree_map(lambda x: fnp.reshape(
            x[:steps * batch_size], (steps, batch_size) + aval_of(x).shape[1:]), xs)
        ys = scan(lambda c, x: (c, bf(x)), (), chunks)[1]
        parts.append(tree_map(lambda y: fnp.reshape(
            y, (steps * batch_size,) + aval_of(y).shape[2:]), ys))
    if rest:
        parts.append(bf(tree_map(lambda x: x[steps * batch_size:], xs)))
    if len(parts) == 1:
        return parts[0]
    return tree_map(lambda a, b: fnp.concatenate([a, b]), parts[0], parts[1])


def _switch_tree(index, first, branches, operands):
    if len(branches) == 1:
        return branches[0](*operands)
    mid = len(branches) // 2
    return cond(index < first + mid,
                lambda *ops: _switch_tree(index, first, branches[:mid], ops),
                lambda *ops: _switch_tree(index, first + mid, branches[mid:], ops),
                *operands)


def switch(index, branches, *operands):
    """`branches[index](*operands)`, as one staged operation (`jax.lax.switch`): an index
    outside `[0, len(branches))` is clamped into it, as in JAX. Every branch is traced
    and must return the same pytree of shapes and dtypes.

    Example:
      switch(1, [lambda x: x + 1, lambda x: x * 2], 3.0)  # 6.0
    """
    branches = list(branches)
    if not branches or not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches must be a non-empty sequence of callables, got "
                        f"{branches!r}.")
    av = aval_of(index)
    if av.shape != () or not (np.issubdtype(av.dtype, np.integer) or av.dtype == np.bool_):
        raise TypeError(f"lax.switch: index must be an integer scalar, got "
                        f"{av.dtype}{list(av.shape)}.")
    if not isinstance(index, Tracer):  # a known index: the clamped branch, called directly
        return branches[builtins.min(builtins.max(int(index), 0), len(branches) - 1)](*operands)
    index = fnp.clip(fnp.asarray(index).astype(np.int32), 0, len(branches) - 1)
    return _switch_tree(index, 0, branches, operands)


# ----------------------------------------------------------------------------- associative_scan

def _take(x, axis, start, stop, step=1):
    return x[(builtins.slice(None),) * axis + (builtins.slice(start, stop, step),)]


def _interleave(evens, odds, axis):
    """Entries `e0, o0, e1, o1, ...` along `axis` (`evens` as long as `odds` or one longer)."""
    ne, no = aval_of(evens).shape[axis], aval_of(odds).shape[axis]
    pairs = fnp.stack([_take(evens, axis, 0, no), odds], axis=axis + 1)
    shape = aval_of(pairs).shape
    out = fnp.reshape(pairs, shape[:axis] + (2 * no,) + shape[axis + 2:])
    return out if ne == no else fnp.concatenate([out, _take(evens, axis, no, ne)], axis)


def _prefix(combine, leaves, axis):
    n = aval_of(leaves[0]).shape[axis]
    if n < 2:
        return leaves
    pairs = combine([_take(x, axis, 0, n - 1, 2) for x in leaves],
                    [_take(x, axis, 1, n, 2) for x in leaves])
    odds = _prefix(combine, pairs, axis)  # the prefixes ending at entries 1, 3, 5, ...
    m = aval_of(odds[0]).shape[axis]
    later = combine([_take(o, axis, 0, m if n % 2 else m - 1) for o in odds],
                    [_take(x, axis, 2, n, 2) for x in leaves])
    evens = [fnp.concatenate([_take(x, axis, 0, 1), e], axis) for x, e in zip(leaves, later)]
    return [_interleave(e, o, axis) for e, o in zip(evens, odds)]


def associative_scan(fn, elems, reverse=False, axis=0):
    """All prefix combinations `[a, fn(a, b), fn(fn(a, b), c), ...]` along `axis` of the
    pytree `elems`, for an associative `fn` (`jax.lax.associative_scan`); `fn` is called on
    whole strided slices, so it must work elementwise (vectorised) on pytrees of arrays.
    With `reverse=True` the scan runs from the end: `[..., fn(fn(z, y), x), fn(z, y), z]`.

    Example:
      associative_scan(fnp.add, np.arange(4))  # [0, 1, 3, 6]
    """
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn must be callable.")
    leaves, tree = tree_flatten(elems)
    if not leaves:
        return elems
    leaves = [fnp.asarray(x) for x in leaves]
    nd = aval_of(leaves[0]).ndim
    if not -nd <= axis < builtins.max(nd, 1):
        raise ValueError(f"lax.associative_scan: axis {axis} is out of range for elems of "
                         f"{nd} dimensions.")
    axis %= nd
    sizes = {aval_of(x).shape[axis] if aval_of(x).ndim > axis else None for x in leaves}
    if len(sizes) != 1:
        raise ValueError(f"lax.associative_scan: the elems leaves have different sizes "
                         f"{sorted(sizes, key=str)} along axis {axis}.")
    if reverse:
        leaves = [fnp.flip(x, axis) for x in leaves]

    def combine(a, b):
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise TypeError(f"lax.associative_scan: fn must return the structure of elems "
                            f"{tree}, got {out_tree}.")
        return out

    out = _prefix(combine, leaves, axis)
    if reverse:
        out = [fnp.flip(x, axis) for x in out]
    return tree_unflatten(tree, out)
