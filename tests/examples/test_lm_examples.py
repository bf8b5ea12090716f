"""Smoke runs of the model examples (train_gpt, rnn_lm, seq2seq): tiny configs, seconds each,
outputs in tmp dirs; the character LMs skip without TinyShakespeare."""

import json

import numpy as np
import pytest

import fnad

from .conftest import DATA

needs_shakespeare = pytest.mark.skipif(
    not (DATA / "tinyshakespeare" / "input.txt").is_file(),
    reason=f"no tinyshakespeare/input.txt under {DATA}: set FNAD_DATA_DIR to a directory "
           "holding it to run the character language-model smoke tests")


@pytest.mark.parametrize("name", ["train_gpt", "rnn_lm", "seq2seq"])
def test_help(example, name, capsys):
    with pytest.raises(SystemExit) as e:
        example(name).main(["--help"])
    assert e.value.code == 0
    assert "usage: python examples/" in capsys.readouterr().out


def lm_args(tmp_path, *extra):
    return ["--data-dir", str(DATA / "tinyshakespeare"), "--text-limit", "20000",
            "--no-progress", "--plot", "none", "--eval-batches", "2", *extra]


def gpt_args(tmp_path, *extra):
    return lm_args(tmp_path, "--preset", "tiny", "--sample-chars", "0", *extra)


@needs_shakespeare
def test_train_gpt_smoke(example, tmp_path):
    out, png = tmp_path / "gpt.json", tmp_path / "gpt.png"
    args = lm_args(tmp_path, "--preset", "tiny", "--steps", "6", "--eval-every", "3",
                   "--sample-chars", "40", "--out", str(out))
    args[args.index("--plot") + 1] = str(png)
    r = example("train_gpt").main(args)
    assert json.loads(out.read_text()) == r and r["complete"] is True
    assert [h["step"] for h in r["history"]] == [3, 6] and r["goal"] is None
    assert 0 < r["value"] < 10 and r["bits_per_char"] == pytest.approx(r["value"] / np.log(2))
    assert len(r["sample"]) == 41      # the one-character prompt and 40 generated ones
    pytest.importorskip("matplotlib")
    assert png.stat().st_size > 1000


@needs_shakespeare
def test_train_gpt_with_a_bpe_tokenizer_reports_nats_per_character(example, tmp_path):
    pytest.importorskip("tokenizers")
    r = example("train_gpt").main(gpt_args(tmp_path, "--steps", "4", "--eval-every", "2",
                                           "--tokenizer", "bpe", "--vocab-size", "300",
                                           "--sample-chars", "5"))
    assert r["tokenizer"] == "bpe" and 257 < r["vocab_size"] <= 300
    assert 0.2 < r["tokens_per_char"] < 1  # merges were learned: fewer tokens than characters
    assert r["value"] == pytest.approx(r["val_loss_per_token"] * r["tokens_per_char"])
    assert "BPE" in r["metric"] and r["goal"] is None and r["sample"]


@needs_shakespeare
def test_train_gpt_sample_longer_than_context(example, tmp_path):
    # the tiny preset's context is 16: a 40-character sample is made in pieces
    lm = example("_lm")
    gpt = example("train_gpt")
    args = gpt.parse(gpt_args(tmp_path, "--sample-chars", "40"))
    corpus, _ = lm.load_corpus(args)
    config = gpt.models.GPTConfig(vocab=corpus.vocab_size, d_model=16, n_heads=2, n_layers=1,
                                  max_len=16)
    params = gpt.models.init_gpt(fnad.random.PRNGKey(0), config)
    text = lm.sample(params, config, corpus, args)
    assert len(text) == 41 and text[0] == "\n"


def leaves_equal(a, b):
    la, lb = fnad.tree_leaves(a), fnad.tree_leaves(b)
    return len(la) == len(lb) and all(np.array_equal(x, y) for x, y in zip(la, lb))


