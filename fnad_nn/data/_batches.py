"""Random batches from an explicit randomness source: a `fnad.random` key or a NumPy
`Generator`, never hidden global state."""

import numpy as np

import fnad.random as random

__all__ = ["minibatches"]


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


def minibatches(n, batch_size, *, key=None, rng=None, drop_last=False):
    """Index arrays covering `range(n)` once in a random order (one epoch).

    Args:
      n: number of examples.
      batch_size: indices per batch.
      key: a `fnad.random.PRNGKey` (split a fresh one per epoch), or
      rng: a `numpy.random.Generator` (advances in place).
      drop_last: drop a final batch smaller than `batch_size`.

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
    return [order[i:i + batch_size] for i in range(0, stop, batch_size)]
