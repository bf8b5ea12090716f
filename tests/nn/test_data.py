"""fnad_nn.data: IDX files (hand-made and small slices of the real ones), where files come
from (path, FNAD_DATA_DIR, cache, checksummed download, offline message), character corpus
and minibatches."""

import gzip
import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

import fnad.random as random
from fnad_nn import data
from fnad_nn.data import _sources

REAL = Path(os.environ.get("FNAD_DATA_DIR") or Path(__file__).parents[2] / ".." / "shared" / "data")
_IDX_CODES = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C, np.float32: 0x0D,
              np.float64: 0x0E}


def idx_bytes(a):
    a = np.asarray(a)
    head = bytes([0, 0, _IDX_CODES[a.dtype.type], a.ndim])
    return head + np.array(a.shape, ">u4").tobytes() + a.astype(a.dtype.newbyteorder(">")).tobytes()


def write(path, payload, gz=True):
    path = Path(path)
    path.write_bytes(gzip.compress(payload) if gz else payload)
    return path


def mnist_dir(tmp_path, n=5, n_labels=None, split="train", label_max=9):
    prefix = "train" if split == "train" else "t10k"
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (n, 28, 28)).astype(np.uint8)
    labels = rng.integers(0, label_max + 1, n_labels or n).astype(np.uint8)
    write(tmp_path / f"{prefix}-images-idx3-ubyte.gz", idx_bytes(images))
    write(tmp_path / f"{prefix}-labels-idx1-ubyte", idx_bytes(labels), gz=False)  # raw works
    return images, labels


# ----------------------------------------------------------------------------- IDX

@pytest.mark.parametrize("gz", [True, False], ids=["gzip", "raw"])
@pytest.mark.parametrize("dtype,shape", [(np.uint8, (3, 4, 5)), (np.uint8, (7,)),
                                         (np.int32, (2, 3)), (np.float32, (4,)),
                                         (np.float64, (2, 2)), (np.int16, (0, 3))])
def test_read_idx_round_trip(tmp_path, gz, dtype, shape):
    a = (np.arange(np.prod(shape)) * 37 - 5).reshape(shape).astype(dtype)
    got = data.read_idx(write(tmp_path / "f.idx", idx_bytes(a), gz))
    assert got.shape == shape and got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, a)


@pytest.mark.parametrize("mutate,message", [
    (lambda b: b"\x01\x00" + b[2:], "not an IDX file"),
    (lambda b: b[:2] + b"\x07" + b[3:], "not an IDX file"),
    (lambda b: b[:6], "truncated inside its header"),
    (lambda b: b[:-1], "truncated"),
    (lambda b: b + b"\x00", "longer than its header says"),
    (lambda b: b"", "not an IDX file"),
], ids=["magic", "type-code", "header", "payload", "extra-bytes", "empty"])
def test_read_idx_rejects_bad_files(tmp_path, mutate, message):
    path = write(tmp_path / "bad-idx3-ubyte", mutate(idx_bytes(np.zeros((2, 3, 3), np.uint8))),
                 gz=False)
    with pytest.raises(ValueError, match=message) as e:
        data.read_idx(path)
    assert str(path) in str(e.value)


