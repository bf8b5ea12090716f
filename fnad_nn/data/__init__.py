"""fnad_nn.data: the data sets the examples train on, read with NumPy only.

- `load_mnist("fashion" | "mnist", "train" | "test")` and `read_idx` (validated IDX files,
  gzip or raw);
- `CharCorpus` (vocabulary, encode/decode, a 90/10 train/validation split, random batches)
  and `load_tinyshakespeare`;
- `Tokenizer` (subword ids through Hugging Face's `tokenizers`: GPT-2's vocab.json +
  merges.txt, a tokenizer.json, or a byte-level BPE trained on a corpus) and `TokenCorpus`
  (CharCorpus's splits and batches over its ids);
- `minibatches` (shuffled epochs from a `fnad.random` key or a NumPy Generator);
- `shard_rows`, `shard_batch` and the `shard=True` of `minibatches` and `CharCorpus.batch`:
  each process's disjoint, equal part of every global batch (data-parallel training);
- where files come from: `path=`, else `$FNAD_DATA_DIR/<name>`, else the cache
  (`~/.cache/fnad/<name>`), else a checksummed download (`SOURCES`, `download`; never when
  `$FNAD_OFFLINE` is set). Missing files raise `MissingDataError` naming all of them.
"""

from ._batches import minibatches as minibatches
from ._batches import shard_batch as shard_batch
from ._batches import shard_rows as shard_rows
from ._idx import FASHION_MNIST_CLASSES as FASHION_MNIST_CLASSES
from ._idx import MNIST_CLASSES as MNIST_CLASSES
from ._idx import load_mnist as load_mnist
from ._idx import read_idx as read_idx
from ._sources import SOURCES as SOURCES
from ._sources import MissingDataError as MissingDataError
from ._sources import cache_dir as cache_dir
from ._sources import data_dirs as data_dirs
from ._sources import download as download
from ._sources import offline as offline
from ._sources import resolve_files as resolve_files
from ._text import CharCorpus as CharCorpus
from ._text import load_tinyshakespeare as load_tinyshakespeare
from ._tokenizer import Tokenizer as Tokenizer
from ._tokenizer import TokenCorpus as TokenCorpus
