"""Reading checkpoints for `fnad.load`: a checkpoint is data, read as untrusted input.

Nothing here imports a module, looks a class up by a name from the file, or calls anything
the file chooses. The file's tree.json is checked whole before any array is read (its
depth, every node's entries, the array members named arr_0, arr_1, ... in order, one per
array leaf); an array member is checked against its declared size before it is inflated and
read in bounded chunks. Without `like=` only builtin containers are rebuilt, plus the
classes the caller lists in `types=`; with `like=` the classes come from `like`.
"""

import dataclasses
import json
import math
import os
import re
import struct
import zipfile
import zlib

import numpy as np

from .format import (FORMAT, MAX_DEPTH, SAFE_VALUE_TYPES, VERSION, CheckpointError, child_paths,
                     show, type_name, where)
from .._core.backend import is_device_array
from .._core.devices import device_of, device_put
from .._core.tree import _node_handler, _registry

MAX_META_BYTES = 1 << 28  # tree.json of a tree of about a million leaves
_MAX_RATIO = 1100  # deflate inflates at most 1032-fold: a larger declared size is a zip bomb
_CHUNK = 1 << 24
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # a zip member's local file header
_NODE_ENTRIES = {"node", "children", "keys", "fields", "attrs", "aux", "order"}
_ARRAY_ENTRIES = {"array", "shape", "dtype", "scalar"}
_DTYPE_KINDS = "biufcSUmM"
_DTYPE_STR = re.compile(r"[<>|=][biufcSUmM][0-9]{1,10}(\[[0-9]*[a-zA-Z]+\])?")
_NONFINITE = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def corrupt(fpath, detail, path=None):
    at = "" if path is None else f" (at {where(path)})"
    return CheckpointError(
        f"fnad.load: {fpath!r} is not a readable fnad checkpoint: {detail}{at}. The file is "
        "truncated, corrupted or not written by fnad.save; load an earlier checkpoint "
        "(fnad.save never leaves a half-written file under the final name).")


def allow_list(types, fpath):
    """{stored name: class} for the classes the caller allows `fnad.load` to construct."""
    if isinstance(types, type):
        types = (types,)
    out = {}
    for t in types:
        if not isinstance(t, type):
            raise TypeError(f"fnad.load({fpath!r}): types= must list classes (namedtuples, "
                            f"dataclasses, registered pytree nodes), got {t!r}.")
        out[type_name(t)] = t
    return out


def _json_depth(v):
    depth, stack = 0, [(v, 1)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, (list, dict)):
            depth = max(depth, d)
            stack.extend((y, d + 1) for y in (x.values() if isinstance(x, dict) else x))
    return depth


def _is_num(v):
    return type(v) in (int, float) or (isinstance(v, str) and v in _NONFINITE)


def _dec_num(v):
    return _NONFINITE[v] if isinstance(v, str) else float(v)


