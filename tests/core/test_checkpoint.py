"""fnad.save / fnad.load: round trips, the on-disk format, atomicity, corruption, like=."""

import dataclasses
import json
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import zipfile
from collections import OrderedDict, defaultdict, namedtuple
from typing import NamedTuple

import numpy as np
import pytest

import fnad
from fnad._io.checkpoint import CheckpointError

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class AdamState(NamedTuple):
    count: object
    mu: object
    nu: object


Pair = namedtuple("Pair", ["first", "second"])


@dataclasses.dataclass
class Config:
    width: int
    scale: object


class Box:
    """A class registered as a pytree node, with JSON-able aux data."""

    def __init__(self, value, label):
        self.value = value
        self.label = label


fnad.register_pytree_node(Box, lambda b: ((b.value,), b.label), lambda aux, c: Box(c[0], aux))


def assert_same(a, b):
    la, ta = fnad.tree_flatten(a)
    lb, tb = fnad.tree_flatten(b)
    assert ta == tb, (ta, tb)
    for x, y in zip(la, lb):
        assert type(x) is type(y), (x, y)
        if isinstance(x, (np.ndarray, np.generic)):
            assert x.dtype == y.dtype and x.shape == y.shape
            np.testing.assert_array_equal(x, y)
        elif isinstance(x, float) and np.isnan(x):
            assert np.isnan(y)
        else:
            assert x == y


def sample_tree():
    rng = np.random.default_rng(0)
    return {
        "params": {"w": rng.standard_normal((3, 4)).astype(np.float32),
                   "b": np.zeros(4), "layers": [{"w": np.eye(2)}, {"w": np.ones((2, 2))}]},
        "opt_state": (AdamState(np.int32(7), {"w": np.ones(3)}, {"w": np.zeros(3)}), None),
        "step": 1000, "lr": 1e-3, "flag": True, "name": "adam", "z": 1 - 2j,
        "key": np.array([0, 42], dtype=np.uint32),
        "ints": np.arange(6, dtype=np.int64).reshape(2, 3),
        "bools": np.array([True, False]),
        "f16": np.array([1.5], dtype=np.float16),
        "empty": np.zeros((0, 3)),
        "scalar0d": np.array(3.5),
        "specials": [float("inf"), float("-inf"), float("nan")],
    }


def test_round_trip_everything(tmp_path):
    tree = sample_tree()
    p = tmp_path / "ckpt.npz"
    fnad.save(p, tree)
    assert_same(fnad.load(p, types=[AdamState]), tree)
    assert_same(fnad.load(str(p), like=tree), tree)
    plain = fnad.load(p)  # without types=/like=: the namedtuple comes back as a tuple
    assert type(plain["opt_state"][0]) is tuple
    assert_same(plain["opt_state"][0], tuple(tree["opt_state"][0]))


@pytest.mark.parametrize("tree", [
    np.arange(3.0), 5, None, (), [], {}, (np.ones(2),), [None, 1.5],
    Pair(np.ones(1), [2, 3]), OrderedDict([("z", np.ones(1)), ("a", 2)]),
    {1: np.ones(1), "a": 2, (1, 2): 3.0},
], ids=["array", "int", "None", "empty_tuple", "empty_list", "empty_dict", "tuple1",
        "list", "namedtuple", "ordereddict", "mixed_keys"])
def test_round_trip_small(tmp_path, tree):
    p = tmp_path / "t.npz"
    fnad.save(p, tree)
    assert_same(fnad.load(p, types=[Pair, OrderedDict]), tree)
    assert_same(fnad.load(p, like=tree), tree)


def test_dataclass_registered_and_defaultdict(tmp_path):
    tree = {"cfg": Config(3, np.ones(2)), "box": Box(np.arange(3), ("lbl", 2)),
            "dd": defaultdict(list, {"a": np.ones(1)})}
    p = tmp_path / "t.npz"
    fnad.save(p, tree)
    out = fnad.load(p, types=[Config, Box, defaultdict])
    assert isinstance(out["cfg"], Config) and out["cfg"].width == 3
    assert isinstance(out["box"], Box) and out["box"].label == ("lbl", 2)
    assert isinstance(out["dd"], defaultdict) and out["dd"].default_factory is list
    assert_same(out, tree)
    assert_same(fnad.load(p, like=tree), tree)
    with pytest.raises(CheckpointError, match=r"t.npz.*\['box'\] is a .*:Box.*types=\[Box\]"):
        fnad.load(p)  # Box has aux data: no plain container holds it
    del tree["box"]
    fnad.save(p, tree)
    plain = fnad.load(p)  # builtin containers only: dataclass and defaultdict as dicts
    assert type(plain["cfg"]) is dict and plain["cfg"]["width"] == 3
    assert type(plain["dd"]) is dict and list(plain["dd"]) == ["a"]


