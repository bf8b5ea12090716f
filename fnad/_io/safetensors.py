"""Safetensors files for `fnad.save` / `fnad.load`, read and written by fnad itself.

The format (Hugging Face's, https://huggingface.co/docs/safetensors): an 8-byte
little-endian header length N, N bytes of JSON
`{NAME: {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
"__metadata__": {str: str}}` (padded with spaces), then the tensors' raw little-endian bytes,
offsets counted from the end of the header. It holds flat names only: a pytree's path
becomes a dotted name (`{"blocks": [{"w": a}]}` -> `"blocks.0.w"`) and back; a flat dict
of dotted names (a Hugging Face state dict) saves its names as they are.

Reading parses the header here (no package is needed, nothing is executed): a header that
lies about sizes, overlaps, leaves gaps, points past the file or is not the format's JSON
raises a CheckpointError naming the file, before any tensor is read.

Half precision (the rule): F16 and BF16 tensors load as float32, exactly (every half value
is a float32), unless the matching `like=` leaf is a float array, whose dtype they take
then (a float16 `like` keeps F16 tensors float16). float16 arrays save as F16 and
`ml_dtypes.bfloat16` arrays as BF16.
"""

import json
import os
import struct

import numpy as np

from .._core.backend import is_device_array
from .._core.devices import device_of, device_put
from .._core.tracer import Tracer
from .._core.tree import _node_handler, tree_flatten, tree_unflatten
from .format import MAX_DEPTH, CheckpointError, where

__all__ = ["write_safetensors", "read_safetensors", "named_leaves", "save_tree", "load_tree"]

MAX_HEADER_BYTES = 100_000_000  # the reference implementation's limit
# the format's dtype names and NumPy's little-endian dtypes (BF16: the raw uint16 bits)
DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8",
          "I32": "<i4", "I16": "<i2", "I8": "i1", "U64": "<u8", "U32": "<u4", "U16": "<u2",
          "U8": "u1", "BOOL": "?"}
_NAMES = {np.dtype(v): k for k, v in DTYPES.items() if k not in ("BF16",)}
_ENTRY_KEYS = {"dtype", "shape", "data_offsets"}


def _bad(fpath, detail):
    return CheckpointError(
        f"fnad.load: {fpath!r} is not a readable safetensors file: {detail}. The file is "
        "truncated, corrupted or not a safetensors file; fetch or write it again.")


# ----------------------------------------------------------------------------- names

def named_leaves(tree, who):
    """`[(dotted_name, leaf), ...]` in `tree_flatten` order (None subtrees hold nothing)."""
    out = []
    _walk(tree, (), out, who, 0)
    return out


def _walk(x, path, out, who, depth):
    h = None if isinstance(x, str) else _node_handler(x)
    if h is None:
        out.append((".".join(path), x))
        return
    if depth >= MAX_DEPTH:
        raise ValueError(f"{who}: the tree nests containers more than {MAX_DEPTH} levels deep.")
    children, aux = h[0](x)
    children = list(children)
    if isinstance(x, dict) and isinstance(aux, tuple) and len(aux) == len(children):
        names = aux
    elif isinstance(x, tuple) and hasattr(type(x), "_fields"):
        names = type(x)._fields
    else:
        names = range(len(children))
    for name, c in zip(names, children):
        s = str(name)
        if not isinstance(name, (str, int)) or isinstance(name, bool) or not s:
            raise TypeError(f"{who}: the key {name!r} at {where('.'.join(path))} cannot be part "
                            "of a safetensors name (dotted paths of string keys and list "
                            "positions); rename it or save to .npz.")
        _walk(c, path + (s,), out, who, depth + 1)


def _host_array(x, name, who):
    if isinstance(x, Tracer):
        raise TypeError(f"{who}: the leaf {name!r} is a traced value; save concrete arrays.")
    if not (isinstance(x, (np.ndarray, np.generic)) or is_device_array(x)):
        raise TypeError(f"{who}: the leaf {name!r} has type {type(x).__name__}; a safetensors "
                        "file holds arrays only. Make it an array or save to .npz, which "
                        "also keeps Python scalars and strings.")
    return x.get() if is_device_array(x) else np.asarray(x)


