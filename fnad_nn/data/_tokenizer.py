"""Subword tokenizers from Hugging Face's `tokenizers` library (an optional dependency, the
`interop` extra): GPT-2's byte-level BPE from `vocab.json` + `merges.txt` or any
`tokenizer.json`, and byte-level BPE trained on a local corpus. fnad writes no BPE itself.
"""

import os

import numpy as np

from ._text import Splits

__all__ = ["Tokenizer", "TokenCorpus"]

ENDOFTEXT = "<|endoftext|>"


def _tokenizers(fname):
    try:
        import tokenizers  # noqa: PLC0415 - optional dependency (the interop extra)
    except ImportError:
        raise ImportError(f"{fname} needs the `tokenizers` package: pip install tokenizers "
                          "(or fnad's interop extra: pip install 'fnad[interop]').") from None
    return tokenizers


def _byte_level(tok, tokenizers):
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tokenizers.decoders.ByteLevel()
    return tok


class Tokenizer:
    """Text to integer ids and back, through a `tokenizers.Tokenizer`.

    Build one with `Tokenizer.from_file` (a tokenizer.json), `Tokenizer.from_gpt2`
    (vocab.json + merges.txt), `Tokenizer.from_folder` (whichever a model folder holds) or
    `Tokenizer.train_bpe` (a byte-level BPE learned from text); `save` writes tokenizer.json.

    Attributes:
      vocab_size: the number of ids (special tokens included).
      backend: the wrapped `tokenizers.Tokenizer`.

    Example:
      tok = Tokenizer.from_folder("gpt2")
      ids = tok.encode("Hello world")       # int32 array [15496, 995]
      tok.decode(ids)                       # "Hello world"
    """

    def __init__(self, backend):
        self.backend = backend

    @classmethod
    def from_file(cls, path):
        """A tokenizer saved as `tokenizer.json` (by `save`, or by `tokenizers`)."""
        tk = _tokenizers("Tokenizer.from_file")
        return cls(tk.Tokenizer.from_file(os.fspath(path)))

    @classmethod
    def from_gpt2(cls, vocab, merges):
        """GPT-2's byte-level BPE from its `vocab.json` and `merges.txt`."""
        tk = _tokenizers("Tokenizer.from_gpt2")
        bpe = tk.models.BPE.from_file(os.fspath(vocab), os.fspath(merges))
        tok = _byte_level(tk.Tokenizer(bpe), tk)
        if tok.token_to_id(ENDOFTEXT) is not None:  # GPT-2's one special token stays whole
            tok.add_special_tokens([ENDOFTEXT])
        return cls(tok)

    @classmethod
    def from_folder(cls, folder):
        """The tokenizer of a Hugging Face model folder: `tokenizer.json` if present, else
        `vocab.json` + `merges.txt`."""
        folder = os.fspath(folder)
        if os.path.exists(os.path.join(folder, "tokenizer.json")):
            return cls.from_file(os.path.join(folder, "tokenizer.json"))
        vocab, merges = (os.path.join(folder, n) for n in ("vocab.json", "merges.txt"))
        if os.path.exists(vocab) and os.path.exists(merges):
            return cls.from_gpt2(vocab, merges)
        raise FileNotFoundError(f"Tokenizer.from_folder: {folder!r} holds neither "
                                "tokenizer.json nor vocab.json + merges.txt.")

    @classmethod
    def train_bpe(cls, texts, vocab_size, *, min_frequency=2, special_tokens=(ENDOFTEXT,)):
        """Learn a byte-level BPE (GPT-2's scheme: any text encodes, nothing is unknown).

        Args:
          texts: a str or an iterable of str (e.g. the lines of a corpus).
          vocab_size: the most ids (fewer when the text runs out of merges), at least
            256 + len(special_tokens) (the bytes and the special tokens).
          min_frequency: the fewest occurrences for a merge.
          special_tokens: tokens with ids of their own, first in the vocabulary.

        Example:
          tok = Tokenizer.train_bpe(load_tinyshakespeare(), 1024)
        """
        tk = _tokenizers("Tokenizer.train_bpe")
        least = 256 + len(special_tokens)
        if vocab_size < least:
            raise ValueError(f"Tokenizer.train_bpe: vocab_size={vocab_size} is below the "
                             f"{least} of the bytes and special tokens; raise it.")
        tok = _byte_level(tk.Tokenizer(tk.models.BPE()), tk)
        trainer = tk.trainers.BpeTrainer(
            vocab_size=vocab_size, min_frequency=min_frequency,
            special_tokens=list(special_tokens), show_progress=False,
            initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet())
        tok.train_from_iterator([texts] if isinstance(texts, str) else texts, trainer)
        return cls(tok)

    @property
    def vocab_size(self):
        return self.backend.get_vocab_size()

    def encode(self, text):
        """The int32 ids of `text`."""
        if not isinstance(text, str):
            raise TypeError(f"Tokenizer.encode: text must be a str, got {type(text).__name__}.")
        return np.asarray(self.backend.encode(text).ids, dtype=np.int32)

    def decode(self, ids):
        """The text of a sequence of ids (special tokens included)."""
        ids = np.asarray(ids).ravel()
        if ids.size and (ids.min() < 0 or ids.max() >= self.vocab_size):
            raise ValueError(f"Tokenizer.decode: ids must lie in [0, {self.vocab_size}), got "
                             f"min {ids.min()} and max {ids.max()}.")
        return self.backend.decode(ids.tolist(), skip_special_tokens=False)

    def save(self, path):
        """Write `tokenizer.json` (readable by `from_file` and by `tokenizers`/transformers)."""
        self.backend.save(os.fspath(path))


class TokenCorpus(Splits):
    """A text as subword ids: its leading `1 - val_fraction` of characters and the rest,
    each encoded with `tokenizer`; batches as `CharCorpus.batch`.

    Attributes:
      tokenizer, vocab_size; train, val: int32 ids; train_chars, val_chars: the characters
      each split encodes (for losses per character: nats/token * tokens / characters).

    Example:
      corpus = TokenCorpus(text, Tokenizer.train_bpe(text[:1_000_000], 1024))
      x, y = corpus.batch("train", 32, 128, key=fnad.random.PRNGKey(0))
    """

    def __init__(self, text, tokenizer, *, val_fraction=0.1):
        if not isinstance(text, str) or not text:
            raise ValueError("TokenCorpus: text must be a non-empty str.")
        if not 0.0 <= val_fraction < 1.0:
            raise ValueError(f"TokenCorpus: val_fraction={val_fraction} must be in [0, 1).")
        cut = int(round(len(text) * (1.0 - val_fraction)))
        self.tokenizer = tokenizer
        self.train, self.val = tokenizer.encode(text[:cut]), tokenizer.encode(text[cut:])
        self.train_chars, self.val_chars = cut, len(text) - cut

    @property
    def vocab_size(self):
        return self.tokenizer.vocab_size

    def encode(self, text):
        return self.tokenizer.encode(text)

    def decode(self, ids):
        return self.tokenizer.decode(ids)