def test_format_is_readable_without_fnad(tmp_path):
    tree = {"w": np.arange(6.0).reshape(2, 3), "opt": AdamState(3, np.ones(1), np.zeros(1))}
    p = tmp_path / "t.npz"
    fnad.save(p, tree)
    z = np.load(p)  # allow_pickle stays False
    meta = json.loads(z["tree.json"])
    assert meta["format"] == "fnad-checkpoint" and meta["version"] == 1
    root = meta["tree"]
    assert root["node"] == "dict" and root["keys"] == ["opt", "w"]
    opt, w = root["children"]
    assert opt["node"].endswith(":AdamState") and opt["fields"] == ["count", "mu", "nu"]
    assert opt["children"][0] == {"int": 3}
    np.testing.assert_array_equal(z[w["array"]], tree["w"])
    assert w["shape"] == [2, 3] and np.dtype(w["dtype"]) == np.float64
    with zipfile.ZipFile(p) as zf:  # uncompressed members, plain .npy files
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())


def test_no_pickle_in_runtime_module():
    for path in pathlib.Path(REPO, "fnad", "_io").glob("*.py"):
        src = path.read_text()
        assert "import pickle" not in src and "allow_pickle=True" not in src, path


def test_object_arrays_and_unknown_leaves_rejected(tmp_path):
    p = tmp_path / "t.npz"
    with pytest.raises(TypeError, match=r"\['a'\].*dtype object"):
        fnad.save(p, {"a": np.array([1, "x"], dtype=object)})
    with pytest.raises(TypeError, match=r"\['f'\] has type function"):
        fnad.save(p, {"f": lambda: 0})
    assert not p.exists()
    assert not [f for f in os.listdir(tmp_path)], "a failed save left a temporary file"


def test_unserialisable_aux_rejected(tmp_path):
    with pytest.raises(TypeError, match="Box node.*cannot be written as JSON"):
        fnad.save(tmp_path / "t.npz", Box(np.ones(1), object()))


def test_overwrite_replaces_and_leaves_no_temp(tmp_path):
    p = tmp_path / "t.npz"
    fnad.save(p, {"a": np.ones(3)})
    fnad.save(p, {"a": np.zeros(2), "b": 1})
    assert_same(fnad.load(p), {"a": np.zeros(2), "b": 1})
    assert os.listdir(tmp_path) == ["t.npz"]


def test_like_matches_and_uses_like_classes(tmp_path):
    class Local(NamedTuple):  # not importable by name: needs like=
        a: object
        b: object

    tree = {"s": Local(np.ones(2), 3)}
    p = tmp_path / "t.npz"
    fnad.save(p, tree)
    plain = fnad.load(p)
    assert type(plain["s"]) is tuple and plain["s"][1] == 3
    out = fnad.load(p, like={"s": Local(np.zeros(2), 0)})
    assert type(out["s"]) is Local
    assert_same(out, tree)


@pytest.mark.parametrize("like, pattern", [
    ({"w": np.ones(3)}, r"\(root\).*\{'b': .*'w'.*like= has \{'w'"),
    ({"w": np.ones(4), "b": 2}, r"at \['w'\].*float64\(3,\) array but like= has a float64\(4,\)"),
    ({"w": np.ones(3, np.float32), "b": 2}, r"\['w'\].*float64\(3,\).*float32\(3,\)"),
    ({"w": np.ones(3), "b": np.ones(1)}, r"at \['b'\] the checkpoint has int but like= has"),
    ({"w": [np.ones(3)], "b": 2}, r"at \['w'\]"),
    (AdamState(1, 2, 3), r"checkpoint has \{.*like= has AdamState"),
], ids=["missing_key", "shape", "dtype", "scalar_vs_array", "container", "class"])
def test_like_mismatch_errors(tmp_path, like, pattern):
    p = tmp_path / "t.npz"
    fnad.save(p, {"w": np.ones(3), "b": 2})
    with pytest.raises(CheckpointError, match=pattern) as info:
        fnad.load(p, like=like)
    assert "checkpoint:" in str(info.value) and "like:" in str(info.value)


