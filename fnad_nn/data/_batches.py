"""Random batches from an explicit randomness source: a `fnad.random` key or a NumPy
`Generator`, never hidden global state; and each process's part of a global batch for
data-parallel training (`fnad.distributed`)."""

import numpy as np

import fnad
import fnad.distributed as dist
import fnad.random as random

__all__ = ["minibatches", "shard_batch", "shard_rows"]


def check_source(fname, key, rng):
    if (key is None) == (rng is None):
        raise TypeError(f"{fname}: pass exactly one of key= (a fnad.random.PRNGKey) or rng= "
                        f"(a numpy.random.Generator, e.g. np.random.default_rng(seed)).")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError(f"{fname}: rng={rng!r} must be a numpy.random.Generator; make one "
                        f"with np.random.default_rng(seed).")


def randint(key, rng, shape, high):
    """Integers in [0, high) from `key` or `rng` (exactly one is given)."""
    if rng is not None:
        return rng.integers(0, high, size=shape)
    return np.asarray(random.randint(key, shape, 0, high), np.int64)


def permutation(key, rng, n):
    if rng is not None:
        return rng.permutation(n)
    return np.asarray(random.permutation(key, n), np.int64)


def minibatches(n, batch_size, *, key=None, rng=None, drop_last=False, shard=False):
    """Index arrays covering `range(n)` once in a random order (one epoch).

    Args:
      n: number of examples.
      batch_size: indices per batch (per global batch, with `shard`).
      key: a `fnad.random.PRNGKey` (split a fresh one per epoch), or
      rng: a `numpy.random.Generator` (advances in place).
      drop_last: drop a final batch smaller than `batch_size`.
      shard: return this process's part of each batch (`shard_rows`) for data-parallel
        training: give every process the same key (or seed), and each reads a disjoint,
        equal part of every global batch, the global batches being the one-process ones.

    Returns:
      A list of int64 index arrays.

    Example:
      for idx in minibatches(len(y), 128, rng=np.random.default_rng(0)):
          loss, grads = loss_and_grad(params, x[idx], y[idx])
    """
    check_source("minibatches", key, rng)
    if batch_size < 1:
        raise ValueError(f"minibatches: batch_size={batch_size} must be at least 1.")
    order = permutation(key, rng, n)
    stop = n - n % batch_size if drop_last else n
    batches = [order[i:i + batch_size] for i in range(0, stop, batch_size)]
    return [shard_rows(b, what="minibatches") for b in batches] if shard else batches


def _split(rows, index, count, what):
    if rows % count:
        raise ValueError(
            f"{what}: a global batch of {rows} rows does not split into {count} equal parts, "
            "one per process. Use a batch size divisible by the number of processes (and "
            "drop_last=True if the last batch of an epoch is smaller): the mean of per-process "
            "mean losses equals the global mean only for equal parts.")
    part = rows // count
    return slice(index * part, (index + 1) * part)


def shard_rows(x, *, index=None, count=None, what="shard_rows"):
    """This process's rows of a global batch `x`: the `index`-th of `count` equal blocks
    along the first axis (by default `fnad.distributed.process_index()` and
    `process_count()`), so that the processes read disjoint parts whose concatenation, in
    process order, is `x`.

    Example:
      x_mine = shard_rows(x_global)      # rows [i * B/N, (i+1) * B/N) on process i
    """
    index = dist.process_index() if index is None else index
    count = dist.process_count() if count is None else count
    return x[_split(len(x), index, count, what)]


def shard_batch(batch, *, index=None, count=None):
    """`shard_rows` of every leaf of a pytree (inputs and targets together).

    Example:
      x, y = shard_batch((x_global, y_global))
    """
    return fnad.tree_map(lambda x: shard_rows(x, index=index, count=count,
                                              what="shard_batch"), batch)
