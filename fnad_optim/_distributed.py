"""Data-parallel training: gradients averaged across processes, and optimizer states sharded
across them (ZeRO stage 1).

`data_parallel(opt)` puts `average_gradients()` in front of `opt`, so a training step on
each process's part of the batch is `update(grads)` with no hand-written communication.
With `shard_state=True` the optimizer is wrapped in `shard_optimizer_state`: each process
keeps the state of 1/N of every parameter's rows, updates those rows, and the processes
gather the updates. The result is the same as without sharding, bit for bit, for any
transform that works coordinate by coordinate.
"""

from typing import Any, NamedTuple

import numpy as np

import fnad
import fnad.distributed as dist
import fnad.numpy as fnp

from ._base import EmptyState, GradientTransformation, chain, check_structures
from ._shards import rows_sharded

__all__ = ["average_gradients", "data_parallel", "shard_optimizer_state", "ShardedState",
           "gather_state", "scatter_state"]


class ShardedState(NamedTuple):
    """The inner transform's state over this process's rows of each parameter, and
    `sources`: for each leaf of `inner_state` (in flattening order) the index of the
    parameter whose rows it holds, or -1 for a leaf every process keeps whole (counters)."""

    inner_state: Any
    sources: Any


def average_gradients(bucket_bytes=None, *, check_every=None):
    """Average the updates (gradients) over processes: `fnad.distributed.pmean`, with the
    leaves sent in buckets of about `bucket_bytes` (default 32 MiB). The identity in one
    process.

    With `check_every=N` it also checks, at updates 1, N + 1, 2 N + 1, ..., that the
    `params` passed to `update` are the same on every process (`dist.check_replicas`: a
    hash of each leaf, one 16-byte all_gather), raising `ReplicasDivergedError` naming the
    first leaf that differs; under `jit` too.

    Returns:
      A `GradientTransformation` with an `EmptyState`.

    Example:
      opt = chain(average_gradients(), adam(1e-3))     # what data_parallel(adam(1e-3)) is
    """
    def init(params):
        return EmptyState()

    def update(updates, state, params=None):
        if check_every is not None and params is not None:
            updates = dist.check_replicas(params, every=check_every, what="params",
                                          through=updates)
        return dist.pmean(updates, bucket_bytes=bucket_bytes), state

    return GradientTransformation(init, update)


def data_parallel(inner, *, shard_state=False, bucket_bytes=None, check_every=100):
    """`inner` for data-parallel training: gradients are averaged over processes first.

    Each process computes the gradient of the mean loss on its own equal part of the global
    batch; their average is the gradient on the global batch, so every process applies the
    same update and the params stay identical. Put transforms that look at the whole
    gradient (clip_by_global_norm) inside `inner`: they see the averaged one. Every
    `check_every` updates (given `params`) the processes compare a checksum of the params
    and raise `ReplicasDivergedError` if their copies have drifted apart (for example
    params initialised with a different key on each process).

    Args:
      inner: the optimizer (`GradientTransformation`).
      shard_state: keep only 1/N of `inner`'s state on each process (ZeRO stage 1, see
        `shard_optimizer_state`).
      bucket_bytes: the largest message of the averaging (default 32 MiB).
      check_every: check that the params are the same on every process at updates 1,
        1 + check_every, ... (default 100; None: never). It costs a hash of the params on
        the host and one small all_gather.

    Returns:
      A `GradientTransformation`.

    Example:
      opt = data_parallel(adamw(1e-3))
      updates, opt_state = opt.update(grads, opt_state, params)   # grads of the local part
    """
    return chain(average_gradients(bucket_bytes, check_every=check_every),
                 shard_optimizer_state(inner) if shard_state else inner)


# ----------------------------------------------------------------------------- sharding

