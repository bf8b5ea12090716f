"""The public collectives over pytrees, per-process keys and once-written checkpoints."""

import numpy as np

from .._core.backend import is_array
from .._core.tracer import Tracer
from .._core.tree import tree_flatten, tree_map, tree_unflatten
from .._io.checkpoint import save as _save_file
from .. import random
from ._agree import layout_of
from ._buckets import BUCKET_BYTES
from ._replicas import check_saved
from ._primitives import all_gather_p, broadcast_p, psum_p, psum_scatter_p
from ._world import barrier, process_count, process_index

__all__ = ["psum", "pmean", "all_gather", "psum_scatter", "broadcast", "process_key", "save"]


def _operand(x, name, path):
    if isinstance(x, Tracer) or (is_array(x) and not isinstance(x, np.generic)):
        dtype = x.dtype
    elif isinstance(x, (np.generic, bool, int, float, complex)):
        x = np.asarray(x)
        dtype = x.dtype
    else:
        raise TypeError(f"{name}: the leaf at {path} is a {type(x).__name__}, not an array or "
                        "a number; collectives move arrays (NumPy or CuPy) and numbers only.")
    if dtype.kind not in "biufc":
        raise TypeError(f"{name}: the leaf at {path} has dtype {dtype}, which collectives do "
                        "not move; convert it to a numeric dtype.")
    return x


def _apply(p, name, tree, bucket_bytes, prepare=None):
    """The collective primitive `p` over the leaves of `tree` (a tree without leaves comes
    back as it is), with the params `prepare(leaves, layout)` returns after checking them."""
    leaves, treedef = tree_flatten(tree)
    layout = layout_of(treedef)
    leaves = [_operand(x, name, path) for x, path in zip(leaves, layout.paths)]
    if not leaves:
        return tree
    params = prepare(leaves, layout) if prepare is not None else {}
    out = p(*leaves, **params, layout=layout, bucket_bytes=_bucket(bucket_bytes, name))
    return tree_unflatten(treedef, list(out))


def _bucket(bucket_bytes, name):
    if bucket_bytes is None:
        return BUCKET_BYTES
    if not isinstance(bucket_bytes, int) or bucket_bytes < 1:
        raise ValueError(f"{name}: bucket_bytes={bucket_bytes!r} must be a positive int (bytes "
                         "per message; the default is 32 MiB).")
    return bucket_bytes


def psum(tree, *, bucket_bytes=None):
    """The sum over processes of every leaf of `tree`; each process gets the whole sum.

    Leaves are sent in buckets of about `bucket_bytes` (32 MiB): one message per bucket,
    not per leaf. dtypes are kept (an int32 sum stays int32; float16 is summed in float32
    and rounded back); bool leaves are refused. In one process it is the identity. The
    VJP is psum of the cotangents.

    Args:
      tree: a pytree of arrays (NumPy or CuPy) or numbers, the same structure, shapes and
        dtypes on every process (else a CollectiveMismatchError on all of them).
      bucket_bytes: the largest message, in bytes.

    Returns:
      A pytree of the same structure.

    Example:
      total = dist.psum({"loss": loss_sum, "count": n_examples})
    """
    return _apply(psum_p, "psum", tree, bucket_bytes, _no_bools)


def _no_bools(leaves, layout):
    for x, p in zip(leaves, layout.paths):
        if x.dtype == np.bool_:
            raise TypeError(f"psum: the leaf at {p} is bool; a sum of booleans is not a bool. "
                            "Cast it (x.astype(np.int32)) to count the processes where it "
                            "holds, or all_gather it to see every process's value.")
    return {}


def pmean(tree, *, bucket_bytes=None):
    """The mean over processes of every leaf of `tree` (psum divided by `process_count()`).

    Floating leaves keep their dtype; integer leaves give floats (true division), as in
    JAX. The VJP is pmean of the cotangents. Averaging gradients: `pmean(grads)`.

    Example:
      grads = dist.pmean(fnad.grad(loss)(params, local_batch))
    """
    n = process_count()
    return tree_map(lambda s: _divide(s, n), psum(tree, bucket_bytes=bucket_bytes))


def _divide(s, n):
    if s.dtype.kind not in "fc":
        return s / n  # integers: a float mean, as JAX
    if n == 1:
        return s
    if isinstance(s, Tracer):
        return s / n
    s /= n  # with several processes psum's result is a new array of ours: no second copy
    return s


def _axes(leaves, layout, axis, name, extra):
    """Every leaf's axis, made non-negative; `extra` is 1 where the axis may be one past
    the leaf's last (all_gather's new axis)."""
    out = []
    for x, p in zip(leaves, layout.paths):
        nd = len(x.shape) + extra
        if not isinstance(axis, (int, np.integer)) or not -nd <= axis < nd:
            raise ValueError(f"{name}: axis {axis!r} is out of range for the leaf at {p}, of "
                             f"shape {tuple(x.shape)} (allowed: {-nd} to {nd - 1}).")
        out.append(int(axis) % nd)
    return tuple(out)


