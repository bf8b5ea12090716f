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
      "keys": [KEY, ...] for dict-like nodes (in flattening order, i.e. sorted), with
      "order": [i, ...] (the children's insertion order) where it differs; "fields": [...]
      for namedtuples and "attrs": [...] for dataclasses (the field names); "aux": VALUE
      for other registered pytree nodes' auxiliary data.

TYPE is "tuple", "list", "dict" or "None" for the builtins, else "module:QualName" of the
class. KEY and VALUE are JSON values, with tuples written {"tuple": [...]}, dicts
{"dict": [[k, v], ...]}, classes {"type": "module:QualName"} and non-string scalars tagged
as above. Containers nest at most MAX_DEPTH (100) levels. Reading it in plain Python:

  z = numpy.load("ckpt.npz")                      # allow_pickle stays False
  meta = json.loads(z["tree.json"]); w = z["arr_0"]

Rebuilding classes (the rule): a checkpoint is data, and `fnad.load` never imports, looks
up or calls a class the file names. Without `like=` it rebuilds builtin containers only:
dict-like nodes and dataclasses come back as dicts, namedtuples and other nodes as tuples,
unless the caller lists the class in `types=`. With `like=` the classes are `like`'s.
"""

import dataclasses
import errno
import json
import os
import re
import secrets
import stat
import zipfile
from collections import defaultdict

import numpy as np

from .._core.backend import is_device_array
from .format import (FORMAT, MAX_DEPTH, VERSION, CheckpointError, enc_float, enc_value, child_paths,
                     type_name, where)
from .reader import Reader, allow_list, corrupt
from .safetensors import load_tree, save_tree
from .._core.devices import parse_device
from .._core.tracer import Tracer
from .._core.tree import _node_handler

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, so stale temporary files stay
    fcntl = None

__all__ = ["save", "load", "CheckpointError"]


# ----------------------------------------------------------------------------- describing trees

def _describe_leaf(x, path, arrays, who):
    if isinstance(x, Tracer):
        raise TypeError(f"{who}: the leaf at {where(path)} is a traced value; save concrete "
                        "arrays (outside the transformed function).")
    if isinstance(x, (np.ndarray, np.generic)) or is_device_array(x):
        if x.dtype.hasobject or x.dtype.kind == "V":
            raise TypeError(f"{who}: the leaf at {where(path)} is an array of dtype {x.dtype}, "
                            "which cannot be stored without pickle; convert it to a numeric "
                            "dtype.")
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
        return {"float": enc_float(x)}
    if isinstance(x, complex):
        return {"complex": [enc_float(x.real), enc_float(x.imag)]}
    if isinstance(x, str):
        return {"str": x}
    raise TypeError(f"{who}: the leaf at {where(path)} has type {type(x).__name__}; a "
                    "checkpoint holds arrays, Python scalars and strings in containers (dict, "
                    "list, tuple, None, namedtuples, dataclasses, registered pytree nodes).")


def _dict_keys(x, children, aux):
    """The keys of dict-like node `x` in its children's order, or None if not known."""
    keys = aux[1] if isinstance(x, defaultdict) and isinstance(aux, tuple) else aux
    if (isinstance(x, dict) and isinstance(keys, tuple) and len(keys) == len(children)
            and all(_is_key(k, x) for k in keys)):
        return keys
    return None


def _dataclass_names(x, children):
    """A dataclass's field names, if its children are its init fields (as registered)."""
    if not dataclasses.is_dataclass(x):
        return None
    names = [f.name for f in dataclasses.fields(x) if f.init]
    if len(names) == len(children) and all(getattr(x, n) is c for n, c in zip(names, children)):
        return names
    return None


def describe(x, path, arrays, who, depth=0):
    """The JSON NODE of pytree `x`; array leaves are appended to `arrays`."""
    h = None if isinstance(x, str) else _node_handler(x)
    if h is None:
        return _describe_leaf(x, path, arrays, who)
    if depth >= MAX_DEPTH:
        raise ValueError(f"{who}: the tree nests containers more than {MAX_DEPTH} levels deep "
                         f"(at {where(path)}); a checkpoint holds trees up to {MAX_DEPTH} deep. "
                         "Save a flatter tree (e.g. a dict of its leaves).")
    t = type(x)
    children, aux = h[0](x)
    children = list(children)
    node = {"node": type_name(t)}
    what = f"{who}: the {t.__name__} node at {where(path)}"
    keys = _dict_keys(x, children, aux)
    if keys is not None:
        node["keys"] = [enc_value(k, what) for k in keys]
        position = {k: i for i, k in enumerate(keys)}
        order = [position[k] for k in x]
        if order != sorted(order):
            node["order"] = order
        if t is not dict:
            node["aux"] = enc_value(aux, what)
    elif isinstance(x, tuple) and hasattr(t, "_fields"):
        node["fields"] = list(t._fields)
    elif aux is not None:
        node["aux"] = enc_value(aux, what)
    elif (names := _dataclass_names(x, children)) is not None:
        node["attrs"] = names
    paths = child_paths(node, len(children))
    node["children"] = [describe(c, path + p, arrays, who, depth + 1)
                        for c, p in zip(children, paths)]
    return node


def _is_key(k, d):
    try:
        return k in d
    except TypeError:
        return False


# ----------------------------------------------------------------------------- save

def _write_zip(f, meta, arrays):
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        zf.writestr("tree.json", json.dumps(meta, indent=1, allow_nan=False))
        for i, a in enumerate(arrays):
            host = a.get() if is_device_array(a) else np.asarray(a)
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


def _temp_pattern(target):
    return re.compile(re.escape(os.path.basename(target)) + r"\.tmp\d+-[0-9a-f]{8}")


def _create_temp(target):
    """A new temporary file next to `target`, locked (flock) while this save writes it."""
    while True:
        tmp = f"{target}.tmp{os.getpid()}-{secrets.token_hex(4)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                     0o666)
        if fcntl is None:
            return fd, tmp
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits only for a cleaner that locked it first
        except OSError:  # a file system without locks: nothing removes our file either
            return fd, tmp
        if os.fstat(fd).st_nlink:
            return fd, tmp
        os.close(fd)  # a cleaner removed it between our create and lock: take a new name


def _remove_stale_temps(target):
    """Remove the temporary files of earlier saves to `target` that were killed mid-write:
    those whose lock nobody holds (a live writer holds its lock until it renames)."""
    if fcntl is None:
        return
    dirname = os.path.dirname(target)
    pattern = _temp_pattern(target)
    try:
        names = [n for n in os.listdir(dirname) if pattern.fullmatch(n)]
    except OSError:
        return
    for name in names:
        p = os.path.join(dirname, name)
        try:
            fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os.unlink(p)
        except OSError:  # locked by a live writer, or already gone
            pass
        finally:
            os.close(fd)


def _unwritable(e, path, target):
    """`e` (raised creating the temporary file next to `target`) about `path` instead."""
    folder = os.path.dirname(target) or "."
    if e.errno == errno.ENOENT:
        why = (f"the folder {folder!r} does not exist; create it first "
               f"(os.makedirs({folder!r}, exist_ok=True))")
    elif e.errno == errno.ENOTDIR:
        why = f"a part of {folder!r} is a file, not a folder"
    else:
        why = (f"{e.strerror} (save writes a temporary file in {folder!r} and renames it over "
               "the path, so that folder must be writable)")
    return type(e)(e.errno, f"fnad.save: cannot write {path!r}: {why}", path)


def save(path, tree, *, format=None):
    """Write a pytree of arrays and Python scalars to `path`, atomically, without pickle.

    The data go to a temporary file next to `path`, which is flushed, fsynced and then
    renamed over `path`: a crash mid-write leaves any previous checkpoint at `path`
    intact, and the next save to `path` removes what a killed writer left behind. A
    symlink at `path` is followed (its target is replaced, the link stays), and an
    existing file's permissions are kept. CuPy arrays are copied to the host and load as
    NumPy arrays unless `fnad.load(..., device="gpu")` or a `like=` tree on the GPU asks
    otherwise.

    Args:
      path: the file name (used as given; ".npz" is the customary suffix). A name ending
        in ".safetensors" writes Hugging Face's safetensors format instead.
      tree: a pytree (dicts, lists, tuples, None, namedtuples such as optimizer states,
        dataclasses, registered nodes) of NumPy/CuPy arrays, NumPy scalars, Python
        scalars and strings, nested at most 100 containers deep. PRNG keys are arrays and
        need nothing special. Dict key order is kept.
      format: "npz" or "safetensors"; default by the suffix of `path`. A safetensors file
        holds arrays only, under the dotted paths of the tree ("blocks.0.attn.q.w"); None
        subtrees hold nothing (`fnad._io.safetensors` states the rules).

    The format (an .npz with a `tree.json` member) is described in `fnad._io.checkpoint`'s
    module docstring and in `fnad.load`.

    Example:
      fnad.save("ckpt.npz", {"params": params, "opt_state": opt_state, "step": 1000})
      state = fnad.load("ckpt.npz", like={"params": params, "opt_state": opt_state,
                                          "step": 0})
    """
    path = os.fspath(path)
    who = f"fnad.save({path!r})"
    if _format(path, format, "fnad.save") == "safetensors":
        _write_atomic(path, lambda f: save_tree(f, tree, who))
        return
    arrays = []
    meta = {"format": FORMAT, "version": VERSION, "tree": describe(tree, "", arrays, who)}
    _write_atomic(path, lambda f: _write_zip(f, meta, arrays))


def _format(path, format, who):
    if format is None:
        return "safetensors" if path.endswith(".safetensors") else "npz"
    if format not in ("npz", "safetensors"):
        raise ValueError(f"{who}: format={format!r}; use \"npz\" or \"safetensors\" (or None "
                         "to choose by the file's suffix).")
    return format


def _write_atomic(path, write):
    """Run `write(f)` on a temporary file next to `path`, then rename it over `path`."""
    target = os.path.realpath(path)  # through symlinks: replace the file, keep the link
    if os.path.isdir(target):
        raise IsADirectoryError(errno.EISDIR, f"fnad.save: {path!r} is a folder; give a file "
                                f"name in it, e.g. {os.path.join(path, 'ckpt.npz')!r}", path)
    _remove_stale_temps(target)
    try:
        fd, tmp = _create_temp(target)
    except OSError as e:  # it names the temporary file: say it about the user's path
        raise _unwritable(e, path, target) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            _keep_mode(f.fileno(), target)
            os.fsync(f.fileno())
            if fcntl is not None:  # rename while the lock keeps cleaners away
                os.replace(tmp, target)
        if fcntl is None:  # Windows cannot rename an open file
            os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(os.path.dirname(target))


def _keep_mode(fd, target):
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:  # no file yet: the default (0o666 less the umask)
        return
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)


