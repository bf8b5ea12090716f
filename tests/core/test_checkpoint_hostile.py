"""fnad.load on hand-crafted hostile files: it constructs, imports and calls nothing a file
names, refuses zip bombs before inflating them, and every failure is a CheckpointError that
names the file. Also the writer's side: killed writers' temp files, permissions, symlinks,
dict order, depth."""

import dataclasses
import io
import json
import os
import struct
import sys
import tracemalloc
import zipfile
from collections import defaultdict

import numpy as np
import pytest

import fnad
import fnad._io.reader as ckload
from fnad._io.checkpoint import CheckpointError

CALLS = []


@dataclasses.dataclass
class Trap:
    """A dataclass whose construction has a side effect."""

    x: object

    def __post_init__(self):
        CALLS.append(self.x)


def npy(arr):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=False)
    return buf.getvalue()


def craft(path, tree, members=(), compression=zipfile.ZIP_STORED, meta=None):
    """Write a checkpoint by hand: tree.json (a NODE or raw text) and members {name: bytes}."""
    if meta is None:
        meta = tree if isinstance(tree, str) else json.dumps(
            {"format": "fnad-checkpoint", "version": 1, "tree": tree})
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        zf.writestr("tree.json", meta)
        for name, data in dict(members).items():
            zf.writestr(name, data)
    return path


def load_error(path, **kw):
    with pytest.raises(CheckpointError) as info:
        fnad.load(path, **kw)
    msg = str(info.value)
    assert repr(os.fspath(path)) in msg, msg  # every failure names the file
    return msg


ARR = {"array": "arr_0", "shape": [2], "dtype": "<f8"}


# ----------------------------------------------------------------------------- nothing is called

def test_dataclass_named_by_file_is_not_constructed(tmp_path):
    p = tmp_path / "t.npz"
    fnad.save(p, {"t": Trap(np.ones(2))})
    CALLS.clear()
    out = fnad.load(p)
    assert CALLS == [] and type(out["t"]) is dict and list(out["t"]) == ["x"]
    out = fnad.load(p, types=[Trap])  # the caller allows it by name
    assert type(out["t"]) is Trap and len(CALLS) == 1


def test_defaultdict_factory_named_by_file_is_never_resolved(tmp_path):
    node = {"node": "collections:defaultdict", "keys": ["a"], "children": [{"int": 1}],
            "aux": {"tuple": [{"type": "subprocess:Popen"}, {"tuple": ["a"]}]}}
    p = craft(tmp_path / "t.npz", node)
    out = fnad.load(p)
    assert type(out) is dict and out == {"a": 1}
    msg = load_error(p, types=[defaultdict])
    assert "subprocess:Popen" in msg and "types=" in msg
    msg = load_error(p, like=defaultdict(list, {"a": 0}))
    assert "does not match like=" in msg
    q = tmp_path / "ok.npz"  # a safe builtin factory is fine once defaultdict is allowed
    fnad.save(q, defaultdict(list, {"a": 1}))
    assert fnad.load(q, types=[defaultdict]).default_factory is list


@pytest.mark.parametrize("name", ["os:system", "builtins:eval", "subprocess:Popen",
                                  "not_a_module_qq:Thing", f"{__name__}:Trap"])
def test_class_names_in_file_give_plain_containers(tmp_path, name):
    p = craft(tmp_path / "t.npz", {"node": name, "children": [{"int": 1}, {"str": "x"}]})
    CALLS.clear()
    assert fnad.load(p) == (1, "x") and CALLS == []
    assert "not_a_module_qq" not in sys.modules
    p = craft(tmp_path / "a.npz", {"node": name, "children": [], "aux": "echo hi"})
    assert "types=" in load_error(p)


def test_like_checks_leaf_kinds(tmp_path):
    p = tmp_path / "t.npz"
    fnad.save(p, {"lr": "0.1", "n": 3})
    msg = load_error(p, like={"lr": 0.1, "n": 3})
    assert "at ['lr'] the checkpoint has str but like= has float" in msg
    assert "at ['n'] the checkpoint has int but like= has bool" in load_error(
        p, like={"lr": "", "n": True})
    assert fnad.load(p, like={"lr": "", "n": 0}) == {"lr": "0.1", "n": 3}


def test_types_must_be_classes(tmp_path):
    p = tmp_path / "t.npz"
    fnad.save(p, 1)
    with pytest.raises(TypeError, match=r"t.npz.*types= must list classes.*'Trap'"):
        fnad.load(p, types=["Trap"])


# ----------------------------------------------------------------------------- malformed files

def _deep(depth, leaf='{"int": 1}'):
    return '{"node": "list", "children": [' * depth + leaf + "]}" * depth