def test_truncated_file_raises_clear_error(tmp_path):
    p = tmp_path / "t.npz"
    fnad.save(p, sample_tree())
    data = p.read_bytes()
    for cut in (0, 10, len(data) // 2, len(data) - 30):
        p.write_bytes(data[:cut])
        with pytest.raises(CheckpointError, match="not a readable fnad checkpoint"):
            fnad.load(p)


def test_corrupted_array_bytes_detected(tmp_path):
    p = tmp_path / "t.npz"
    fnad.save(p, {"w": np.arange(1000.0)})
    data = bytearray(p.read_bytes())
    i = data.find(np.arange(1000.0)[500:502].tobytes())
    assert i > 0
    data[i] ^= 0xFF
    p.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="(?i)crc"):
        fnad.load(p)


def test_not_a_checkpoint(tmp_path):
    p = tmp_path / "plain.npz"
    np.savez(p, a=np.ones(2))
    with pytest.raises(CheckpointError, match="no tree.json"):
        fnad.load(p)
    q = tmp_path / "junk.npz"
    q.write_bytes(b"hello world" * 10)
    with pytest.raises(CheckpointError, match="not a readable"):
        fnad.load(q)
    with pytest.raises(FileNotFoundError):
        fnad.load(tmp_path / "missing.npz")


def test_unknown_class_without_like(tmp_path):
    p = tmp_path / "t.npz"
    fnad.save(p, Pair(1, 2))
    with zipfile.ZipFile(p) as zf:
        meta = json.loads(zf.read("tree.json"))
    meta["tree"]["node"] = "not_a_loaded_module_xyz:Pair"
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("tree.json", json.dumps(meta))
    assert fnad.load(p) == (1, 2)  # a plain tuple: no class looked up
    assert "not_a_loaded_module_xyz" not in sys.modules  # never imported by a file's say-so
    with pytest.raises(CheckpointError, match=r"t.npz.*\(root\) the checkpoint has Pair"):
        fnad.load(p, like=Pair(0, 0))


def test_load_device_cpu_and_gpu_without_cupy(tmp_path):
    p = tmp_path / "t.npz"
    fnad.save(p, {"a": np.ones(2), "n": 3})
    assert_same(fnad.load(p, device="cpu"), {"a": np.ones(2), "n": 3})
    if fnad.devices("gpu"):
        pytest.skip("a GPU is present; tests/backend covers device='gpu'")
    with pytest.raises(RuntimeError, match="fnad.load: a GPU was asked for"):
        fnad.load(p, device="gpu")


_WRITER = textwrap.dedent("""
    import sys, time
    import numpy as np
    import fnad, fnad._io.checkpoint as ck
    path = sys.argv[1]
    fnad.save(path, {"version": 1, "w": np.full(4, 1.0)})
    real = ck._write_array
    def slow(member, arr):  # a slow disk: each array takes a while
        real(member, arr)
        print("writing", flush=True)
        time.sleep(0.2)
    ck._write_array = slow
    fnad.save(path, {"version": 2, "w": [np.full(50_000, 2.0) for _ in range(100)]})
    print("done", flush=True)
""")


def test_killed_writer_leaves_previous_checkpoint(tmp_path):
    p = tmp_path / "ckpt.npz"
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(p)], stdout=subprocess.PIPE,
                            env=env, text=True)
    try:
        for _ in range(3):  # let it write a few arrays of the second checkpoint
            line = proc.stdout.readline()
            assert line.strip() == "writing", line
        tmps = [f for f in os.listdir(tmp_path) if f != "ckpt.npz"]
        assert tmps and tmps[0].startswith("ckpt.npz.tmp"), os.listdir(tmp_path)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    out = fnad.load(p)  # the previous checkpoint, complete
    assert out["version"] == 1
    np.testing.assert_array_equal(out["w"], np.full(4, 1.0))
    # the half-written temporary file is not a checkpoint either
    tmp = [f for f in os.listdir(tmp_path) if f != "ckpt.npz"][0]
    with pytest.raises(CheckpointError):
        fnad.load(tmp_path / tmp)
    fnad.save(p, {"version": 3})  # the next save to the path removes the dead writer's file
    assert os.listdir(tmp_path) == ["ckpt.npz"] and fnad.load(p) == {"version": 3}
