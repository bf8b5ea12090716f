"""What `fnad.save` writes and `fnad.load` reads alike: the error class, limits, type names,
the JSON encoding of scalars, keys and auxiliary data, and the structure strings of errors.
The format itself is described in `fnad._io.checkpoint`'s module docstring."""

import math

import numpy as np

FORMAT = "fnad-checkpoint"
VERSION = 1
MAX_DEPTH = 100  # containers nested deeper than this are refused by save and load alike
BUILTIN = {tuple: "tuple", list: "list", dict: "dict", type(None): "None"}
# Classes a file may name as a value (a defaultdict's default_factory, say) without the
# caller's say-so: calling them makes an empty container or a zero.
SAFE_VALUE_TYPES = {**{v: k for k, v in BUILTIN.items() if k is not type(None)},
                    **{f"builtins:{t.__name__}": t
                       for t in (int, float, complex, bool, str, bytes, set, frozenset)}}


class CheckpointError(ValueError):
    """A checkpoint file is unreadable (truncated, corrupted, hostile) or does not match
    `like=`; the message names the file."""


def type_name(t):
    """The name a checkpoint stores for class `t`: "dict", ... or "module:QualName"."""
    if t in BUILTIN:
        return BUILTIN[t]
    return f"{t.__module__}:{t.__qualname__}"


def where(path):
    return path or "(root)"


# ----------------------------------------------------------------------------- JSON values

def enc_float(v):
    return v if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))


def enc_value(v, what):
    """A JSON value for aux data / dict keys (tuples, dicts and classes tagged)."""
    if v is None or isinstance(v, (bool, str, int)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else {"float": enc_float(v)}
    if isinstance(v, tuple):
        return {"tuple": [enc_value(x, what) for x in v]}
    if isinstance(v, list):
        return [enc_value(x, what) for x in v]
    if isinstance(v, dict):
        return {"dict": [[enc_value(k, what), enc_value(x, what)] for k, x in v.items()]}
    if isinstance(v, type):
        return {"type": type_name(v)}
    raise TypeError(f"{what} holds auxiliary data {v!r} of type {type(v).__name__}, which "
                    "cannot be written as JSON; only None, bool, int, float, str, tuples, "
                    "lists, dicts and classes can. Make it a child (a leaf) of the node instead.")


# ----------------------------------------------------------------------------- describing

def child_paths(node, n):
    """The path suffixes of a NODE's children: `['key']`, `.field` or `[i]`."""
    if "keys" in node:
        return [f"[{k!r}]" for k in node["keys"]]
    names = node.get("fields", node.get("attrs"))
    if names is not None:
        return [f".{f}" for f in names]
    return [f"[{i}]" for i in range(n)]


def show(node):
    """A short structure string of a (valid) JSON NODE, like PyTreeDef's repr."""
    if "node" not in node:
        if "array" in node:
            return f"{np.dtype(node['dtype']).name}{tuple(node['shape'])}"
        return next(iter(node))  # int, float, bool, str, complex
    kids = [show(c) for c in node["children"]]
    t = node["node"]
    if t == "tuple":
        return "(" + ", ".join(kids) + ("," if len(kids) == 1 else "") + ")"
    if t == "list":
        return "[" + ", ".join(kids) + "]"
    if t == "None":
        return "None"
    if "keys" in node:
        inner = ", ".join(f"{k!r}: {v}" for k, v in zip(node["keys"], kids))
        return "{" + inner + "}" if t == "dict" else f"{t.split(':')[-1]}({{{inner}}})"
    return f"{t.split(':')[-1]}(" + ", ".join(kids) + ")"