class Reader:
    """One `fnad.load` call: the open archive, where arrays go, and the allowed classes."""

    def __init__(self, fh, zf, fpath, device, allowed):
        self.fh, self.zf, self.fpath, self.device, self.allowed = fh, zf, fpath, device, allowed

    def bad(self, detail, path=None):
        return corrupt(self.fpath, detail, path)

    # ------------------------------------------------------------------------- checking

    def _member(self, name):
        try:
            info = self.zf.getinfo(name)
        except KeyError:
            raise self.bad(f"the member {name} is missing") from None
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise self.bad(f"the member {name} uses compression method {info.compress_type}; "
                           "fnad checkpoints are stored uncompressed (or deflated)")
        if info.file_size > _MAX_RATIO * info.compress_size + 4096 or (
                info.compress_type == zipfile.ZIP_STORED
                and info.file_size != info.compress_size):
            raise self.bad(f"the member {name} declares {info.file_size} bytes from "
                           f"{info.compress_size} stored bytes, more than any compression "
                           "gives (a zip bomb)")
        return info

    def read_tree(self):
        """The checked tree.json NODE; every array member is present and no other."""
        names = self.zf.namelist()
        if "tree.json" not in names:
            raise self.bad("it has no tree.json member")
        info = self._member("tree.json")
        if info.file_size > MAX_META_BYTES:
            raise self.bad(f"tree.json declares {info.file_size} bytes, more than the "
                           f"{MAX_META_BYTES} a checkpoint's description may take")
        try:
            meta = json.loads(self.zf.read(info))
        except RecursionError:
            raise self.bad(f"tree.json nests containers more than {MAX_DEPTH} levels deep "
                           "(too deep to parse)") from None
        except ValueError as e:
            raise self.bad(f"tree.json is not valid JSON ({e})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT or "tree" not in meta:
            raise self.bad("tree.json does not describe an fnad checkpoint")
        if meta.get("version") != VERSION:
            raise CheckpointError(f"fnad.load: {self.fpath!r} has checkpoint format version "
                                  f"{meta.get('version')!r}; this fnad reads version "
                                  f"{VERSION}. Upgrade fnad to read it.")
        n = self._check_tree(meta["tree"])
        if len(set(names)) != len(names):
            raise self.bad("the archive holds two members of the same name")
        expected = [f"arr_{i}.npy" for i in range(n)]
        present = set(names)
        missing = [e for e in expected if e not in present]
        extra = sorted(present - {"tree.json"} - set(expected))
        if missing or extra:
            raise self.bad(f"tree.json describes {n} array leaves, but the archive "
                           + (f"lacks the members {missing[:3]}" if missing else
                              f"also holds {len(extra)} other members {extra[:3]}"))
        total, size = sum(i.compress_size for i in self.zf.infolist()), os.fstat(
            self.fh.fileno()).st_size
        if total > size:
            raise self.bad(f"its members take {total} bytes in a file of {size} bytes "
                           "(members that overlap: a zip bomb)")
        return meta["tree"]

    def _check_tree(self, root):
        """Check every NODE (iteratively: no recursion on the file's depth); the number of
        array leaves."""
        n_arrays, stack = 0, [(root, "", 0)]
        while stack:
            node, path, depth = stack.pop()
            if depth > MAX_DEPTH:
                raise self.bad(f"containers nest more than {MAX_DEPTH} levels deep", path)
            if not isinstance(node, dict) or not node:
                raise self.bad(f"a node must be a non-empty JSON object, got {node!r:.60}", path)
            if "node" not in node:
                n_arrays += self._check_leaf(node, path, n_arrays)
                continue
            kids = self._check_container(node, path)
            paths = child_paths(node, len(kids))
            stack.extend((c, path + p, depth + 1) for c, p in zip(kids[::-1], paths[::-1]))
        return n_arrays

    def _check_container(self, node, path):
        extra = set(node) - _NODE_ENTRIES
        name, kids = node["node"], node.get("children")
        if extra:
            raise self.bad(f"a container node has unknown entries {sorted(extra)}", path)
        if not isinstance(name, str) or not name or not isinstance(kids, list):
            raise self.bad("a container node needs a class name and a list of children", path)
        for entry in ("keys", "fields", "attrs", "order"):
            if entry in node and (not isinstance(node[entry], list)
                                  or len(node[entry]) != len(kids)):
                raise self.bad(f"'{entry}' must be a list of {len(kids)} entries, one per "
                               "child", path)
        for entry in ("fields", "attrs"):
            if not all(isinstance(f, str) for f in node.get(entry, ())):
                raise self.bad(f"'{entry}' must list field names (strings)", path)
        order = node.get("order")
        if order is not None and (not all(type(i) is int for i in order)
                                  or sorted(order) != list(range(len(kids)))):
            raise self.bad(f"'order' must be a permutation of 0..{len(kids) - 1}", path)
        allowed = {"tuple": {"node", "children"}, "list": {"node", "children"},
                   "None": {"node", "children"}, "dict": {"node", "children", "keys", "order"}}
        if name in allowed and (set(node) - allowed[name] or (name == "None" and kids)
                                or (name == "dict" and "keys" not in node)):
            raise self.bad(f"a malformed {name} node", path)
        if any(_json_depth(node.get(e)) > MAX_DEPTH for e in ("keys", "aux")):
            raise self.bad(f"keys or auxiliary data nest more than {MAX_DEPTH} levels deep", path)
        return kids

    def _check_leaf(self, node, path, index):
        if "array" not in node:
            (kind, v), = node.items() if len(node) == 1 else ((None, None),)
            ok = {"int": lambda: type(v) is int, "bool": lambda: type(v) is bool,
                  "str": lambda: type(v) is str, "float": lambda: _is_num(v),
                  "complex": lambda: isinstance(v, list) and len(v) == 2
                  and all(_is_num(x) for x in v)}.get(kind)
            if ok is None or not ok():
                raise self.bad(f"a malformed leaf {node!r:.80}", path)
            return 0
        name, shape, dtype = node.get("array"), node.get("shape"), node.get("dtype")
        if set(node) - _ARRAY_ENTRIES or name != f"arr_{index}":
            raise self.bad(f"array leaf number {index} must name the member 'arr_{index}' and "
                           f"hold only {sorted(_ARRAY_ENTRIES)}, got {node!r:.80}", path)
        if not isinstance(shape, list) or len(shape) > 64 or not all(
                type(d) is int and d >= 0 for d in shape):
            raise self.bad(f"the array's shape {shape!r:.60} is not a list of sizes", path)
        try:  # the form fnad.save writes (dtype.str), which NumPy parses without aliases
            dt = (np.dtype(dtype) if isinstance(dtype, str) and _DTYPE_STR.fullmatch(dtype)
                  else None)
        except TypeError:
            dt = None
        if dt is None or dt.kind not in _DTYPE_KINDS or dt.shape != () or not dt.itemsize:
            raise self.bad(f"the array's dtype {dtype!r:.40} is not a plain numeric, string "
                           "or datetime dtype", path)
        scalar = node.get("scalar", False)
        if type(scalar) is not bool or (scalar and shape):
            raise self.bad("'scalar' must be true for a shape [] array, or absent", path)
        return 1

    # ------------------------------------------------------------------------- comparing

    def compare(self, stored, want):
        """Raise, naming the first differing path, unless the stored NODE matches `want`."""
        err = _difference(stored, want, "")
        if err:
            raise CheckpointError(f"fnad.load: {self.fpath!r} does not match like=: {err}.\n"
                                  f"  checkpoint: {show(stored)}\n  like:       {show(want)}")

    # ------------------------------------------------------------------------- rebuilding

    def build(self, node, path=""):
        """The pytree of a checked NODE, with builtin containers and allowed classes only."""
        if "node" not in node:
            return self.leaf(node, path, None)
        paths = child_paths(node, len(node["children"]))
        kids = [self.build(c, path + p) for c, p in zip(node["children"], paths)]
        name = node["node"]
        if name in ("tuple", "list", "None"):
            return {"tuple": tuple, "list": list, "None": lambda _: None}[name](kids)
        keys = self.keys(node, path)
        cls = self.allowed.get(name)
        if cls is not None:
            return self.construct(cls, node, keys, kids, path)
        if keys is not None:
            return _ordered(keys, kids, node.get("order"))
        if "attrs" in node:
            return dict(zip(node["attrs"], kids))
        if "aux" not in node:
            return tuple(kids)
        raise CheckpointError(
            f"fnad.load: {self.fpath!r}: the node at {where(path)} is a {name}, a pytree node "
            "with auxiliary data; fnad.load constructs no class a file names. Pass "
            f"types=[{name.rpartition(':')[2]}] (the class) or like=<a pytree of the expected "
            "structure> to rebuild it.")

    def build_like(self, node, ref, path=""):
        """The pytree of a checked NODE that matches `ref`, with `ref`'s classes."""
        if "node" not in node:
            return self.leaf(node, path, ref)
        flatten, unflatten = _node_handler(ref)
        children, aux = flatten(ref)
        paths = child_paths(node, len(node["children"]))
        kids = [self.build_like(c, r, path + p)
                for c, r, p in zip(node["children"], children, paths)]
        if type(ref) is dict:
            return _ordered(aux, kids, node.get("order"))
        return unflatten(aux, kids)

    def keys(self, node, path):
        if "keys" not in node:
            return None
        keys = tuple(self.value(k, path) for k in node["keys"])
        try:
            unique = len(set(keys)) == len(keys)
        except TypeError:
            raise self.bad(f"a dict key is unhashable: {keys!r:.80}", path) from None
        if not unique:
            raise self.bad(f"a dict node repeats a key: {keys!r:.80}", path)
        return keys

    def value(self, v, path):
        """A key or aux value from its JSON form; a class only if builtin-safe or allowed."""
        if isinstance(v, list):
            return [self.value(x, path) for x in v]
        if not isinstance(v, dict):
            return v
        (tag, x), = v.items() if len(v) == 1 else ((None, None),)
        if tag == "tuple" and isinstance(x, list):
            return tuple(self.value(y, path) for y in x)
        if tag == "dict" and isinstance(x, list) and all(
                isinstance(p, list) and len(p) == 2 for p in x):
            try:
                return {self.value(k, path): self.value(y, path) for k, y in x}
            except TypeError:
                raise self.bad("an unhashable dict key in auxiliary data", path) from None
        if tag == "float" and x in _NONFINITE:
            return _NONFINITE[x]
        if tag == "type" and isinstance(x, str):
            cls = SAFE_VALUE_TYPES.get(x) or self.allowed.get(x)
            if cls is None:
                raise CheckpointError(
                    f"fnad.load: {self.fpath!r}: the node at {where(path)} names the class {x} "
                    "as a value (a default_factory, say); fnad.load calls no class a file "
                    "names unless it is listed in types=. Pass types=[...] with it, or "
                    "like=<a pytree of the expected structure>.")
            return cls
        raise self.bad(f"an unknown tagged value {v!r:.80}", path)

    def construct(self, cls, node, keys, kids, path):
        """An instance of the allowed class `cls` from its children."""
        name = node["node"]
        h = _registry.get(cls)
        try:
            if h is not None:
                aux = self.value(node["aux"], path) if "aux" in node else keys
                return h[1](aux, kids)
            if issubclass(cls, tuple) and hasattr(cls, "_fields"):
                names = list(cls._fields)
            elif dataclasses.is_dataclass(cls):
                names = [f.name for f in dataclasses.fields(cls) if f.init]
            else:
                raise TypeError("it is not a namedtuple, a dataclass or a registered node")
            stored = node.get("fields", node.get("attrs", names))
            if stored != names or len(kids) != len(names):
                raise TypeError(f"the checkpoint's fields {stored} differ from the class's "
                                f"{names}")
            if issubclass(cls, tuple):
                return cls(*kids)
            return cls(**dict(zip(names, kids)))
        except CheckpointError:
            raise
        except Exception as e:
            raise CheckpointError(f"fnad.load: {self.fpath!r}: rebuilding the {name} node at "
                                  f"{where(path)} (allowed by types=) failed: "
                                  f"{type(e).__name__}: {e}") from e

    def leaf(self, node, path, ref):
        if "array" not in node:
            (kind, v), = node.items()
            if kind == "float":
                return _dec_num(v)
            if kind == "complex":
                return complex(_dec_num(v[0]), _dec_num(v[1]))
            return v
        arr = self.read_array(node, path)
        if not isinstance(arr, np.ndarray):  # a NumPy scalar stays on the host
            return arr
        if self.device is not None:
            return device_put(arr, self.device)
        if ref is not None and is_device_array(ref):
            return device_put(arr, device_of(ref))
        return arr

    def read_array(self, node, path):
        """The array of a checked leaf NODE, its member checked before it is inflated."""
        name = node["array"] + ".npy"
        info = self._member(name)
        dt, shape = np.dtype(node["dtype"]), tuple(node["shape"])
        raw = np.empty(math.prod(shape) * dt.itemsize, np.uint8)
        if info.compress_type == zipfile.ZIP_STORED and not info.flag_bits & 1:
            fortran = self._read_stored(info, name, dt, shape, raw, path)
        else:
            with self.zf.open(info) as f:
                fortran = self._read_header(f, 0, info, name, dt, shape, path)
                self._fill(f.read, raw, name, path)
                if f.read(1):  # at the end: zipfile has checked the member's CRC-32
                    raise self.bad(f"{name} is longer than declared", path)
        arr = raw.view(dt) if raw.size else np.empty(0, dt)
        arr = arr.reshape(shape[::-1]).T if fortran else arr.reshape(shape)
        return arr[()] if node.get("scalar") else arr

    def _read_header(self, f, start, info, name, dt, shape, path):
        """Check a member's .npy header against tree.json and its declared size (before
        anything is inflated); whether the data are in Fortran order."""
        fmt = np.lib.format
        version = fmt.read_magic(f)
        if version not in ((1, 0), (2, 0)):
            raise self.bad(f"{name} has .npy format version {version}", path)
        read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        h_shape, fortran, h_dtype = read(f)
        if h_shape != shape or h_dtype != dt:
            raise self.bad(f"{name} holds a {h_dtype} array of shape {h_shape}, but tree.json "
                           f"says {dt} {shape}", path)
        size = f.tell() - start + math.prod(shape) * dt.itemsize
        if info.file_size != size:
            raise self.bad(f"{name} declares {info.file_size} bytes, but a {dt} array of shape "
                           f"{shape} takes {size}", path)
        return fortran

    def _fill(self, read, raw, name, path):
        view, pos = memoryview(raw), 0
        while pos < raw.size:
            chunk = read(min(_CHUNK, raw.size - pos))
            if not chunk:
                raise self.bad(f"{name} ends early", path)
            view[pos:pos + len(chunk)] = chunk
            pos += len(chunk)

    def _read_stored(self, info, name, dt, shape, raw, path):
        """An uncompressed member, read straight into `raw` (no copies) and CRC-checked."""
        f = self.fh
        f.seek(info.header_offset)
        head = f.read(_LOCAL_HEADER.size)
        if len(head) != _LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
            raise self.bad(f"the local header of {name} is damaged", path)
        name_len, extra_len = _LOCAL_HEADER.unpack(head)[-2:]
        start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
        f.seek(start)
        fortran = self._read_header(f, start, info, name, dt, shape, path)
        header_len = f.tell() - start
        view, pos = memoryview(raw), 0
        while pos < raw.size:
            got = f.readinto(view[pos:pos + _CHUNK])
            if not got:
                raise self.bad(f"{name} ends early", path)
            pos += got
        f.seek(start)
        crc = zlib.crc32(raw, zlib.crc32(f.read(header_len)))
        if crc != info.CRC:
            raise self.bad(f"{name} fails its CRC-32 check (its bytes are damaged)", path)
        return fortran


def _ordered(keys, kids, order):
    """A dict of `keys` (in flattening order) and `kids`, in the stored insertion `order`."""
    if order is None:
        return dict(zip(keys, kids))
    return {keys[i]: kids[i] for i in order}


def _kind(node):
    return "node" if "node" in node else next(iter(node))


def _difference(stored, want, path):
    """The first structural difference between two NODEs, or None."""
    ks, kw = _kind(stored), _kind(want)
    if ks != kw:
        return f"at {where(path)} the checkpoint has {show(stored)} but like= has {show(want)}"
    if ks == "array":
        if stored["shape"] != want["shape"] or np.dtype(stored["dtype"]) != np.dtype(want["dtype"]):
            return (f"at {where(path)} the checkpoint has a {show(stored)} array but like= has "
                    f"a {show(want)} array")
        return None
    if ks != "node":
        return None
    same = (stored["node"] == want["node"] and stored.get("keys") == want.get("keys")
            and stored.get("aux") == want.get("aux")
            and len(stored["children"]) == len(want["children"]))
    if not same:
        return f"at {where(path)} the checkpoint has {show(stored)} but like= has {show(want)}"
    paths = child_paths(want, len(want["children"]))
    for s, w, p in zip(stored["children"], want["children"], paths):
        err = _difference(s, w, path + p)
        if err:
            return err
    return None
