"""Decisions that read a whole leaf or the whole tree, made the same on every process.

Inside `shard_optimizer_state` each process runs the inner transform on its own rows of
every parameter (0-d leaves whole, on every process). A transform that reads a whole leaf or
the whole tree (a norm, a finite check) would decide from its rows alone, and the processes
would decide differently: one skips a step another applies, and the parameters part. So
`shard_optimizer_state` runs the inner update under `rows_sharded()`, and there the helpers
below combine every process's rows with one collective before anything is decided:

- `leaf_square_sums`: each leaf's sum of squares over all its rows (a psum of the rows'
  sums; 0-d leaves, held whole by every process, are not summed again). `global_norm`,
  `clip_by_global_norm` and `scale_by_trust_ratio` (LAMB) read their norms from it;
- `agreed_all`: a flag that holds on every process only if it holds on all of them.
  `apply_if_finite` agrees on its finite check this way whenever there are several
  processes, sharded or not: its guard may also sit outside `data_parallel`, on each
  process's own gradients, where the processes would otherwise branch apart.
"""

import contextlib
import contextvars

import numpy as np

import fnad.distributed as dist
import fnad.numpy as fnp

__all__ = ["rows_sharded", "leaf_square_sums", "agreed_all", "agreed_any"]

_ROWS = contextvars.ContextVar("fnad_optim_rows_sharded", default=False)


@contextlib.contextmanager
def rows_sharded():
    """While it is open, the updates and params a transform sees are this process's rows
    of each leaf (set by `shard_optimizer_state` around its inner update)."""
    token = _ROWS.set(True)
    try:
        yield
    finally:
        _ROWS.reset(token)


def _sharded():
    return _ROWS.get() and dist.process_count() > 1


def leaf_square_sums(leaves):
    """The sum of squares of each leaf in `leaves` (a list), over the whole leaf: inside
    `rows_sharded()` with several processes, the processes' row sums added up (one psum)."""
    sums = [fnp.sum(fnp.square(x)) for x in leaves]
    if not _sharded():
        return sums
    idx = [k for k, x in enumerate(leaves) if getattr(x, "ndim", 0)]
    if idx:
        for k, total in zip(idx, dist.psum([sums[k] for k in idx])):
            sums[k] = total
    return sums


def agreed_all(flag):
    """`flag` (a bool array of shape ()) made the same on every process: True only where it
    is True on all of them (one psum of an int32 with several processes)."""
    n = dist.process_count()
    if n == 1:
        return flag
    return dist.psum(fnp.asarray(flag).astype(np.int32)) == n


def agreed_any(flags):
    """Each flag of the list `flags` (bool arrays of shape ()) True on every process where it
    is True on any, inside `rows_sharded()` (one psum); the flags themselves elsewhere."""
    if not _sharded() or not flags:
        return flags
    votes = dist.psum([fnp.asarray(f).astype(np.int32) for f in flags])
    return [v > 0 for v in votes]