def _dtype_name(a, name, who):
    if a.dtype.name == "bfloat16":
        return "BF16"
    dt = a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype
    if dt in _NAMES:
        return _NAMES[dt]
    raise TypeError(f"{who}: the leaf {name!r} has dtype {a.dtype}, which safetensors cannot "
                    f"hold (it holds {', '.join(DTYPES)}); cast it or save to .npz.")


# ----------------------------------------------------------------------------- write

def write_safetensors(f, named, metadata=None, who="fnad.save"):
    """Write `[(name, array), ...]` to the open binary file `f`, in the given order."""
    header, arrays, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name, x in named:
        if name in header:
            raise ValueError(f"{who}: two tensors are named {name!r}.")
        a = _host_array(x, name, who)
        dt = _dtype_name(a, name, who)
        raw = np.ascontiguousarray(a).view(np.uint16) if dt == "BF16" else \
            np.ascontiguousarray(a, dtype=np.dtype(DTYPES[dt]))
        header[name] = {"dtype": dt, "shape": list(a.shape),
                        "data_offsets": [offset, offset + raw.nbytes]}
        arrays.append(raw)
        offset += raw.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    f.write(struct.pack("<Q", len(text)))
    f.write(text)
    for raw in arrays:
        f.write(raw.tobytes())


def save_tree(f, tree, who):
    """`fnad.save` of a pytree as safetensors: its leaves under their dotted paths."""
    write_safetensors(f, named_leaves(tree, who), {"format": "pt"}, who)


# ----------------------------------------------------------------------------- read