# ----------------------------------------------------------------------------- load

def load(path, like=None, device=None, *, types=(), format=None):
    """Read a checkpoint written by `fnad.save`.

    A checkpoint is data: loading one imports nothing and calls nothing the file names, and
    a hostile or corrupted file raises a CheckpointError naming it.

    Args:
      path: the file.
      like: optional pytree with the expected structure (e.g. freshly initialised params
        and optimizer state). The checkpoint must match it: same containers, keys and
        classes, leaves of the same kind (array, int, float, bool, str, complex), arrays
        of the same shapes and dtypes; a difference raises a CheckpointError naming the
        first differing path. The result is rebuilt with `like`'s classes (optimizer
        states come back as their NamedTuples).
      device: None, "cpu", "gpu" or "gpu:<id>": where to put the arrays. None means
        where the corresponding `like` leaves live, or "cpu" (NumPy) without `like`.
      format: "npz" or "safetensors"; default by the suffix of `path` (".safetensors").
        A safetensors file comes back as nested dicts of its dotted names (a level keyed
        "0".."n-1" as a list), or in `like`'s structure, matched by dotted path;
        half-precision tensors widen to float32 unless `like` asks for another float
        dtype (`fnad._io.safetensors` states the rules).
      types: without `like`, the classes (namedtuples, dataclasses, registered pytree
        nodes) that may be rebuilt, matched by their "module:QualName" in the file;
        classes a file names as values (a defaultdict's factory) must be listed too.

    Returns:
      The pytree. Arrays come back as arrays (NumPy scalars as NumPy scalars), Python
      scalars and strings as themselves. Without `like`, dicts, lists, tuples and None
      as themselves (dict key order as saved); a class not in `types` comes back as a
      plain container: a dict for dict-like nodes (OrderedDict, defaultdict) and
      dataclasses (keyed by field name), a tuple for namedtuples and other nodes.

    Raises:
      CheckpointError (a ValueError) for a truncated, corrupted or hostile file, a node
      with auxiliary data whose class is not in `types`, or a mismatch with `like`;
      FileNotFoundError if there is no file.

    Example:
      state = fnad.load("ckpt.npz", like={"params": params, "opt_state": opt_state,
                                          "step": 0}, device="gpu")
      raw = fnad.load("ckpt.npz")  # plain dicts and tuples, whatever the file says
    """
    fpath = os.fspath(path)
    allowed = allow_list(types, fpath)
    place = None if device is None else parse_device(device, fname="fnad.load")
    if _format(fpath, format, "fnad.load") == "safetensors":
        return load_tree(fpath, like, place)
    want = None if like is None else describe(like, "", [], f"fnad.load({fpath!r}): like=")
    try:
        with open(fpath, "rb") as fh, zipfile.ZipFile(fh, "r") as zf:
            reader = Reader(fh, zf, fpath, place, allowed)
            stored = reader.read_tree()
            if like is None:
                return reader.build(stored)
            reader.compare(stored, want)
            return reader.build_like(stored, like)
    except (CheckpointError, FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, KeyError,
            TypeError, IndexError, OverflowError, NotImplementedError, RecursionError) as e:
        raise corrupt(fpath, f"{type(e).__name__}: {e}") from e
