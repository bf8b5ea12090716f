"""IDX files (the MNIST / Fashion-MNIST format) and the two image data sets stored in it.

An IDX file is a 4-byte magic number `0x00 0x00 <dtype code> <ndim>`, then `ndim` big-endian
uint32 dimensions, then the values in C order (big-endian for multi-byte types). Files may be
gzip-compressed (detected from the gzip magic bytes, not the name).
"""

import gzip
import os

import numpy as np

from ._sources import resolve_files

__all__ = ["read_idx", "load_mnist", "MNIST_CLASSES", "FASHION_MNIST_CLASSES"]

# IDX type code -> big-endian NumPy dtype
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}

MNIST_CLASSES = tuple(str(d) for d in range(10))
FASHION_MNIST_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal",
                         "Shirt", "Sneaker", "Bag", "Ankle boot")

_FILES = {("train", "images"): "train-images-idx3-ubyte.gz",
          ("train", "labels"): "train-labels-idx1-ubyte.gz",
          ("test", "images"): "t10k-images-idx3-ubyte.gz",
          ("test", "labels"): "t10k-labels-idx1-ubyte.gz"}
_DATASETS = {"mnist": "mnist", "fashion": "fashion-mnist", "fashion-mnist": "fashion-mnist",
             "fashion_mnist": "fashion-mnist"}


def _read_bytes(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise ValueError(f"read_idx: {path} is a corrupt or truncated gzip file ({e}); "
                             f"delete it and download it again.") from None
    return raw


def read_idx(path):
    """Read an IDX file (raw or gzip-compressed) into a NumPy array, validating it.

    Args:
      path: the file.

    Returns:
      An array of the file's shape in native byte order (uint8 for MNIST images and labels).

    Raises:
      ValueError naming the file if the magic number, the dimensions or the payload size are
      wrong (a truncated or corrupt download).

    Example:
      images = read_idx("t10k-images-idx3-ubyte.gz")   # (10000, 28, 28) uint8
    """
    path = os.fspath(path)
    raw = _read_bytes(path)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise ValueError(f"read_idx: {path} is not an IDX file (magic bytes {raw[:4].hex()!r}, "
                         f"expected 0000 followed by a type code in "
                         f"{sorted(hex(c) for c in _IDX_DTYPES)} and a rank byte).")
    dtype, ndim = np.dtype(_IDX_DTYPES[raw[2]]), raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"read_idx: {path} is truncated inside its header ({len(raw)} bytes, "
                         f"the header of a rank-{ndim} IDX file needs {header}).")
    shape = tuple(int(d) for d in np.frombuffer(raw, ">u4", ndim, 4))
    expected = header + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) != expected:
        what = "truncated" if len(raw) < expected else "longer than its header says"
        raise ValueError(f"read_idx: {path} is {what}: {len(raw)} bytes, but a {dtype.name} "
                         f"array of shape {shape} needs {expected}; delete the file and "
                         f"download it again.")
    return np.frombuffer(raw, dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def _check_pair(images, labels, img_path, lbl_path):
    if images.ndim != 3 or labels.ndim != 1:
        raise ValueError(f"load_mnist: expected images (N, H, W) and labels (N,), got "
                         f"{images.shape} from {img_path} and {labels.shape} from {lbl_path}.")
    if len(images) != len(labels):
        raise ValueError(f"load_mnist: {img_path} holds {len(images)} images but {lbl_path} "
                         f"holds {len(labels)} labels; one of the files is from another set.")
    if labels.size and (labels.min() < 0 or labels.max() > 9):
        raise ValueError(f"load_mnist: {lbl_path} has labels outside 0..9 "
                         f"(min {labels.min()}, max {labels.max()}).")


def load_mnist(dataset="fashion", split="train", *, path=None, download=True, limit=None):
    """Images and labels of MNIST or Fashion-MNIST.

    Where the files come from: `path` if given (a directory holding the four
    `*-idx?-ubyte[.gz]` files), else `$FNAD_DATA_DIR/<name>`, else the cache directory
    (`$FNAD_CACHE_DIR` or `~/.cache/fnad`)`/<name>`, else a download from the data set's
    public address into the cache, checked against its published SHA-256 (see
    `fnad_nn.data.SOURCES`). `<name>` is "mnist" or "fashion-mnist".

    Args:
      dataset: "fashion" (Fashion-MNIST) or "mnist".
      split: "train" (60000 examples) or "test" (10000).
      path: optional directory with the files.
      download: whether a missing file may be downloaded.
      limit: optional number of leading examples to keep (small slices for tests).

    Returns:
      `(images, labels)`: uint8 arrays `(N, 28, 28)` and `(N,)`.

    Example:
      x, y = load_mnist("fashion", "test")
      x = x.reshape(len(x), -1).astype(np.float32) / 255
    """
    name = _DATASETS.get(str(dataset).lower())
    if name is None:
        raise ValueError(f"load_mnist: unknown dataset {dataset!r}; use 'fashion' or 'mnist'.")
    if split not in ("train", "test"):
        raise ValueError(f"load_mnist: split={split!r} must be 'train' or 'test'.")
    files = [_FILES[split, "images"], _FILES[split, "labels"]]
    img_path, lbl_path = resolve_files(name, files, path=path, download=download)
    images, labels = read_idx(img_path), read_idx(lbl_path)
    _check_pair(images, labels, img_path, lbl_path)
    if limit is not None:
        images, labels = images[:limit], labels[:limit]
    return images, labels