def _rows(rows, index, count):
    """(start, stop, block) of process `index`'s rows among `rows`, in blocks of `block`:
    every process but the last ones gets `block` rows."""
    block = -(-rows // count)
    start = min(index * block, rows)
    return start, min(start + block, rows), block


def _piece(x, index, count):
    """Process `index`'s rows of `x` (0-d leaves are kept whole, by every process)."""
    if not getattr(x, "ndim", 0):
        return x
    start, stop, _ = _rows(x.shape[0], index, count)
    return x[start:stop]


def _pieces(tree, index, count):
    return fnad.tree_map(lambda x: _piece(x, index, count), tree)


def _gather_rows(pieces, full_rows, count):
    """The whole leaves from every process's rows: each piece padded to the block size,
    all gathered in one collective, the padding cut off."""
    padded = []
    for p, rows in zip(pieces, full_rows):
        block = _rows(rows, 0, count)[2]
        extra = block - p.shape[0]
        padded.append(p if extra == 0 else
                      fnp.pad(p, [(0, extra)] + [(0, 0)] * (p.ndim - 1)))
    whole = dist.all_gather(padded, axis=0, tiled=True)
    return [w[:rows] for w, rows in zip(whole, full_rows)]


def _sources(inner, pieces):
    """For each leaf of `inner.init(pieces)`, the index of the parameter whose rows it holds
    (it is made from that parameter alone and has its shape), else -1; found by staging
    `inner.init` and following which inputs each output depends on."""
    p_leaves = fnad.tree_leaves(pieces)
    graph = fnad.make_graph(inner.init)(pieces)
    dep = {id(v): {k} for k, v in enumerate(graph.invars)}
    for e in graph.eqns:
        d = set().union(*(dep.get(id(v), set()) for v in e.invars()))
        for v in e.outvars:
            dep[id(v)] = d
    out = []
    for j, v in enumerate(graph.outvars):
        d = dep.get(id(v), set())
        shape = tuple(getattr(getattr(v, "aval", v), "shape", ()))
        if len(d) == 1:
            k = next(iter(d))
            if p_leaves[k].ndim and shape == tuple(p_leaves[k].shape):
                out.append(k)
                continue
        if shape and (d or any(shape == tuple(p.shape) for p in p_leaves if p.ndim)):
            raise ValueError(
                f"shard_optimizer_state: leaf {j} of the inner state ({shape}) is neither a "
                "per-parameter array made from one parameter (zeros_like, full_like, a "
                "tree_map of the params) nor a value every process can keep whole, so it "
                "cannot be split by rows. Shard only optimizers whose state is per "
                "parameter (sgd, adam, adamw, rmsprop, adagrad, lion).")
        out.append(-1)
    return np.asarray(out, np.int32)


def shard_optimizer_state(inner):
    """ZeRO stage 1: each process keeps `inner`'s state for 1/N of the rows of every
    parameter, so the optimizer's memory per process is divided by N.

    `update` takes the averaged gradients (put `average_gradients` in front, as
    `data_parallel(inner, shard_state=True)` does), runs `inner` on this process's rows,
    and gathers the updated rows from every process (one bucketed all_gather). 0-d
    parameters are updated whole by every process. The results equal `inner`'s without
    sharding for transforms that work coordinate by coordinate (sgd, momentum, adam,
    adamw, rmsprop, adagrad, lion, weight decay, masks). Transforms that decide from a
    whole leaf or the whole tree (apply_if_finite, clip_by_global_norm, lamb's trust ratio,
    zero_nans) combine every process's rows first (one small psum; `_shards.py`), so all
    processes decide alike, as without sharding up to rounding. Checkpoints: `gather_state`
    before saving, `scatter_state` after loading (any process count).

    Returns:
      A `GradientTransformation` with a `ShardedState`.

    Example:
      opt = chain(average_gradients(), clip_by_global_norm(1.0),
                  shard_optimizer_state(adamw(1e-3)))
    """
    def init(params):
        i, n = dist.process_index(), dist.process_count()
        pieces = _pieces(params, i, n)
        return ShardedState(inner.init(pieces), _sources(inner, pieces))

    def update(updates, state, params=None):
        if not isinstance(state, ShardedState):
            raise TypeError(
                f"shard_optimizer_state: the state is a {type(state).__name__}, not a "
                "ShardedState. A checkpoint read with fnad.load without like= gives plain "
                "tuples: load it with like={..., 'opt_state': gather_state(opt.init(params), "
                "params)} and then scatter_state (docs/distributed.md).")
        i, n = dist.process_index(), dist.process_count()
        names = ("updates", "params")
        if params is not None:
            check_structures("shard_optimizer_state", updates, params, names=names)
        leaves, treedef = fnad.tree_flatten(updates)
        mine = treedef.unflatten([_piece(u, i, n) for u in leaves])
        p_mine = None if params is None else _pieces(params, i, n)
        with rows_sharded():  # whole-leaf and whole-tree decisions agreed (_shards.py)
            new, inner_state = inner.update(mine, state.inner_state, p_mine)
        new_leaves = fnad.tree_leaves(new)
        if n > 1:
            split = [k for k, u in enumerate(leaves) if u.ndim]
            whole = _gather_rows([new_leaves[k] for k in split],
                                 [leaves[k].shape[0] for k in split], n)
            for k, w in zip(split, whole):
                new_leaves[k] = w
        return treedef.unflatten(new_leaves), ShardedState(inner_state, state.sources)

    return GradientTransformation(init, update)


def _map_sharded(state, fn):
    return fnad.tree_map(lambda s: fn(s) if isinstance(s, ShardedState) else s, state,
                         is_leaf=lambda s: isinstance(s, ShardedState))


def gather_state(state, params):
    """The optimizer state with every `ShardedState` made whole: each per-parameter leaf
    gathered from all processes (a collective: call it on every process). The result is
    the same on every process and does not depend on the process count: save it (once,
    with `fnad.distributed.save`) and resume with any number of processes through
    `scatter_state`. A state without sharding is returned as it is. To read it back, give
    `fnad.load` a `like=` tree with a whole state (`gather_state(opt.init(params),
    params)`): without it the states load as plain tuples (docs/distributed.md,
    "Checkpoints of a sharded optimizer state").

    Example:
      dist.save("run.npz", {"params": params, "opt_state": gather_state(opt_state, params)})
    """
    p_leaves = fnad.tree_leaves(params)
    n = dist.process_count()

    def whole(s):
        leaves, treedef = fnad.tree_flatten(s.inner_state)
        src = [int(k) for k in np.asarray(s.sources)]
        idx = [j for j, k in enumerate(src) if k >= 0]
        if n > 1 and idx:
            full = _gather_rows([leaves[j] for j in idx],
                                [p_leaves[src[j]].shape[0] for j in idx], n)
            for j, w in zip(idx, full):
                leaves[j] = w
        return ShardedState(treedef.unflatten(leaves), s.sources)

    return _map_sharded(state, whole)


def scatter_state(state, params):
    """This process's share of a state made whole by `gather_state` (for example read from
    a checkpoint written by a run with another number of processes). Leaves that are
    already shares are kept.

    A checkpoint is read with `fnad.load(path, like=...)`, where `like` holds a whole state
    of the same optimizer (`gather_state(opt.init(params), params)`; only its structure is
    used): without `like=` the NamedTuples of the state come back as plain tuples, which
    `update` refuses.

    Example:
      full = gather_state(opt.init(params), params)            # the structure to read
      st = fnad.load("run.npz", like={"params": params, "opt_state": full})
      opt_state = scatter_state(st["opt_state"], st["params"])
    """
    p_leaves = fnad.tree_leaves(params)
    i, n = dist.process_index(), dist.process_count()

    def share(s):
        leaves, treedef = fnad.tree_flatten(s.inner_state)
        for j, k in enumerate(int(k) for k in np.asarray(s.sources)):
            if k >= 0 and leaves[j].shape[0] == p_leaves[k].shape[0]:
                leaves[j] = _piece(leaves[j], i, n)
        return ShardedState(treedef.unflatten(leaves), s.sources)

    return _map_sharded(state, share)
