"""Checkpoints: `fnad.save` / `fnad.load` for pytrees of arrays and Python scalars, no pickle.

The file is a plain, uncompressed `.npz` (a zip archive), readable without fnad:

  tree.json       {"format": "fnad-checkpoint", "version": 1, "tree": NODE}
  arr_0.npy ...   the array leaves in NumPy's .npy format, numbered in flattening order

NODE is one of
  {"array": "arr_3", "shape": [2, 3], "dtype": "float32"}    an array leaf
      (with "scalar": true for a NumPy scalar such as np.float32(1.0))
  {"int": 7}, {"float": 0.5}, {"bool": true}, {"str": "adam"}, {"complex": [re, im]}
      a Python scalar leaf; non-finite floats are written as {"float": "nan"}, "inf", "-inf"
  {"node": TYPE, "children": [NODE, ...]}                     a container, plus
      "keys": [KEY, ...] for dict-like nodes (in flattening order), "fields": [...] for
      namedtuples (for readers; the class defines them), "aux": VALUE for other
      registered pytree nodes' auxiliary data.

TYPE is "tuple", "list", "dict" or "None" for the builtins, else "module:QualName" of the
class. KEY and VALUE are JSON values, with tuples written {"tuple": [...]}, dicts
{"dict": [[k, v], ...]}, classes {"type": "module:QualName"} and non-string scalars tagged
as above. Reading it in plain Python:

  z = numpy.load("ckpt.npz")                      # allow_pickle stays False
  meta = json.loads(z["tree.json"]); w = z["arr_0"]

Rebuilding classes (the rule): a TYPE other than the builtins is looked up by its module
path among the modules already imported (fnad.load never imports a module named by a
file), and must be a namedtuple, a dataclass or a class registered with
`fnad.register_pytree_node`. Otherwise pass `like=` (a pytree with the expected
structure), whose classes are then used, or import the module first.
"""

import io
import json
import math
import os
import secrets
import sys
import zipfile

import numpy as np

from ._backend import is_cupy_array
from ._devices import device_of, device_put, parse_device
from ._tracer import Tracer
from ._tree import (PyTreeDef, _node_handler, _registry, register_dataclass, tree_flatten,
                    tree_unflatten)

__all__ = ["save", "load", "CheckpointError"]

FORMAT = "fnad-checkpoint"
VERSION = 1
_BUILTIN = {tuple: "tuple", list: "list", dict: "dict", type(None): "None"}
_BUILTIN_BY_NAME = {v: k for k, v in _BUILTIN.items()}


class CheckpointError(ValueError):
    """A checkpoint file is unreadable (truncated, corrupted) or does not match `like=`."""


# ----------------------------------------------------------------------------- type names

def _type_name(t):
    if t in _BUILTIN:
        return _BUILTIN[t]
    return f"{t.__module__}:{t.__qualname__}"


def _lookup_class(name, path):
    if name in _BUILTIN_BY_NAME:
        return _BUILTIN_BY_NAME[name]
    module, _, qual = name.partition(":")
    hint = ("pass like=<a pytree of the expected structure> to fnad.load, or import the "
            "module that defines it first")
    mod = sys.modules.get(module)
    if mod is None or not qual or "<locals>" in qual:
        raise CheckpointError(f"fnad.load: the checkpoint's node {path or '(root)'} has type "
                              f"{name}, which is not importable from a loaded module; {hint}.")
    obj = mod
    for part in qual.split("."):
        obj = getattr(obj, part, None)
    if not isinstance(obj, type):
        raise CheckpointError(f"fnad.load: type {name} (at {path or '(root)'}) was not found in "
                              f"module {module}; {hint}.")
    return obj


def _resolve_type(name, path):
    if name in _BUILTIN_BY_NAME:
        return _BUILTIN_BY_NAME[name]
    obj = _lookup_class(name, path)
    known = obj in _registry or (issubclass(obj, tuple) and hasattr(obj, "_fields"))
    if not known and hasattr(obj, "__dataclass_fields__"):
        register_dataclass(obj)
        known = True
    if not known:
        hint = "pass like=<a pytree of the expected structure> to fnad.load"
        raise CheckpointError(f"fnad.load: type {name} (at {path or '(root)'}) is not a "
                              "namedtuple, a dataclass or a registered pytree node; register it "
                              f"with fnad.register_pytree_node, or {hint}.")
    return obj


# ----------------------------------------------------------------------------- JSON values

def _enc_float(v):
    return v if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))


def _dec_float(v):
    return float(v) if isinstance(v, str) else v