def all_gather(tree, axis=0, *, tiled=False, bucket_bytes=None):
    """Every process's leaves, gathered in process order (JAX's semantics).

    With `tiled=False` each leaf gains a new axis of size `process_count()` at `axis`
    (`x` of shape (3,) gives (N, 3) at axis 0); with `tiled=True` the copies are
    concatenated along the existing `axis` ((3,) gives (3 N,)). Every dtype travels,
    bool included. The VJP sums the cotangents over processes and keeps this process's
    slice (psum_scatter).

    Example:
      losses = dist.all_gather(loss)                 # shape (process_count(),)
      rows = dist.all_gather(x, tiled=True)          # the global batch, in process order
    """
    def prepare(leaves, layout):
        if tiled:
            for x, p in zip(leaves, layout.paths):
                if not x.shape:
                    raise ValueError(f"all_gather: tiled=True concatenates along an existing "
                                     f"axis, but the leaf at {p} is 0-d; use tiled=False.")
        axes = _axes(leaves, layout, axis, "all_gather", 0 if tiled else 1)
        return {"axes": axes, "tiled": bool(tiled)}

    return _apply(all_gather_p, "all_gather", tree, bucket_bytes, prepare)


def psum_scatter(tree, scatter_dimension=0, *, tiled=False, bucket_bytes=None):
    """The sum over processes, of which each process keeps one block (JAX's psum_scatter;
    a reduce-scatter).

    Along `scatter_dimension`, a leaf is cut into `process_count()` equal blocks; process p
    gets the sum of every process's block p. With `tiled=False` that axis must have size
    `process_count()` and is removed; with `tiled=True` its size must divide by it and
    shrinks by that factor. The VJP is all_gather.

    Example:
      my_rows = dist.psum_scatter(grad_rows, tiled=True)   # the sum, 1/N of the rows each
    """
    def prepare(leaves, layout):
        axes = _axes(leaves, layout, scatter_dimension, "psum_scatter", 0)
        n = process_count()
        for x, a, p in zip(leaves, axes, layout.paths):
            if x.dtype == np.bool_:
                raise TypeError(f"psum_scatter: the leaf at {p} is bool; cast it to an "
                                "integer.")
            size = x.shape[a]
            if (size % n) if tiled else (size != n):
                need = f"a multiple of {n}" if tiled else f"exactly {n}"
                raise ValueError(f"psum_scatter: the leaf at {p} has shape {tuple(x.shape)}; "
                                 f"with {n} processes and tiled={tiled}, its axis {a} must "
                                 f"have size {need} (one block per process).")
        return {"axes": axes, "tiled": bool(tiled)}

    return _apply(psum_scatter_p, "psum_scatter", tree, bucket_bytes, prepare)


def broadcast(tree, root=0, *, bucket_bytes=None):
    """Process `root`'s `tree` on every process (the others pass a tree of the same
    structure, shapes and dtypes; its values are ignored).

    Every dtype travels. The result on `root` may share memory with its input. The VJP
    sums the cotangents over processes into the root's input (zero on the others).

    Example:
      params = dist.broadcast(params)     # every process starts from process 0's init
    """
    n = process_count()
    if not isinstance(root, (int, np.integer)) or not 0 <= root < n:
        raise ValueError(f"broadcast: root={root!r} must be a process index, 0 to {n - 1}.")
    return _apply(broadcast_p, "broadcast", tree, bucket_bytes,
                  lambda leaves, layout: {"root": int(root)})


def process_key(key):
    """`key` folded with this process's index: a key that differs on every process (for
    dropout on each process's part of the batch) and is the same on every run.

    Example:
      key, sub = fnad.random.split(key)        # the same on every process
      dropout_key = dist.process_key(sub)      # different on each
    """
    return random.fold_in(key, process_index())


def save(path, tree, *, check=True):
    """Write a checkpoint once, from process 0 (atomically, as `fnad.save`), and wait until
    it is on disk on every process. Any number of processes can read it back with
    `fnad.load`. Call it on every process (it is a collective).

    Process 0's copy is what is written, so with `check` (the default) the processes first
    compare a checksum of `tree` (`check_replicas`: a hash of each leaf, one small
    all_gather) and every process raises `ReplicasDivergedError`, naming the first leaf
    that differs, instead of writing one process's copy of replicas that have drifted apart
    (the optimizer not wrapped in `fnad_optim.data_parallel`). A sharded optimizer state
    differs per process: save `fnad_optim.gather_state(state, params)`. `check=False` skips
    the comparison, for a tree whose values may differ (process 0's are written).

    Example:
      dist.save("run.npz", {"params": params, "opt_state": opt_state, "step": step})
    """
    if check:
        check_saved(tree)
    if process_index() == 0:
        _save_file(path, tree)
    barrier()
