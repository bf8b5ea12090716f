"""Character-level corpora: vocabulary, encode/decode, a train/validation split, batches."""

import numpy as np

from ._batches import check_source, randint, shard_rows
from ._sources import resolve_files

__all__ = ["CharCorpus", "load_tinyshakespeare"]


class Splits:
    """A corpus's `train` and `val` id arrays and random windows of them (CharCorpus and
    TokenCorpus)."""

    def split(self, name):
        if name not in ("train", "val"):
            raise ValueError(f"{type(self).__name__}: split {name!r} must be 'train' or 'val'.")
        return self.train if name == "train" else self.val

    def batch(self, split, batch_size, block_size, *, key=None, rng=None, shard=False):
        """A random batch of `(inputs, targets)`, each `(batch_size, block_size)` int32, the
        targets being the inputs shifted one id on.

        Args:
          split: "train" or "val".
          batch_size, block_size: the shape (`batch_size` of the global batch, with `shard`).
          key: a `fnad.random.PRNGKey`, or
          rng: a `numpy.random.Generator`.
          shard: return only this process's rows of the global batch (`shard_rows`): with
            the same key on every process, each reads a disjoint, equal part of it.
        """
        check_source(f"{type(self).__name__}.batch", key, rng)
        data = self.split(split)
        if len(data) <= block_size:
            raise ValueError(f"{type(self).__name__}.batch: the {split} split has {len(data)} "
                             f"ids, too few for block_size={block_size}; lower block_size.")
        starts = randint(key, rng, (batch_size,), len(data) - block_size)
        if shard:
            starts = shard_rows(starts, what=f"{type(self).__name__}.batch")
        idx = starts[:, None] + np.arange(block_size + 1)
        window = data[idx]
        return window[:, :-1], window[:, 1:]


class CharCorpus(Splits):
    """A text as integer ids over its sorted character vocabulary, split into a leading
    training part and a trailing validation part.

    Attributes:
      chars: the vocabulary (sorted characters); `vocab_size` its length.
      train, val: int32 id arrays (the first `1 - val_fraction` of the text, and the rest).

    Example:
      corpus = CharCorpus(load_tinyshakespeare())
      x, y = corpus.batch("train", 32, 128, key=fnad.random.PRNGKey(0))   # y is x shifted
    """

    def __init__(self, text, *, val_fraction=0.1):
        if not isinstance(text, str) or not text:
            raise ValueError("CharCorpus: text must be a non-empty str.")
        if not 0.0 <= val_fraction < 1.0:
            raise ValueError(f"CharCorpus: val_fraction={val_fraction} must be in [0, 1).")
        self.chars = "".join(sorted(set(text)))
        self._index = {c: i for i, c in enumerate(self.chars)}
        self._lookup = np.frombuffer(self.chars.encode("utf-32-le"), np.uint32)
        ids = self.encode(text)
        n_train = int(round(len(ids) * (1.0 - val_fraction)))
        self.train, self.val = ids[:n_train], ids[n_train:]

    @property
    def vocab_size(self):
        return len(self.chars)

    def encode(self, text):
        """The int32 ids of the characters of `text`."""
        codes = np.frombuffer(text.encode("utf-32-le"), np.uint32)
        pos = np.searchsorted(self._lookup, codes)
        pos = np.minimum(pos, len(self._lookup) - 1)
        bad = self._lookup[pos] != codes
        if bad.any():
            unknown = sorted({chr(c) for c in codes[bad]})
            raise ValueError(f"CharCorpus.encode: characters {unknown[:10]!r} are not in the "
                             f"vocabulary of {self.vocab_size} characters.")
        return pos.astype(np.int32)

    def decode(self, ids):
        """The text of a sequence of ids."""
        ids = np.asarray(ids).ravel()
        if ids.size and (ids.min() < 0 or ids.max() >= self.vocab_size):
            raise ValueError(f"CharCorpus.decode: ids must lie in [0, {self.vocab_size}), got "
                             f"min {ids.min()} and max {ids.max()}.")
        return "".join(self.chars[i] for i in ids)


def load_tinyshakespeare(*, path=None, download=True):
    """The TinyShakespeare text (1,115,394 characters) as a str.

    Found as `input.txt` in `path`, `$FNAD_DATA_DIR/tinyshakespeare`, the cache
    (`~/.cache/fnad/tinyshakespeare`), or downloaded from Karpathy's char-rnn repository with
    its SHA-256 checked.

    Example:
      corpus = CharCorpus(load_tinyshakespeare())
    """
    [file] = resolve_files("tinyshakespeare", ["input.txt"], path=path, download=download)
    with open(file, encoding="utf-8") as f:
        return f.read()
