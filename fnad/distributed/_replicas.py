"""Replicas that must be equal, checked: in data-parallel training every process holds the
same parameters, and `save` writes process 0's copy. A process that steps on its own
gradient (the optimizer not wrapped in `fnad_optim.data_parallel`) drifts away silently, so
the copies are compared by checksum: by `save` before it writes, by `data_parallel` every
`check_every` updates, and by `check_replicas` where the user asks.

A check hashes each leaf's bytes on the host (blake2b, 8 bytes; NaNs and signed zeros
compare by their bits, as replicas that are really equal do) and exchanges one 16-byte
all_gather: the hash of the structure and of all the leaves together. Only where those
differ does a second all_gather of every leaf's hash name the first leaf that differs. Every
process then raises the same `ReplicasDivergedError`, before anything is written.

The check is a primitive that passes some leaves through unchanged (`pass_through`), so
that under `jit` it stays in the program (its result is used) and runs with the concrete
values each time the program runs; `every` skips all but each `every`-th call, counted per
tree structure, name and `every` (every process makes the same calls, so they skip alike).
"""

import hashlib

import numpy as np

from .._core.backend import is_device_array
from .._core.rules import defabstract_eval, defbatch, defjvp_all, defvjp_all
from .._core.tree import tree_flatten, tree_unflatten
from .._core.tracer import primitive
from ._agree import Layout, layout_of
from ._buckets import BUCKET_BYTES
from ._primitives import all_gather_p
from ._world import world

__all__ = ["ReplicasDivergedError", "check_replicas", "check_saved", "leaf_hashes"]


_VECTOR = Layout("checksums", ["(root)"])


class ReplicasDivergedError(RuntimeError):
    """Leaves that every process should hold alike differ between processes."""


def _hash(text_or_bytes):
    return int.from_bytes(hashlib.blake2b(text_or_bytes, digest_size=8).digest(), "little",
                          signed=True)


def _leaf_bytes(x):
    if is_device_array(x):
        x = x.get()
    if isinstance(x, (str, bytes)) or x is None:
        return repr(x).encode()
    a = np.ascontiguousarray(np.asarray(x))
    return f"{a.dtype.str}{a.shape}".encode() + a.view(np.uint8).tobytes()


def leaf_hashes(leaves):
    """An int64 hash of each leaf's dtype, shape and bytes (strings and None by repr)."""
    return np.array([_hash(_leaf_bytes(x)) for x in leaves], np.int64)


def _gather(x):
    """Every process's int64 vector `x`, stacked (an all_gather)."""
    (out,) = all_gather_p(x, layout=_VECTOR, bucket_bytes=BUCKET_BYTES, axes=(0,), tiled=False)
    return np.asarray(out)


def _compare(w, what, layout, leaves):
    """Raise ReplicasDivergedError on every process where the leaves differ between them."""
    hashes = leaf_hashes(leaves)
    mine = np.array([_hash(layout.tree.encode()), _hash(hashes.tobytes())], np.int64)
    every = _gather(mine)
    if (every == mine).all():
        return
    if (every[:, 0] != mine[0]).any():
        raise ReplicasDivergedError(
            f"fnad.distributed: {what} has a different structure on different processes "
            f"(this process: {layout.tree}); every process must pass the same tree.")
    each = _gather(hashes)
    j = int(np.argmax((each != each[0]).any(axis=0)))
    q = int(np.argmax(each[:, j] != each[0, j]))
    raise ReplicasDivergedError(
        f"fnad.distributed: the processes hold different values of {what}, first at the leaf "
        f"{layout.paths[j]} (process 0 and process {q} differ), where every process should "
        "hold the same copy (replicas). The usual cause: the optimizer is not wrapped in "
        "fnad_optim.data_parallel(...), so each process steps on its own gradient and the "
        "copies drift apart; or each process initialised the params with its own key or "
        "seed (start from dist.broadcast(params)). save writes process 0's copy only, so "
        "nothing was written; save per-process values with fnad.save under a per-process "
        "name instead.")


def _impl(*xs, n_pass, every, what, layout):
    w = world()
    if not w.local:
        key = (what, layout, every)
        calls = w.replica_checks[key] = w.replica_checks.get(key, 0) + 1
        if (calls - 1) % every == 0:
            _compare(w, what, layout, xs[n_pass:])
    return tuple(xs[:n_pass])


# The passed-through leaves are the identity for every transform; the checked ones are
# compared as they are (under vmap with their batch axis).
_check_p = primitive(_impl, "check_replicas", multiple_results=True)
defabstract_eval(_check_p, lambda *avals, n_pass, **kw: tuple(avals[:n_pass]))
defvjp_all(_check_p, lambda g, ans, *xs, n_pass, **kw: tuple(g) + (None,) * (len(xs) - n_pass))
defjvp_all(_check_p, lambda ts, ans, *xs, n_pass, **kw: tuple(ts[:n_pass]))
defbatch(_check_p, lambda args, dims, n_pass, **kw: (
    list(_check_p(*args, n_pass=n_pass, **kw)), tuple(dims[:n_pass])))


def check_replicas(tree, *, every=1, what="the tree", through=None):
    """Raise `ReplicasDivergedError` on every process unless `tree` is bit for bit the same
    on all of them (a collective: call it on every process; nothing in one process).

    Cheap: each leaf is hashed on the host and one 16-byte all_gather compares the hashes.
    It is a primitive: under `jit` it runs with the values each time the program runs, as
    long as its result is used.

    Args:
      tree: the pytree every process should hold alike (data-parallel params).
      every: check only at every `every`-th call (1, 1 + every, ...), counted for each
        `what`, tree structure and `every`.
      what: how the error names `tree`.
      through: a pytree to return instead of `tree` (one that is used afterwards, so that
        `jit` keeps the check), passed through unchanged.

    Returns:
      `tree`, or `through` when given.

    Example:
      params = dist.check_replicas(params, every=1000, what="params")
    """
    if not isinstance(every, int) or every < 1:
        raise ValueError(f"check_replicas: every={every!r} must be a positive int.")
    through = tree if through is None else through
    if world().local:
        return through
    p_leaves, p_def = tree_flatten(through)
    leaves, treedef = tree_flatten(tree)
    out = _check_p(*p_leaves, *leaves, n_pass=len(p_leaves), every=every, what=what,
                   layout=layout_of(treedef))
    return tree_unflatten(p_def, list(out))


def check_saved(tree):
    """`save`'s check, before process 0 writes `tree` (strings and None leaves included)."""
    w = world()
    if not w.local:
        leaves, treedef = tree_flatten(tree)
        _compare(w, "the tree passed to save", layout_of(treedef), leaves)