def _enc_value(v, where):
    """A JSON value for aux data / dict keys (tuples, dicts and classes tagged)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else {"float": _enc_float(v)}
    if isinstance(v, tuple):
        return {"tuple": [_enc_value(x, where) for x in v]}
    if isinstance(v, list):
        return [_enc_value(x, where) for x in v]
    if isinstance(v, dict):
        return {"dict": [[_enc_value(k, where), _enc_value(x, where)] for k, x in v.items()]}
    if isinstance(v, type):
        return {"type": _type_name(v)}
    raise TypeError(f"fnad.save: {where} holds auxiliary data {v!r} of type "
                    f"{type(v).__name__}, which cannot be written as JSON; only None, bool, int, "
                    "float, str, tuples, lists, dicts and classes can. Make it a child (a leaf) "
                    "of the node instead.")


def _dec_value(v, path):
    if isinstance(v, list):
        return [_dec_value(x, path) for x in v]
    if isinstance(v, dict):
        if "tuple" in v:
            return tuple(_dec_value(x, path) for x in v["tuple"])
        if "dict" in v:
            return {_dec_value(k, path): _dec_value(x, path) for k, x in v["dict"]}
        if "float" in v:
            return _dec_float(v["float"])
        if "type" in v:
            return _lookup_class(v["type"], path)
        raise CheckpointError(f"fnad.load: unknown tagged value {v!r} at {path or '(root)'}")
    return v


# ----------------------------------------------------------------------------- describing trees

def _key_str(k):
    return f"[{k!r}]"


def _child_paths(node, n):
    if "keys" in node:
        return [_key_str(k) for k in node["keys"]]
    if "fields" in node:
        return [f".{f}" for f in node["fields"]]
    return [f"[{i}]" for i in range(n)]


def _describe_leaf(x, path, arrays):
    if isinstance(x, Tracer):
        raise TypeError(f"fnad.save: the leaf at {path or '(root)'} is a traced value; save "
                        "concrete arrays (outside the transformed function).")
    if isinstance(x, (np.ndarray, np.generic)) or is_cupy_array(x):
        if x.dtype.hasobject or x.dtype.kind == "V":
            raise TypeError(f"fnad.save: the leaf at {path or '(root)'} is an array of dtype "
                            f"{x.dtype}, which cannot be stored without pickle; convert it to a "
                            "numeric dtype.")
        name = f"arr_{len(arrays)}"
        arrays.append(x)
        node = {"array": name, "shape": list(x.shape), "dtype": x.dtype.str}
        if isinstance(x, np.generic):
            node["scalar"] = True
        return node
    if isinstance(x, bool):
        return {"bool": x}
    if isinstance(x, int):
        return {"int": x}
    if isinstance(x, float):
        return {"float": _enc_float(x)}
    if isinstance(x, complex):
        return {"complex": [_enc_float(x.real), _enc_float(x.imag)]}
    if isinstance(x, str):
        return {"str": x}
    raise TypeError(f"fnad.save: the leaf at {path or '(root)'} has type {type(x).__name__}; a "
                    "checkpoint holds arrays, Python scalars and strings in containers (dict, "
                    "list, tuple, None, namedtuples, dataclasses, registered pytree nodes).")


def _describe(x, path, arrays):
    """The JSON NODE of pytree `x`; array leaves are appended to `arrays`."""
    h = None if isinstance(x, str) else _node_handler(x)
    if h is None:
        return _describe_leaf(x, path, arrays)
    t = type(x)
    children, aux = h[0](x)
    children = list(children)
    node = {"node": _type_name(t)}
    if isinstance(x, dict) and isinstance(aux, tuple) and len(aux) == len(children) \
            and all(_is_key(k, x) for k in aux):
        node["keys"] = [_enc_value(k, f"the keys at {path or '(root)'}") for k in aux]
        if t is not dict:
            node["aux"] = _enc_value(aux, f"the {t.__name__} node at {path or '(root)'}")
    elif isinstance(x, tuple) and hasattr(t, "_fields"):
        node["fields"] = list(t._fields)
    elif aux is not None:
        node["aux"] = _enc_value(aux, f"the {t.__name__} node at {path or '(root)'}")
    paths = _child_paths(node, len(children))
    node["children"] = [_describe(c, path + p, arrays) for c, p in zip(children, paths)]
    return node


def _is_key(k, d):
    try:
        return k in d
    except TypeError:
        return False


def _show(node):
    """A short structure string of a JSON NODE, like PyTreeDef's repr."""
    if "node" not in node:
        if "array" in node:
            return f"{np.dtype(node['dtype']).name}{tuple(node['shape'])}"
        return next(iter(node))  # int, float, bool, str, complex
    kids = [_show(c) for c in node["children"]]
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


