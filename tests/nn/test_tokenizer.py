"""fnad_nn.data.Tokenizer over Hugging Face `tokenizers`: a trained byte-level BPE round-trips
any text, GPT-2's vocab.json + merges.txt encode as transformers' GPT2Tokenizer does, and
TokenCorpus batches its ids."""

import numpy as np
import pytest

from fnad_nn.data import TokenCorpus, Tokenizer

pytest.importorskip("tokenizers")

TEXT = ("ROMEO: But, soft! what light through yonder window breaks?\n"
        "It is the east, and Juliet is the sun.\n") * 30


@pytest.fixture(scope="module")
def bpe():
    return Tokenizer.train_bpe(TEXT, 320)


def test_trained_bpe_round_trips_any_text(bpe):
    assert 257 < bpe.vocab_size <= 320  # fewer when the corpus runs out of merges
    ids = bpe.encode(TEXT[:200])
    assert ids.dtype == np.int32 and len(ids) < 100  # merges learned
    for text in (TEXT[:200], "naïve café ✓ — unseen words\ttabs", ""):
        assert bpe.decode(bpe.encode(text)) == text


def test_save_and_gpt2_files_load_back(bpe, tmp_path):
    bpe.save(tmp_path / "tokenizer.json")
    again = Tokenizer.from_folder(tmp_path)
    np.testing.assert_array_equal(again.encode(TEXT), bpe.encode(TEXT))
    (tmp_path / "gpt2").mkdir()
    bpe.backend.model.save(str(tmp_path / "gpt2"))  # vocab.json + merges.txt
    gpt2 = Tokenizer.from_folder(tmp_path / "gpt2")
    np.testing.assert_array_equal(gpt2.encode(TEXT), bpe.encode(TEXT))
    transformers = pytest.importorskip("transformers")
    ref = transformers.GPT2Tokenizer(str(tmp_path / "gpt2" / "vocab.json"),
                                     str(tmp_path / "gpt2" / "merges.txt"))
    text = "It is the east, and Juliet's window! 42 café<|endoftext|>"
    assert gpt2.encode(text).tolist() == ref.encode(text)
    assert gpt2.encode(text)[-1] == bpe.backend.token_to_id("<|endoftext|>")


def test_token_corpus_splits_and_batches(bpe):
    corpus = TokenCorpus(TEXT, bpe, val_fraction=0.2)
    assert corpus.train_chars + corpus.val_chars == len(TEXT)
    assert corpus.decode(corpus.val) == TEXT[corpus.train_chars:]
    x, y = corpus.batch("train", 3, 8, rng=np.random.default_rng(0))
    assert x.shape == y.shape == (3, 8)
    np.testing.assert_array_equal(x[:, 1:], y[:, :-1])


def test_errors_say_what_to_do(bpe, tmp_path):
    with pytest.raises(ValueError, match="vocab_size=100 is below"):
        Tokenizer.train_bpe(TEXT, 100)
    with pytest.raises(FileNotFoundError, match="tokenizer.json nor vocab.json"):
        Tokenizer.from_folder(tmp_path)
    with pytest.raises(ValueError, match=r"ids must lie in \[0, "):
        bpe.decode([5, bpe.vocab_size])