def _no_duplicates(fpath):
    def hook(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise _bad(fpath, "the header names a tensor twice")
        return dict(pairs)
    return hook


def _header(fh, fpath, size):
    if size < 8:
        raise _bad(fpath, f"it has {size} bytes, fewer than the 8 of the header length")
    (n,) = struct.unpack("<Q", fh.read(8))
    if n > MAX_HEADER_BYTES or 8 + n > size:
        raise _bad(fpath, f"the header declares {n} bytes, but the file has {size - 8} after "
                   f"the length (and a header may take at most {MAX_HEADER_BYTES})")
    raw = fh.read(n)
    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates(fpath))
    except RecursionError:
        raise _bad(fpath, "the header nests too deeply") from None
    except (UnicodeDecodeError, ValueError) as e:
        if isinstance(e, CheckpointError):
            raise
        raise _bad(fpath, f"the header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise _bad(fpath, "the header is not a JSON object")
    return header, 8 + n


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _check_entry(fpath, name, e, data_len):
    if not isinstance(e, dict) or set(e) != _ENTRY_KEYS:
        raise _bad(fpath, f"the entry of {name!r} is not {{dtype, shape, data_offsets}}")
    dt, shape, offs = e["dtype"], e["shape"], e["data_offsets"]
    if dt not in DTYPES:
        raise _bad(fpath, f"the tensor {name!r} has dtype {dt!r}; fnad reads "
                   f"{', '.join(DTYPES)}")
    if not isinstance(shape, list) or len(shape) > 64 or not all(map(_is_int, shape)):
        raise _bad(fpath, f"the tensor {name!r} has shape {shape!r}")
    if (not isinstance(offs, list) or len(offs) != 2 or not all(map(_is_int, offs))
            or offs[0] > offs[1] or offs[1] > data_len):
        raise _bad(fpath, f"the tensor {name!r} has data_offsets {offs!r} outside the "
                   f"{data_len} data bytes")
    nbytes = int(np.prod(shape, dtype=object)) * np.dtype(DTYPES[dt]).itemsize
    if nbytes != offs[1] - offs[0]:
        raise _bad(fpath, f"the tensor {name!r} of shape {shape} and dtype {dt} needs {nbytes} "
                   f"bytes, its offsets span {offs[1] - offs[0]}")


def _entries(header, fpath, data_len):
    meta = header.pop("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise _bad(fpath, "__metadata__ is not an object of strings")
    for name, e in header.items():
        if not name:
            raise _bad(fpath, "a tensor has an empty name")
        _check_entry(fpath, name, e, data_len)
    end = 0
    for name, e in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"]):
        if e["data_offsets"][0] != end:
            raise _bad(fpath, f"the tensor {name!r} starts at byte {e['data_offsets'][0]} of the "
                       f"data, not at {end} where the one before ends (overlap or gap)")
        end = e["data_offsets"][1]
    if end != data_len:
        raise _bad(fpath, f"the tensors take {end} bytes but the data has {data_len}")
    return header, meta


def read_safetensors(fpath):
    """`({name: numpy array (BF16 as its uint16 bits)}, entries, metadata)` of a file."""
    with open(fpath, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        header, start = _header(fh, fpath, size)
        entries, meta = _entries(header, fpath, size - start)
        arrays = {}
        for name, e in entries.items():
            b, end = e["data_offsets"]
            a = np.empty(e["shape"], np.dtype(DTYPES[e["dtype"]]))
            fh.seek(start + b)
            if fh.readinto(memoryview(a.reshape(-1)).cast("B")) != end - b:
                raise _bad(fpath, f"the data of {name!r} ends early (truncated)")
            arrays[name] = a
    return arrays, entries, meta


def _widen(a, dt, want=None):
    """The loaded array of a tensor of format dtype `dt` (the half-precision rule)."""
    if dt not in ("F16", "BF16"):
        return a
    if dt == "BF16":
        a = (a.astype(np.uint32) << 16).view(np.float32)
    if want is not None and want.kind == "f":
        return a if want == a.dtype else a.astype(want)
    return a if a.dtype == np.float32 else a.astype(np.float32)


def _nest(fpath, arrays):
    """Nested dicts from dotted names; a level keyed exactly "0".."n-1" becomes a list."""
    root = {}
    for name, a in arrays.items():
        parts = name.split(".")
        if "" in parts or len(parts) > MAX_DEPTH:
            raise _bad(fpath, f"the name {name!r} is not a dotted path of at most {MAX_DEPTH} "
                       "parts; load it with like= or read the names with safetensors")
        d = root
        for p in parts[:-1]:
            d = d.setdefault(p, {})
            if not isinstance(d, dict):
                raise _bad(fpath, f"{name!r} lies under another tensor's name (a prefix)")
        if parts[-1] in d:
            raise _bad(fpath, f"{name!r} is both a tensor and a prefix of others")
        d[parts[-1]] = a
    return _lists(root)


def _lists(d):
    if not isinstance(d, dict):
        return d
    out = {k: _lists(v) for k, v in d.items()}
    if out and sorted(out) == sorted(map(str, range(len(out)))):
        return [out[str(i)] for i in range(len(out))]
    return out


def load_tree(fpath, like, place):
    """`fnad.load` of a safetensors file (`place`: a parsed device or None)."""
    arrays, entries, _ = read_safetensors(fpath)
    if like is None:
        tree = _nest(fpath, {n: _widen(a, entries[n]["dtype"]) for n, a in arrays.items()})
        leaves, treedef = tree_flatten(tree)
        return tree_unflatten(treedef, [_put(a, place, None) for a in leaves])
    want = named_leaves(like, f"fnad.load({fpath!r}): like=")
    names = [n for n, _ in want]
    missing = [n for n in names if n not in arrays]
    extra = sorted(set(arrays) - set(names))
    if missing or extra:
        raise CheckpointError(f"fnad.load: {fpath!r} does not match like=: missing tensors "
                              f"{missing[:5]}, unexpected tensors {extra[:5]}.")
    out = []
    for name, ref in want:
        wdt = getattr(ref, "dtype", None)
        a = _widen(arrays[name], entries[name]["dtype"], np.dtype(wdt) if wdt else None)
        if wdt is not None and (a.shape != tuple(ref.shape) or a.dtype != wdt):
            raise CheckpointError(f"fnad.load: {fpath!r} does not match like= at {name!r}: "
                                  f"the file holds {a.dtype}{list(a.shape)}, like= "
                                  f"{np.dtype(wdt)}{list(ref.shape)}.")
        out.append(_put(a, place, ref))
    return tree_unflatten(tree_flatten(like)[1], out)


def _put(a, place, ref):
    if place is not None:
        return device_put(a, place)
    if ref is not None and is_device_array(ref):
        return device_put(a, device_of(ref))
    return a