@pytest.mark.parametrize("depth", [101, 600, 100_000])
def test_deep_tree_json_is_a_checkpoint_error(tmp_path, depth):
    meta = '{"format": "fnad-checkpoint", "version": 1, "tree": ' + _deep(depth) + "}"
    p = craft(tmp_path / "t.npz", None, meta=meta)
    assert "levels deep" in load_error(p)


def test_deep_trees_refused_by_save_and_fine_below(tmp_path):
    tree = 1
    for _ in range(100):
        tree = [tree]
    p = tmp_path / "t.npz"
    fnad.save(p, tree)
    assert fnad.load(p) == tree
    with pytest.raises(ValueError, match=r"t.npz.*more than 100 levels deep"):
        fnad.save(p, [tree])


DEEP_AUX = {"node": "x:Y", "children": [], "aux": json.loads("[" * 150 + "]" * 150)}


@pytest.mark.parametrize("tree, pattern", [
    ([1, 2], "a node must be a non-empty JSON object"),
    ({"node": "list"}, "class name and a list of children"),
    ({"node": "list", "children": [], "evil": 1}, "unknown entries"),
    ({"node": "dict", "keys": ["a"], "children": []}, "'keys' must be a list of 0 entries"),
    ({"node": "dict", "keys": ["a", "a"], "children": [{"int": 1}, {"int": 2}]}, "repeats a key"),
    ({"node": "dict", "keys": [["a"]], "children": [{"int": 1}]}, "unhashable"),
    ({"node": "dict", "children": []}, "malformed dict node"),
    ({"node": "None", "children": [{"int": 1}]}, "malformed None node"),
    ({"node": "dict", "keys": ["a", "b"], "order": [0, 0], "children": [{"int": 1}, {"int": 2}]},
     "permutation"),
    ({"int": "7"}, "malformed leaf"), ({"str": 5}, "malformed leaf"),
    ({"float": "1e5"}, "malformed leaf"), ({"float": [1]}, "malformed leaf"),
    ({"bool": 1}, "malformed leaf"),
    ({"complex": [1]}, "malformed leaf"), ({"pickle": "x"}, "malformed leaf"),
    ({"int": 1, "str": "a"}, "malformed leaf"),
    ({**ARR, "dtype": "|O"}, "dtype"), ({**ARR, "dtype": "V8"}, "dtype"),
    ({**ARR, "dtype": "(2,)f8"}, "dtype"), ({**ARR, "dtype": "not a dtype"}, "dtype"),
    ({**ARR, "dtype": "a"}, "dtype"), ({**ARR, "dtype": "f8,"}, "dtype"),
    ({**ARR, "shape": [-1]}, "shape"), ({**ARR, "shape": [True]}, "shape"),
    ({**ARR, "scalar": True}, "'scalar'"),
    ({**ARR, "array": "../../etc/passwd"}, "must name the member 'arr_0'"),
    ({"node": "list", "children": [{**ARR, "array": "arr_1"}, ARR]}, "must name the member"),
    (DEEP_AUX, "nest more than 100 levels"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_malformed_tree_json(tmp_path, tree, pattern):
    members = {"arr_0.npy": npy(np.ones(2))} if "arr_" in json.dumps(tree) else {}
    p = craft(tmp_path / "t.npz", tree, members)
    assert pattern in load_error(p)


def test_malformed_archives(tmp_path):
    assert "not valid JSON" in load_error(craft(tmp_path / "a.npz", "{nope"))
    assert "version 2" in load_error(craft(tmp_path / "b.npz", None, meta=json.dumps(
        {"format": "fnad-checkpoint", "version": 2, "tree": {"int": 1}})))
    assert "does not describe" in load_error(craft(tmp_path / "c.npz", "[1]"))


def test_mismatched_leaf_counts_and_member_names(tmp_path):
    two = {"node": "list", "children": [ARR, {**ARR, "array": "arr_1"}]}
    msg = load_error(craft(tmp_path / "a.npz", two, {"arr_0.npy": npy(np.ones(2))}))
    assert "describes 2 array leaves" in msg and "lacks the members ['arr_1.npy']" in msg
    members = {"arr_0.npy": npy(np.ones(2)), "arr_1.npy": npy(np.ones(2)), "../x": b"hi"}
    msg = load_error(craft(tmp_path / "b.npz", ARR, members))
    assert "also holds 2 other members ['../x', 'arr_1.npy']" in msg


def test_member_disagreeing_with_tree_json(tmp_path):
    obj = npy(np.ones(2)).replace(b"'<f8'", b"'|O' ")  # an object-array header
    assert "holds a object array" in load_error(craft(tmp_path / "a.npz", ARR,
                                                      {"arr_0.npy": obj}))
    assert "holds a float32 array of shape (2,)" in load_error(craft(
        tmp_path / "b.npz", ARR, {"arr_0.npy": npy(np.ones(2, np.float32))}))
    assert "compression method 12" in load_error(craft(
        tmp_path / "c.npz", ARR, {"arr_0.npy": npy(np.ones(2))}, zipfile.ZIP_BZIP2))
    size = len(npy(np.ones(2)))
    assert f"declares {size - 3} bytes, but a float64 array of shape (2,) takes {size}" in \
        load_error(craft(tmp_path / "d.npz", ARR, {"arr_0.npy": npy(np.ones(2))[:-3]}))


def _peak_load(path):
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError) as info:
            fnad.load(path)
        return tracemalloc.get_traced_memory()[1], str(info.value)
    finally:
        tracemalloc.stop()


BOMB = 32 << 20


def _central_entry(raw):
    """The offset of arr_0.npy's entry in the zip's central directory."""
    central = raw.find(b"PK\x01\x02")
    while raw[central + 46:central + 55] != b"arr_0.npy":
        central = raw.find(b"PK\x01\x02", central + 4)
    return central


def test_zip_bomb_rejected_before_inflating(tmp_path):
    """A member declaring 32 MiB behind a header of a 2-element array (deflated to ~32 KiB)."""
    data = npy(np.ones(2)) + bytes(BOMB)
    p = craft(tmp_path / "t.npz", ARR, {"arr_0.npy": data}, zipfile.ZIP_DEFLATED)
    assert p.stat().st_size < BOMB // 100
    peak, msg = _peak_load(p)
    assert "declares" in msg and str(p) in msg
    assert peak < 2 << 20, f"peak {peak} bytes: the member was inflated"


def test_zip_bomb_with_lying_sizes_stops_at_the_declared_size(tmp_path):
    """The same bomb with its declared sizes patched to the header's: reading stops there."""
    data = npy(np.ones(2)) + bytes(BOMB)
    p = craft(tmp_path / "t.npz", ARR, {"arr_0.npy": data}, zipfile.ZIP_DEFLATED)
    raw = bytearray(p.read_bytes())
    small = len(npy(np.ones(2)))
    with zipfile.ZipFile(p) as zf:
        offset = zf.getinfo("arr_0.npy").header_offset
    struct.pack_into("<I", raw, offset + 22, small)  # the local header's file size
    struct.pack_into("<I", raw, _central_entry(raw) + 24, small)  # the central file size
    p.write_bytes(bytes(raw))
    with zipfile.ZipFile(p) as zf:
        assert zf.getinfo("arr_0.npy").file_size == small
    peak, msg = _peak_load(p)
    assert "declares" in msg or "CRC" in msg
    assert peak < 2 << 20, f"peak {peak} bytes: the member was inflated"


def test_members_larger_than_the_file_refused(tmp_path):
    """Stored members declaring more bytes than the file holds (overlapping members)."""
    p = craft(tmp_path / "t.npz", ARR, {"arr_0.npy": npy(np.ones(2))})
    raw = bytearray(p.read_bytes())
    struct.pack_into("<II", raw, _central_entry(raw) + 20, 1 << 30, 1 << 30)  # both sizes
    p.write_bytes(bytes(raw))
    assert "members that overlap" in load_error(p)


def test_huge_tree_json_refused(tmp_path, monkeypatch):
    p = tmp_path / "t.npz"
    fnad.save(p, {"w": np.ones(3)})
    monkeypatch.setattr(ckload, "MAX_META_BYTES", 50)
    assert "tree.json declares" in load_error(p)


# ----------------------------------------------------------------------------- the writer

def test_dict_key_order_round_trips(tmp_path):
    tree = {"b": 1, "a": np.ones(1), "c": {"z": [1, {"y": 2, "x": 3}], "d": None}}
    p = tmp_path / "t.npz"
    fnad.save(p, tree)
    for out in (fnad.load(p), fnad.load(p, like=tree)):
        assert list(out) == ["b", "a", "c"] and list(out["c"]) == ["z", "d"]
        assert list(out["c"]["z"][1]) == ["y", "x"]


def test_save_keeps_permissions(tmp_path):
    p = tmp_path / "t.npz"
    fnad.save(p, 1)
    for mode in (0o600, 0o640, 0o604):
        os.chmod(p, mode)
        fnad.save(p, 2)
        assert (p.stat().st_mode & 0o777) == mode and fnad.load(p) == 2


def test_save_writes_through_a_symlink(tmp_path):
    real, link = tmp_path / "real.npz", tmp_path / "link.npz"
    fnad.save(real, 1)
    link.symlink_to(real)
    fnad.save(link, 2)
    assert link.is_symlink() and fnad.load(real) == 2 and fnad.load(link) == 2
    dangling = tmp_path / "dangling.npz"
    dangling.symlink_to(tmp_path / "new.npz")
    fnad.save(dangling, 3)
    assert dangling.is_symlink() and fnad.load(tmp_path / "new.npz") == 3
    assert sorted(os.listdir(tmp_path)) == ["dangling.npz", "link.npz", "new.npz", "real.npz"]


@pytest.mark.skipif(os.name != "posix", reason="stale temp files are found by flock (POSIX)")
def test_save_removes_dead_writers_temps_but_not_live_ones(tmp_path):
    import fcntl
    p = tmp_path / "ckpt.npz"
    dead = tmp_path / "ckpt.npz.tmp4242-0123abcd"
    live = tmp_path / "ckpt.npz.tmp4243-89abcdef"
    other = tmp_path / "ckpt.npz.tmp-notes"
    for f in (dead, live, other):
        f.write_bytes(b"half a checkpoint")
    with open(live, "rb") as held:  # a writer in progress holds its lock
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        fnad.save(p, 1)
        assert not dead.exists() and live.exists() and other.exists()
    fnad.save(p, 2)
    assert sorted(os.listdir(tmp_path)) == ["ckpt.npz", "ckpt.npz.tmp-notes"]


# ----------------------------------------------------------------------------- safetensors

def st_file(path, header, data=b"", n=None):
    """A safetensors file by hand: a header (dict or raw bytes), its length `n`, the data."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw) if n is None else n) + raw + data)
    return path


F32 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}


HOSTILE_SAFETENSORS = [
    ({"a": F32}, b"\0" * 4, None, "offsets"),                       # truncated data
    ({"a": F32}, b"\0" * 12, None, "take 8 bytes but the data has 12"),  # trailing bytes
    ({"a": F32}, b"\0" * 8, 10 ** 12, "header declares"),           # header length lies
    (b"[1, 2]", b"", None, "not a JSON object"),
    (b"{\"a\": ", b"", None, "not JSON"),
    (b"\xff\xfe{}", b"", None, "not JSON"),
    (b"{\"a\": 1, \"a\": 2}", b"", None, "twice"),
    ({"a": {**F32, "dtype": "F8_E4M3"}}, b"\0" * 8, None, "dtype"),
    ({"a": {**F32, "dtype": "O"}}, b"\0" * 8, None, "dtype"),
    ({"a": {**F32, "shape": [-2]}}, b"\0" * 8, None, "shape"),
    ({"a": {**F32, "shape": [2**62, 2**62]}}, b"\0" * 8, None, "needs"),
    ({"a": {**F32, "data_offsets": [8, 0]}}, b"\0" * 8, None, "data_offsets"),
    ({"a": {**F32, "code": "import os"}}, b"\0" * 8, None, "is not"),
    ({"a": F32, "b": F32}, b"\0" * 8, None, "overlap or gap"),
    ({"a": F32, "a.b": {**F32, "data_offsets": [8, 16]}}, b"\0" * 16, None, "prefix"),
    ({"a..b": F32}, b"\0" * 8, None, "dotted path"),
    ({"__metadata__": {"x": 1}, "a": F32}, b"\0" * 8, None, "__metadata__"),
    ({"": F32}, b"\0" * 8, None, "empty name"),
]


@pytest.mark.parametrize("header, data, n, pattern", HOSTILE_SAFETENSORS,
                         ids=[case[3] for case in HOSTILE_SAFETENSORS])
def test_hostile_safetensors_files(tmp_path, header, data, n, pattern):
    msg = load_error(st_file(tmp_path / "x.safetensors", header, data, n))
    assert pattern in msg, msg


def test_tiny_and_empty_safetensors_files(tmp_path):
    (tmp_path / "e.safetensors").write_bytes(b"")
    assert "fewer than the 8" in load_error(tmp_path / "e.safetensors")
    (tmp_path / "s.safetensors").write_bytes(b"\x08\0\0\0")
    assert "fewer than the 8" in load_error(tmp_path / "s.safetensors")


def test_safetensors_header_is_read_before_any_allocation(tmp_path):
    # a header claiming a huge tensor is refused from its numbers, with little memory
    header = {"a": {"dtype": "F64", "shape": [2**40], "data_offsets": [0, 2**43]}}
    path = st_file(tmp_path / "big.safetensors", header, b"\0" * 8)
    tracemalloc.start()
    try:
        load_error(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10**7


def test_safetensors_nesting_beyond_max_depth_refused(tmp_path):
    name = ".".join(["a"] * 200)
    msg = load_error(st_file(tmp_path / "d.safetensors", {name: F32}, b"\0" * 8))
    assert "at most 100 parts" in msg
