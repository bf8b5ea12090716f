"""fnad.save / fnad.load in Hugging Face's safetensors format: dotted names, round trips,
the half-precision rule, like=, and files the `safetensors` package writes and reads."""

import numpy as np
import pytest

import fnad
from fnad import CheckpointError


def tree():
    rng = np.random.default_rng(0)
    return {"tok": {"w": rng.normal(size=(5, 3)).astype(np.float32)},
            "blocks": [{"w": rng.normal(size=(3, 3)), "b": None},
                       {"w": rng.normal(size=(3, 3)), "b": np.arange(3, dtype=np.int64)}],
            "flags": np.array([True, False]), "step": np.int32(7)}


def test_round_trip_by_suffix_and_by_format(tmp_path):
    t = tree()
    for path, kw in ((tmp_path / "m.safetensors", {}), (tmp_path / "m.bin",
                                                         {"format": "safetensors"})):
        fnad.save(path, t, **kw)
        back = fnad.load(path, **kw)
        assert sorted(back) == ["blocks", "flags", "step", "tok"]
        assert isinstance(back["blocks"], list) and "b" not in back["blocks"][0]
        np.testing.assert_array_equal(back["blocks"][1]["b"], t["blocks"][1]["b"])
        assert back["tok"]["w"].dtype == np.float32 and back["step"].dtype == np.int32
        like = fnad.load(path, like=t, **kw)
        assert fnad.tree_structure(like) == fnad.tree_structure(t)
        for a, b in zip(fnad.tree_leaves(like), fnad.tree_leaves(t)):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype


def test_dotted_names_are_the_files_names(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    fnad.save(tmp_path / "m.safetensors", tree())
    names = set(st.load_file(str(tmp_path / "m.safetensors")))
    assert names == {"tok.w", "blocks.0.w", "blocks.1.w", "blocks.1.b", "flags", "step"}


def test_reads_what_the_safetensors_package_writes(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    ml = pytest.importorskip("ml_dtypes")
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    st.save_file({"a.weight": x, "a.bias": x[0].astype(np.float16),
                  "b.0": x.astype(ml.bfloat16), "n": np.arange(4, dtype=np.uint8)},
                 str(tmp_path / "p.safetensors"), metadata={"format": "pt"})
    back = fnad.load(tmp_path / "p.safetensors")
    np.testing.assert_array_equal(back["a"]["weight"], x)
    # the half-precision rule: F16 and BF16 widen to float32 exactly
    assert back["a"]["bias"].dtype == np.float32
    np.testing.assert_array_equal(back["a"]["bias"], x[0].astype(np.float16).astype(np.float32))
    assert back["b"][0].dtype == np.float32
    np.testing.assert_array_equal(back["b"][0], x.astype(ml.bfloat16).astype(np.float32))
    # ... unless like= asks for a float dtype
    like = {"a": {"weight": x, "bias": x[0].astype(np.float16)}, "b": [x.astype(np.float64)],
            "n": np.zeros(4, np.uint8)}
    got = fnad.load(tmp_path / "p.safetensors", like=like)
    assert got["a"]["bias"].dtype == np.float16 and got["b"][0].dtype == np.float64


def test_the_safetensors_package_reads_what_fnad_writes(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    ml = pytest.importorskip("ml_dtypes")
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    fnad.save(tmp_path / "f.safetensors", {"h": x.astype(np.float16),
                                           "bf": x.astype(ml.bfloat16), "x": x})
    got = st.load_file(str(tmp_path / "f.safetensors"))
    assert got["h"].dtype == np.float16 and got["bf"].dtype == ml.bfloat16
    np.testing.assert_array_equal(got["x"], x)
    np.testing.assert_array_equal(got["bf"], x.astype(ml.bfloat16))


def test_like_mismatch_names_the_tensor(tmp_path):
    fnad.save(tmp_path / "m.safetensors", tree())
    bad = tree()
    bad["tok"]["w"] = np.zeros((5, 4), np.float32)
    with pytest.raises(CheckpointError, match="tok.w"):
        fnad.load(tmp_path / "m.safetensors", like=bad)
    bad = tree()
    bad["extra"] = np.zeros(2)
    with pytest.raises(CheckpointError, match="missing tensors \\['extra'\\]"):
        fnad.load(tmp_path / "m.safetensors", like=bad)


def test_save_refuses_what_the_format_cannot_hold(tmp_path):
    with pytest.raises(TypeError, match="arrays only"):
        fnad.save(tmp_path / "m.safetensors", {"lr": 0.1})
    with pytest.raises(TypeError, match="complex128"):
        fnad.save(tmp_path / "m.safetensors", {"z": np.zeros(2, complex)})
    with pytest.raises(ValueError, match="format='zip'"):
        fnad.save(tmp_path / "m.safetensors", {}, format="zip")
    assert not list(tmp_path.iterdir())  # nothing left behind
