"""Before any data moves, the processes agree on what they are about to exchange.

Each collective first gathers, from every process, an 8-byte digest of its call: which
collective, its parameters (with every setting that changes the wire format: the bucket
size, and for GPU leaves the transport options), its position in the sequence (#1, #2, ...),
the tree structure and every leaf's dtype, shape and device. Equal digests: the data
moves. Different ones: the processes gather the full descriptions and every process
raises the same `CollectiveMismatchError` naming both sides, instead of a hang, an MPI
error about truncated messages, or (worse) a sum of mismatched leaves.
"""

import hashlib

import numpy as np

from .._core.backend import is_device_array

__all__ = ["Layout", "layout_of", "agree", "describe", "mismatch_message",
           "CollectiveMismatchError"]


class CollectiveMismatchError(ValueError):
    """The processes called a collective with different trees, shapes, dtypes or
    parameters (or different collectives); raised on every process, before data moves."""


class Layout:
    """The static description of a collective's operand tree: its structure (as text) and
    the path of each leaf. A primitive parameter, so it is hashable and prints short."""

    __slots__ = ("tree", "paths", "_key")

    def __init__(self, tree, paths):
        self.tree = tree
        self.paths = tuple(paths)
        self._key = (tree, self.paths)

    def __eq__(self, other):
        return type(other) is Layout and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"<tree of {len(self.paths)} leaves>"

    def select(self, idx):
        """The layout of the leaves at positions `idx` (tangents of some leaves only)."""
        if len(idx) == len(self.paths):
            return self
        return Layout(f"{self.tree}, leaves {list(idx)}", [self.paths[i] for i in idx])


def _paths(treedef, prefix=""):
    """The path of every leaf of `treedef`, written as in Python: ['w'], [0], .mu."""
    if treedef.node_type is None:
        return [prefix or "(root)"]
    t, aux, out = treedef.node_type, treedef.aux, []
    for j, child in enumerate(treedef.children):
        if issubclass(t, dict) and isinstance(aux, tuple) and len(aux) == len(treedef.children):
            step = f"[{aux[j]!r}]"
        elif issubclass(t, tuple) and hasattr(t, "_fields"):
            step = f".{t._fields[j]}"
        else:
            step = f"[{j}]"
        out.extend(_paths(child, prefix + step))
    return out


_LAYOUTS = {}


def layout_of(treedef):
    """The Layout of a tree structure (cached: training steps reuse a few structures)."""
    lay = _LAYOUTS.get(treedef)
    if lay is None:
        if len(_LAYOUTS) > 4096:
            _LAYOUTS.clear()
        lay = _LAYOUTS[treedef] = Layout(repr(treedef), _paths(treedef))
    return lay


def _device(x):
    return "gpu" if is_device_array(x) else "cpu"


def describe(name, params, layout, leaves):
    """The call as lines of text: the collective and its tree, then one line per leaf."""
    head = f"{name}({', '.join(f'{k}={v!r}' for k, v in params)}) of {layout.tree}"
    return [head] + [f"{p}: {x.dtype}{list(x.shape)} on {_device(x)}"
                     for p, x in zip(layout.paths, leaves)]


_DIGESTS = {}


def _digest(name, params, layout, leaves):
    key = (name, params, layout, tuple((x.dtype.str, x.shape, _device(x)) for x in leaves))
    d = _DIGESTS.get(key)
    if d is None:
        if len(_DIGESTS) > 4096:
            _DIGESTS.clear()
        text = "\n".join(describe(name, params, layout, leaves)).encode()
        d = _DIGESTS[key] = int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(),
                                           "little", signed=True)
    return d


def agree(world, name, params=(), layout=None, leaves=()):
    """Check, on every process at once, that all are making the same collective call
    (also the world's barrier). `params` is a tuple of (name, value) pairs."""
    layout = layout if layout is not None else Layout("()", ())
    world.check_usable(name)
    world.calls += 1
    number = world.calls
    mine = np.array([_digest(name, params, layout, leaves), number], np.int64)
    every = np.empty((world.count, 2), np.int64)
    world.wait(world.comm.Iallgather(mine, every), f"{name} (collective #{number})")
    if (every == mine).all():
        return
    lines = describe(name, params, layout, leaves)
    texts = _gather_text(world, "\n".join([f"collective #{number}"] + lines))
    raise CollectiveMismatchError(mismatch_message(name, [t.split("\n") for t in texts]))


def _gather_text(world, text):
    data = np.frombuffer(text.encode(), np.uint8)
    sizes = np.empty(world.count, np.int64)
    world.wait(world.comm.Iallgather(np.array([data.size], np.int64), sizes), "agreement")
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    out = np.empty(int(sizes.sum()), np.uint8)
    world.wait(world.comm.Iallgatherv(data, [out, sizes, offsets, world.mpi.BYTE]),
               "agreement")
    return [out[o:o + s].tobytes().decode() for o, s in zip(offsets, sizes)]


def mismatch_message(name, descriptions):
    """The error text for the descriptions (lists of lines: the collective's number, its
    head line, one line per leaf) gathered from every process, in process order."""
    first = descriptions[0]
    q = next(i for i, d in enumerate(descriptions) if d != first)
    other = descriptions[q]
    if first[:2] != other[:2]:
        what = (f"process 0 is at its {first[0]}: {first[1]}\n"
                f"  process {q} is at its {other[0]}: {other[1]}")
    else:
        j = next((j for j in range(2, max(len(first), len(other)))
                  if j >= len(first) or j >= len(other) or first[j] != other[j]), 2)
        what = (f"process 0 passes {first[j] if j < len(first) else 'no such leaf'}\n"
                f"  process {q} passes {other[j] if j < len(other) else 'no such leaf'}")
    return (f"{name}: the processes disagree about collective call {first[0].split()[-1]}, "
            f"so no data was moved:\n  {what}\nEvery process must call the same collectives "
            "in the same order, on trees of the same structure, shapes and dtypes (look for "
            "a batch that does not split evenly across processes, or a branch that only "
            "some processes take).")