# ----------------------------------------------------------------------------- save

def _write_zip(f, meta, arrays):
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        zf.writestr("tree.json", json.dumps(meta, indent=1, allow_nan=False))
        for i, a in enumerate(arrays):
            host = a.get() if is_cupy_array(a) else np.asarray(a)
            with zf.open(f"arr_{i}.npy", "w", force_zip64=True) as member:
                _write_array(member, host)


def _write_array(member, host):
    np.lib.format.write_array(member, host, allow_pickle=False)


def _fsync_dir(dirname):
    try:
        fd = os.open(dirname, os.O_RDONLY)
    except OSError:  # e.g. Windows: directories cannot be opened
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def save(path, tree):
    """Write a pytree of arrays and Python scalars to `path`, atomically, without pickle.

    The data go to a temporary file next to `path`, which is flushed, fsynced and then
    renamed over `path`: a crash mid-write leaves any previous checkpoint at `path`
    intact. CuPy arrays are copied to the host and load as NumPy arrays unless
    `fnad.load(..., device="gpu")` or a `like=` tree on the GPU asks otherwise.

    Args:
      path: the file name (used as given; ".npz" is the customary suffix).
      tree: a pytree (dicts, lists, tuples, None, namedtuples such as optimizer states,
        dataclasses, registered nodes) of NumPy/CuPy arrays, NumPy scalars, Python
        scalars and strings. PRNG keys are arrays and need nothing special.

    The format (an .npz with a `tree.json` member) is described in `fnad._checkpoint`'s
    module docstring and in `fnad.load`.

    Example:
      fnad.save("ckpt.npz", {"params": params, "opt_state": opt_state, "step": 1000})
      state = fnad.load("ckpt.npz")
    """
    arrays = []
    meta = {"format": FORMAT, "version": VERSION, "tree": _describe(tree, "", arrays)}
    path = os.fspath(path)
    dirname = os.path.dirname(os.path.abspath(path))
    tmp = f"{path}.tmp{os.getpid()}-{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            _write_zip(f, meta, arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(dirname)


# ----------------------------------------------------------------------------- load

def _corrupt(path, detail):
    return CheckpointError(
        f"fnad.load: {path!r} is not a readable fnad checkpoint: {detail}. The file is "
        "truncated, corrupted or not written by fnad.save; load an earlier checkpoint "
        "(fnad.save never leaves a half-written file under the final name).")


def _read_meta(zf, path):
    try:
        meta = json.loads(zf.read("tree.json"))
    except KeyError:
        raise _corrupt(path, "it has no tree.json member") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or "tree" not in meta:
        raise _corrupt(path, "tree.json does not describe an fnad checkpoint")
    if meta.get("version") != VERSION:
        raise CheckpointError(f"fnad.load: {path!r} has checkpoint format version "
                              f"{meta.get('version')!r}; this fnad reads version {VERSION}. "
                              "Upgrade fnad to read it.")
    return meta


def _read_array(zf, node, path):
    name = node["array"]
    try:
        data = zf.read(f"{name}.npy")  # reading a whole member checks its CRC-32
        arr = np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
    except KeyError:
        raise _corrupt(path, f"the member {name}.npy is missing") from None
    if list(arr.shape) != list(node["shape"]) or arr.dtype != np.dtype(node["dtype"]):
        raise _corrupt(path, f"{name}.npy holds a {arr.dtype} array of shape {arr.shape}, but "
                             f"tree.json says {np.dtype(node['dtype'])} {tuple(node['shape'])}")
    return arr[()] if node.get("scalar") else arr


def _leaf_value(node, zf, fpath):
    if "array" in node:
        return _read_array(zf, node, fpath)
    (kind, v), = node.items()
    if kind == "float":
        return _dec_float(v)
    if kind == "complex":
        return complex(_dec_float(v[0]), _dec_float(v[1]))
    if kind in ("int", "bool", "str"):
        return v
    raise _corrupt(fpath, f"unknown leaf {node!r}")


def _build(node, path, zf, fpath, leaves):
    """The PyTreeDef of a stored NODE; leaf values are appended to `leaves`."""
    if "node" not in node:
        leaves.append(_leaf_value(node, zf, fpath))
        return PyTreeDef(None, None, ())
    t = _resolve_type(node["node"], path)
    kids = node["children"]
    paths = _child_paths(node, len(kids))
    children = tuple(_build(c, path + p, zf, fpath, leaves) for c, p in zip(kids, paths))
    if "aux" in node:
        aux = _dec_value(node["aux"], path)
    elif "keys" in node:
        aux = tuple(_dec_value(k, path) for k in node["keys"])
    else:
        aux = None
    return PyTreeDef(t, aux, children)