@needs_shakespeare
@pytest.mark.parametrize("name", ["train_gpt", "rnn_lm"])
def test_resume_is_bit_for_bit(example, tmp_path, name):
    """4 steps straight == 2 steps, stop, resume from the checkpoint, 2 more (params,
    optimizer state and key exactly equal; dropout is on in the GPT's tiny preset)."""
    mod = example(name)
    tiny = (["--preset", "tiny", "--sample-chars", "0"] if name == "train_gpt" else
            ["--hidden", "16", "--embed", "8", "--context", "12", "--batch-size", "4",
             "--dropout", "0.1", "--sample-chars", "0", "--warmup", "1"])
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    common = lm_args(tmp_path, *tiny, "--steps", "4", "--eval-every", "2")
    mod.main(common + ["--checkpoint", str(a), "--out", str(tmp_path / "a.json")])
    r = mod.main(common + ["--checkpoint", str(b), "--stop-at", "2",
                           "--out", str(tmp_path / "b.json")])
    assert r["complete"] is False and fnad.load(b)["step"] == 2
    r = mod.main(common + ["--checkpoint", str(b), "--resume", "--out", str(tmp_path / "c.json")])
    sa, sb = fnad.load(a), fnad.load(b)
    assert sa["step"] == sb["step"] == 4 and r["complete"] is True
    assert leaves_equal(sa["params"], sb["params"])
    assert leaves_equal(sa["opt_state"], sb["opt_state"])
    assert np.array_equal(sa["key"], sb["key"])
    va = [h["val_loss"] for h in json.loads(sa["history"])]
    assert va == [h["val_loss"] for h in json.loads(sb["history"])]


@pytest.mark.parametrize("name", ["train_gpt", "rnn_lm"])
def test_resume_without_checkpoint_is_a_clear_error(example, tmp_path, name):
    with pytest.raises(SystemExit, match="--resume needs an existing --checkpoint"):
        example(name).main(["--resume", "--checkpoint", str(tmp_path / "missing.npz"),
                            "--data-dir", str(tmp_path)])


@needs_shakespeare
def test_rnn_lm_smoke(example, tmp_path):
    out = tmp_path / "rnn.json"
    r = example("rnn_lm").main(lm_args(tmp_path, "--cell", "gru", "--hidden", "16", "--embed",
                                       "8", "--context", "16", "--batch-size", "4", "--steps",
                                       "4", "--eval-every", "2", "--sample-chars", "30",
                                       "--out", str(out)))
    assert json.loads(out.read_text()) == r and len(r["history"]) == 2
    assert 0 < r["value"] < 10 and len(r["sample"]) == 31 and "GRU 1x16" in r["metric"]


def test_seq2seq_batches_reverse_with_padding(example):
    s2s = example("seq2seq")
    args = s2s.build_parser().parse_args(["--min-len", "2", "--max-len", "5"])
    src, tgt_in, tgt_out = s2s.make_batch(fnad.random.PRNGKey(3), 50, args)
    assert src.shape == (50, 5) and tgt_in.shape == tgt_out.shape == (50, 6)
    for s, ti, to in zip(src, tgt_in, tgt_out):
        body = s[s != s2s.PAD]
        n = len(body)
        assert 2 <= n <= 5 and (s[n:] == s2s.PAD).all() and (body >= 3).all()
        assert list(to[:n]) == list(body[::-1]) and to[n] == s2s.EOS and (to[n + 1:] == 0).all()
        assert ti[0] == s2s.BOS and list(ti[1:n + 1]) == list(to[:n]) and (ti[n + 1:] == 0).all()


def test_seq2seq_smoke(example, tmp_path):
    out = tmp_path / "s2s.json"
    r = example("seq2seq").main(["--steps", "6", "--eval-every", "3", "--test-size", "20",
                                 "--d-model", "16", "--heads", "2", "--layers", "1",
                                 "--max-len", "6", "--no-progress", "--out", str(out)])
    assert json.loads(out.read_text()) == r and r["goal"] == ">= 0.99"
    assert [h["step"] for h in r["history"]] == [3, 6] and 0.0 <= r["value"] <= 1.0


def test_seq2seq_exact_match_counts_whole_rows(example, monkeypatch):
    s2s = example("seq2seq")
    want = np.array([[5, 4, 2, 0], [3, 2, 0, 0]])
    got = np.array([[5, 4, 2], [3, 3, 2]])         # row 0 right (shorter, padded), row 1 wrong
    monkeypatch.setattr(s2s.models, "generate", lambda *a, **k: got)
    assert s2s.exact_match(None, None, np.zeros((2, 3), np.int64), want) == 0.5