def test_read_idx_truncated_gzip(tmp_path):
    blob = gzip.compress(idx_bytes(np.arange(1000, dtype=np.int32)))
    path = tmp_path / "cut.gz"
    path.write_bytes(blob[:len(blob) // 2])
    with pytest.raises(ValueError, match="corrupt or truncated gzip") as e:
        data.read_idx(path)
    assert str(path) in str(e.value)


def test_load_mnist_from_path(tmp_path):
    images, labels = mnist_dir(tmp_path)
    x, y = data.load_mnist("fashion", "train", path=tmp_path)
    np.testing.assert_array_equal(x, images)
    np.testing.assert_array_equal(y, labels)
    x, y = data.load_mnist("mnist", "train", path=tmp_path, limit=2)
    assert x.shape == (2, 28, 28) and y.shape == (2,)


def test_load_mnist_checks_pairs_and_names(tmp_path):
    mnist_dir(tmp_path, n=5, n_labels=4)
    with pytest.raises(ValueError, match="5 images but .* 4 labels"):
        data.load_mnist("fashion", path=tmp_path)
    mnist_dir(tmp_path, label_max=200)
    with pytest.raises(ValueError, match="labels outside 0..9"):
        data.load_mnist("fashion", path=tmp_path)
    with pytest.raises(ValueError, match="unknown dataset 'cifar'"):
        data.load_mnist("cifar")
    with pytest.raises(ValueError, match="split='val'"):
        data.load_mnist("fashion", "val")


# ----------------------------------------------------------------------------- sources

@pytest.fixture
def no_env(monkeypatch, tmp_path):
    """No FNAD_DATA_DIR, an empty private cache, and a toy data set with a file:// source."""
    monkeypatch.delenv("FNAD_DATA_DIR", raising=False)
    monkeypatch.setenv("FNAD_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "upstream"
    src.mkdir()
    payload = b"hello, data\n"
    (src / "a.txt").write_bytes(payload)
    sha = hashlib.sha256(payload).hexdigest()
    monkeypatch.setitem(_sources.SOURCES, "toy", {"a.txt": ((src.as_uri() + "/",), sha)})
    return tmp_path


def test_explicit_path_then_env_then_cache(no_env, monkeypatch):
    for d in ("given", "env/toy", "cache/toy"):
        (no_env / d).mkdir(parents=True)
        (no_env / d / "a.txt").write_text(d)
    monkeypatch.setenv("FNAD_DATA_DIR", str(no_env / "env"))
    assert data.resolve_files("toy", ["a.txt"], path=no_env / "given")[0].read_text() == "given"
    assert data.resolve_files("toy", ["a.txt"])[0].read_text() == "env/toy"
    monkeypatch.delenv("FNAD_DATA_DIR")
    assert data.resolve_files("toy", ["a.txt"])[0].read_text() == "cache/toy"


def test_gz_name_matches_uncompressed_file(no_env):
    (no_env / "d").mkdir()
    (no_env / "d" / "f-idx1-ubyte").write_bytes(b"x")
    [p] = data.resolve_files("toy", ["f-idx1-ubyte.gz"], path=no_env / "d")
    assert p.name == "f-idx1-ubyte"


def test_download_into_cache_with_checksum(no_env):
    [p] = data.resolve_files("toy", ["a.txt"])
    assert p == no_env / "cache" / "toy" / "a.txt" and p.read_bytes() == b"hello, data\n"
    (no_env / "upstream" / "a.txt").unlink()       # now served from the cache
    assert data.resolve_files("toy", ["a.txt"])[0] == p


def test_download_rejects_bad_checksum_and_leaves_nothing(no_env):
    dest = no_env / "out" / "a.txt"
    with pytest.raises(ValueError, match="SHA-256"):
        data.download((no_env / "upstream" / "a.txt").as_uri(), dest, "0" * 64)
    assert not dest.exists() and list(dest.parent.iterdir()) == []


def test_offline_message_says_where_to_put_files(no_env):
    def offline(url):
        raise OSError("network is unreachable")

    with pytest.raises(FileNotFoundError) as e:
        data.resolve_files("toy", ["a.txt"], opener=offline)
    msg = str(e.value)
    assert "download failed" in msg and "FNAD_DATA_DIR" in msg
    assert str(no_env / "cache" / "toy" / "a.txt") in msg
    assert not (no_env / "cache" / "toy" / "a.txt").exists()
    with pytest.raises(FileNotFoundError, match="download=False"):
        data.resolve_files("toy", ["a.txt"], download=False)
    with pytest.raises(FileNotFoundError, match="published at"):
        data.load_mnist("fashion", path=no_env / "nowhere")


def test_missing_data_names_every_missing_file(no_env):
    (no_env / "d").mkdir()
    (no_env / "d" / "t10k-labels-idx1-ubyte").write_bytes(b"x")
    with pytest.raises(data.MissingDataError) as e:
        data.resolve_files("fashion-mnist", list(data.SOURCES["fashion-mnist"]), path=no_env / "d")
    assert e.value.missing == ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                               "t10k-images-idx3-ubyte.gz"]
    assert e.value.dirs == [no_env / "d"] and "path=" in e.value.why
    assert all(f in str(e.value) for f in e.value.missing)
    assert isinstance(e.value, FileNotFoundError)


def test_fnad_offline_never_downloads(no_env, monkeypatch):
    def no_network(url):
        raise AssertionError(f"tried to open {url}")

    monkeypatch.setenv("FNAD_OFFLINE", "1")
    assert data.offline()
    with pytest.raises(data.MissingDataError, match="FNAD_OFFLINE is set") as e:
        data.resolve_files("toy", ["a.txt"], opener=no_network)
    assert e.value.missing == ["a.txt"] and not (no_env / "cache" / "toy").exists()
    monkeypatch.setenv("FNAD_OFFLINE", "0")
    assert not data.offline() and data.resolve_files("toy", ["a.txt"])[0].is_file()


def test_sources_are_pinned():
    for name, files in data.SOURCES.items():
        for file, (bases, sha) in files.items():
            assert len(sha) == 64 and int(sha, 16) >= 0, (name, file)
            assert all(b.startswith(("http://", "https://")) and b.endswith("/") for b in bases)


# ----------------------------------------------------------------------------- text, batches

TEXT = "to be, or not to be: that is the question.\n" * 20


def test_char_corpus_vocab_encode_decode_split():
    c = data.CharCorpus(TEXT)
    assert c.chars == "".join(sorted(set(TEXT))) and c.vocab_size == len(set(TEXT))
    assert c.decode(c.encode("not to be")) == "not to be"
    assert len(c.train) == round(0.9 * len(TEXT)) and len(c.train) + len(c.val) == len(TEXT)
    assert c.decode(np.concatenate([c.train, c.val])) == TEXT
    with pytest.raises(ValueError, match=r"\['Z'\] are not in the vocabulary"):
        c.encode("Zto")
    with pytest.raises(ValueError, match="ids must lie in"):
        c.decode([c.vocab_size])


def test_char_corpus_unicode():
    c = data.CharCorpus("héllo wörld ✓ " * 10)
    assert c.decode(c.encode("wörld ✓")) == "wörld ✓"


def test_char_corpus_batches():
    c = data.CharCorpus(TEXT)
    x, y = c.batch("train", 4, 16, key=random.PRNGKey(0))
    assert x.shape == y.shape == (4, 16)
    np.testing.assert_array_equal(x[:, 1:], y[:, :-1])      # targets are inputs shifted by one
    x2, _ = c.batch("train", 4, 16, key=random.PRNGKey(0))
    np.testing.assert_array_equal(x, x2)                     # same key, same batch
    a, _ = c.batch("val", 3, 8, rng=np.random.default_rng(1))
    b, _ = c.batch("val", 3, 8, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(a, b)
    assert c.decode(a[0]) in TEXT
    with pytest.raises(TypeError, match="exactly one of key="):
        c.batch("train", 2, 4)
    with pytest.raises(ValueError, match="lower block_size"):
        c.batch("val", 2, len(c.val), key=random.PRNGKey(0))
    with pytest.raises(ValueError, match="'train' or 'val'"):
        c.batch("test", 2, 4, key=random.PRNGKey(0))


def test_minibatches_cover_each_index_once():
    for kw in ({"key": random.PRNGKey(3)}, {"rng": np.random.default_rng(3)}):
        batches = data.minibatches(10, 4, **kw)
        assert [len(b) for b in batches] == [4, 4, 2]
        assert sorted(np.concatenate(batches).tolist()) == list(range(10))
        assert [len(b) for b in data.minibatches(10, 4, drop_last=True, **kw)] == [4, 4]
    first = data.minibatches(10, 4, key=random.PRNGKey(3))
    again = data.minibatches(10, 4, key=random.PRNGKey(3))
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        data.minibatches(10, 4, rng=3)


# ----------------------------------------------------------------------------- real files

needs_fashion = pytest.mark.skipif(not (REAL / "fashion-mnist").is_dir(),
                                   reason=f"no Fashion-MNIST under {REAL} (set FNAD_DATA_DIR)")
needs_shakespeare = pytest.mark.skipif(not (REAL / "tinyshakespeare").is_dir(),
                                       reason=f"no TinyShakespeare under {REAL}")


@needs_fashion
def test_real_fashion_mnist_test_slice():
    x, y = data.load_mnist("fashion", "test", path=REAL / "fashion-mnist", limit=200)
    assert x.shape == (200, 28, 28) and x.dtype == np.uint8 and y.shape == (200,)
    assert set(np.unique(y)) <= set(range(10)) and len(np.unique(y)) == 10
    assert len(data.FASHION_MNIST_CLASSES) == 10


@needs_shakespeare
def test_real_tinyshakespeare():
    text = data.load_tinyshakespeare(path=REAL / "tinyshakespeare")
    assert len(text) == 1115394 and text.startswith("First Citizen:")
    c = data.CharCorpus(text)
    assert c.vocab_size == 65 and len(c.val) == 111539