def _kind(node):
    return "array" if "array" in node else ("node" if "node" in node else "scalar")


def _compare(stored, want, path, errs):
    """Append the first structural difference between two NODEs to `errs`."""
    ks, kw = _kind(stored), _kind(want)
    where = path or "(root)"
    if ks != kw:
        errs.append(f"at {where} the checkpoint has {_show(stored)} but like= has {_show(want)}")
    elif ks == "array":
        if stored["shape"] != want["shape"] or np.dtype(stored["dtype"]) != np.dtype(want["dtype"]):
            errs.append(f"at {where} the checkpoint has a {_show(stored)} array but like= has "
                        f"a {_show(want)} array")
    elif ks == "node":
        same = (stored["node"] == want["node"] and stored.get("keys") == want.get("keys")
                and stored.get("aux") == want.get("aux")
                and len(stored["children"]) == len(want["children"]))
        if not same:
            errs.append(f"at {where} the checkpoint has {_show(stored)} but like= has "
                        f"{_show(want)}")
            return
        paths = _child_paths(want, len(want["children"]))
        for s, w, p in zip(stored["children"], want["children"], paths):
            _compare(s, w, path + p, errs)
            if errs:
                return


def _place(leaves, device, like_leaves):
    if device is not None:
        d = parse_device(device, fname="fnad.load")
        return [device_put(x, d) if isinstance(x, np.ndarray) else x for x in leaves]
    if like_leaves is None:
        return leaves
    out = []
    for x, ref in zip(leaves, like_leaves):
        if isinstance(x, np.ndarray) and is_cupy_array(ref):
            x = device_put(x, device_of(ref))
        out.append(x)
    return out


def load(path, like=None, device=None):
    """Read a checkpoint written by `fnad.save`.

    Args:
      path: the file.
      like: optional pytree with the expected structure (e.g. freshly initialised params
        and optimizer state). The checkpoint must match it: same containers, keys and
        classes, arrays of the same shapes and dtypes; a difference raises a
        CheckpointError naming the first differing path. The result is rebuilt with
        `like`'s classes, so classes that cannot be looked up by name still work.
      device: None, "cpu", "gpu" or "gpu:<id>": where to put the arrays. None means
        where the corresponding `like` leaves live, or "cpu" (NumPy) without `like`.

    Returns:
      The pytree. Arrays come back as arrays (NumPy scalars as NumPy scalars), Python
      scalars and strings as themselves, namedtuples/dataclasses/registered nodes as
      instances of their classes (see the module docstring for how classes are found).

    Raises:
      CheckpointError (a ValueError) for a truncated or corrupted file, or a mismatch
      with `like`; FileNotFoundError if there is no file.

    Example:
      state = fnad.load("ckpt.npz", like={"params": params, "opt_state": opt_state,
                                          "step": 0}, device="gpu")
    """
    fpath = os.fspath(path)
    want = None if like is None else _describe(like, "", [])
    try:
        with zipfile.ZipFile(fpath, "r") as zf:
            meta = _read_meta(zf, fpath)
            stored = meta["tree"]
            like_leaves = None
            if like is not None:
                errs = []
                _compare(stored, want, "", errs)
                if errs:
                    raise CheckpointError(
                        f"fnad.load: {fpath!r} does not match like=: {errs[0]}.\n"
                        f"  checkpoint: {_show(stored)}\n  like:       {_show(want)}")
                like_leaves, treedef = tree_flatten(like)
                leaves = []
                _collect_leaves(stored, zf, fpath, leaves)
            else:
                leaves = []
                treedef = _build(stored, "", zf, fpath, leaves)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError,
            KeyError, TypeError, UnicodeDecodeError) as e:
        if isinstance(e, (CheckpointError, FileNotFoundError, IsADirectoryError,
                          PermissionError)):
            raise
        raise _corrupt(fpath, f"{type(e).__name__}: {e}") from e
    return tree_unflatten(treedef, _place(leaves, device, like_leaves))


def _collect_leaves(node, zf, fpath, leaves):
    if "node" in node:
        for c in node["children"]:
            _collect_leaves(c, zf, fpath, leaves)
    else:
        leaves.append(_leaf_value(node, zf, fpath))
