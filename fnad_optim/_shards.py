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

__all__ = ["rows_sharded", "leaf_square_sums", "agreed_all", "agreed_any", "UNSHARDABLE",
           "refuse_sharded"]

# Transforms whose result reads a whole leaf along its rows in a way no psum above combines:
# `shard_optimizer_state` refuses them by name (in its init and update, with any number of
# processes, so the mistake shows in a one-process run too). Everything else in fnad_optim
# works coordinate by coordinate, by row, or through `leaf_square_sums` / `agreed_*`.
UNSHARDABLE = {
    "scale_by_factored_rms": "its row and column moments average a leaf over its rows",
    "clip_by_block_rms": "it clips each leaf by the root mean square of the whole leaf",
    "scale_by_param_block_norm": "it scales each leaf by the norm of the whole param",
    "scale_by_param_block_rms": "it scales each leaf by the root mean square of the whole "
                                "param",
    "scale_by_novograd": "its second moment is one number per leaf, of the whole leaf",
    "scale_by_sm3": "its accumulators take maxima over a leaf's other axes, rows included",
    "adaptive_grad_clip": "its unit norms sum over a leaf's rows",
    "add_noise": "its noise is drawn for the shape of the whole leaf",
}

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


def refuse_sharded(fname):
    """Raise, naming `fname` and why, if called inside `rows_sharded()` (the inner init or
    update of `shard_optimizer_state`); `fname` is a key of `UNSHARDABLE`."""
    if _ROWS.get():
        raise ValueError(
            f"shard_optimizer_state: {fname} cannot be sharded by rows: {UNSHARDABLE[fname]}, "
            "so each process would compute it from its own rows and get another result. "
            f"Keep {fname} out of shard_optimizer_state (chain it after the sharded part, or "
            "use data_parallel(opt) without shard_state=True).")


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
