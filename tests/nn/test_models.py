"""fnad_nn.models: KV-cached logits equal uncached ones at every step, greedy generation is
the same with and without the cache, per-row EOS, shapes, gradients, and a short training-run
parity against an identical PyTorch GPT and Seq2Seq (float64)."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

import fnad
from fnad.test_util import check_grads
from fnad_nn import models as M

KEY = fnad.random.PRNGKey(0)
TOL = {np.float64: 1e-12, np.float32: 1e-5}


def _gpt(dtype=np.float64, **kw):
    c = M.GPTConfig(**{**dict(vocab=13, d_model=16, n_heads=2, n_layers=2, max_len=24,
                              dtype=dtype), **kw})
    return M.init_gpt(KEY, c), c


def _s2s(dtype=np.float64, **kw):
    c = M.Seq2SeqConfig(**{**dict(src_vocab=15, tgt_vocab=15, d_model=16, n_heads=2,
                                  n_enc_layers=2, n_dec_layers=2, max_len=16, dtype=dtype),
                           **kw})
    return M.init_seq2seq(KEY, c), c


def _tokens(shape, vocab, seed=0, low=0):
    return np.random.default_rng(seed).integers(low, vocab, shape)


def _source(b=3, s=7, vocab=15):
    src = _tokens((b, s), vocab, seed=1, low=1)
    src[0, 4:] = 0  # rows with different padding
    src[1, 6:] = 0
    return src


GPT_VARIANTS = [dict(positions="learned"), dict(positions="sinusoidal"),
                dict(positions="rotary", rope_base=500.0, rope_scale=2.0),
                dict(norm="rms", activation="swiglu", tie_embeddings=False),
                dict(activation="relu", bias=False, positions="rotary")]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("kw", GPT_VARIANTS, ids=lambda kw: "-".join(map(str, kw.values())))
def test_gpt_cached_logits_equal_uncached_at_every_step(kw, dtype):
    params, c = _gpt(dtype, **kw)
    x = _tokens((3, 10), c.vocab)
    full = M.gpt(params, c, x)
    assert full.shape == (3, 10, c.vocab) and full.dtype == dtype
    logits, cache = M.gpt(params, c, x[:, :4], cache=M.init_gpt_cache(params, c, 3))
    steps = [logits]
    for t in range(4, 10):
        logits, cache = M.gpt(params, c, x[:, t:t + 1], cache=cache)
        steps.append(logits)
    cached = np.concatenate(steps, axis=1)
    scale = np.abs(full).max()
    assert np.abs(cached - full).max() <= TOL[dtype] * scale
    assert cache[0]["length"] == 10 and cache[0]["k"].shape == (3, 2, c.max_len, 8)


S2S_VARIANTS = [dict(), dict(shared_tok=True, rope_encoder=True, rope_decoder=True,
                             rope_cross_q=True, rope_cross_k=True),
                dict(positions="learned", rope_cross_q=True, norm="rms", activation="gelu"),
                dict(positions="none", rope_decoder=True, rope_cross_k=True)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("kw", S2S_VARIANTS, ids=["plain", "shared-rope-all", "learned-rms",
                                                  "rope-dec-crossk"])
def test_seq2seq_cached_logits_equal_uncached_at_every_step(kw, dtype):
    params, c = _s2s(dtype, **kw)
    src, tgt = _source(), _tokens((3, 8), c.tgt_vocab, seed=2)
    full = M.seq2seq(params, c, src, tgt)
    assert full.shape == (3, 8, c.tgt_vocab)
    cache = M.init_seq2seq_cache(params, c, M.encode(params, c, src), src)
    steps = []
    for t in range(8):
        logits, cache = M.decode(params, c, None, None, tgt[:, t:t + 1], cache=cache)
        steps.append(logits)
    assert np.abs(np.concatenate(steps, axis=1) - full).max() <= TOL[dtype] * np.abs(full).max()


def test_seq2seq_never_attends_to_source_padding():
    params, c = _s2s(rope_cross_k=True)
    src, tgt = _source(), _tokens((3, 5), 15, seed=2)
    other = src.copy()
    other[0, 4:] = 0  # already pad: change what lies beyond it to other padding lengths
    a = M.seq2seq(params, c, src, tgt)
    longer = np.concatenate([src, np.zeros((3, 3), src.dtype)], axis=1)
    b = M.seq2seq(params, c, longer, tgt)  # more padding changes nothing
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)


@pytest.mark.parametrize("model", ["gpt-learned", "gpt-rotary", "seq2seq"])
def test_greedy_generation_same_with_and_without_cache(model):
    if model == "seq2seq":
        params, c = _s2s(rope_decoder=True, rope_cross_q=True)
        prompt, kw = _source(), dict(bos_id=1)
    else:
        params, c = _gpt(positions=model.split("-")[1])
        prompt, kw = _tokens((4, 5), c.vocab), {}
    a = M.generate(params, c, prompt, max_new=10, temperature=0, **kw)
    b = M.generate(params, c, prompt, max_new=10, temperature=0, use_cache=False, **kw)
    np.testing.assert_array_equal(a, b)
    assert a.shape == ((4, 15) if model != "seq2seq" else (3, 10))
    if model != "seq2seq":
        np.testing.assert_array_equal(a[:, :5], prompt)
    # greedy continues with the argmax of the uncached logits
    if model != "seq2seq":
        np.testing.assert_array_equal(a[:, 5], M.gpt(params, c, prompt)[:, -1].argmax(-1))


def test_sampling_with_and_without_cache_and_top_k_one_is_greedy():
    params, c = _gpt(positions="rotary")
    prompt = _tokens((4, 3), c.vocab)
    kw = dict(key=fnad.random.PRNGKey(3), max_new=12, temperature=0.8, top_k=5, top_p=0.9)
    a = M.generate(params, c, prompt, **kw)
    np.testing.assert_array_equal(a, M.generate(params, c, prompt, use_cache=False, **kw))
    np.testing.assert_array_equal(a, M.generate(params, c, prompt, **kw))  # same key
    greedy = M.generate(params, c, prompt, max_new=12, temperature=0)
    np.testing.assert_array_equal(
        greedy, M.generate(params, c, prompt, key=KEY, max_new=12, top_k=1))
    np.testing.assert_array_equal(
        greedy, M.generate(params, c, prompt, key=KEY, max_new=12, top_p=1e-9))


def test_sample_logits_filters_and_survives_extreme_temperatures():
    logits = np.array([[0.0, 1.0, 5.0, 2.0, -1.0]] * 2000)
    keys = fnad.random.PRNGKey(1)
    ids = M.sample_logits(keys, logits, top_k=2)
    assert set(np.unique(ids)) == {2, 3}
    ids = M.sample_logits(keys, logits, top_p=0.97)  # p = .94, .047, .017, ... -> top 2
    assert set(np.unique(ids)) == {2, 3}
    assert set(M.sample_logits(keys, logits * 1e6, temperature=1e-6)) == {2}
    ids = M.sample_logits(keys, logits, temperature=1e6)  # near-uniform, no NaN
    assert set(np.unique(ids)) == {0, 1, 2, 3, 4}
    with pytest.raises(ValueError, match="temperature"):
        M.sample_logits(keys, logits, temperature=-1)


def _first_eos_steps(out, eos):
    return [int(np.argmax(r == eos)) if (r == eos).any() else None for r in out]


@pytest.mark.parametrize("model", ["gpt", "seq2seq"])
def test_eos_rows_finish_at_different_steps(model):
    if model == "gpt":
        params, c = _gpt(positions="rotary")
        prompt, kw, n0 = _tokens((6, 2), c.vocab, seed=5), {}, 2
    else:
        params, c = _s2s()
        prompt, kw, n0 = _source(6, 5), dict(bos_id=1), 0
    gen = dict(key=fnad.random.PRNGKey(7), max_new=16, temperature=1.5, **kw)
    free = M.generate(params, c, prompt, **gen)[:, n0:]
    # an id every row emits, at different first steps
    eos = next(t for t in range(c.vocab if model == "gpt" else c.tgt_vocab)
               if all(s is not None for s in _first_eos_steps(free, t))
               and len(set(_first_eos_steps(free, t))) > 1)
    firsts = _first_eos_steps(free, eos)
    out = M.generate(params, c, prompt, eos_id=eos, pad_id=-1, **gen)[:, n0:]
    assert out.shape[1] == max(firsts) + 1  # stops when the last row is done
    for row, f, ref in zip(out, firsts, free):
        np.testing.assert_array_equal(row[:f + 1], ref[:f + 1])
        assert (row[f + 1:] == -1).all()


def test_generate_errors_say_what_to_do():
    params, c = _gpt()
    with pytest.raises(ValueError, match="max_len"):
        M.generate(params, c, _tokens((1, 20), 13), max_new=10, temperature=0)
    with pytest.raises(ValueError, match="key="):
        M.generate(params, c, _tokens((1, 2), 13), max_new=2)
    with pytest.raises(ValueError, match=r"prompt\[None\]"):
        M.generate(params, c, _tokens((3,), 13), max_new=2, temperature=0)
    s2s_params, s2s = _s2s()
    with pytest.raises(ValueError, match="bos_id"):
        M.generate(s2s_params, s2s, _source(), max_new=2, temperature=0)
    with pytest.raises(ValueError, match="n_heads"):
        M.GPTConfig(vocab=5, d_model=10, n_heads=3)
    with pytest.raises(ValueError, match="positions"):
        M.GPTConfig(vocab=5, positions="alibi")
    with pytest.raises(ValueError, match="shared_tok"):
        M.Seq2SeqConfig(src_vocab=5, tgt_vocab=6, shared_tok=True)
    with pytest.raises(TypeError, match="integer"):
        M.gpt(params, c, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="key="):
        M.gpt(*_gpt(dropout=0.1), _tokens((2, 3), 13), train=True)


def test_tied_head_is_one_leaf_and_gets_both_gradients():
    params, c = _gpt()
    assert "head" not in params
    untied, cu = _gpt(tie_embeddings=False)
    n = sum(x.size for x in fnad.tree_leaves(params))
    assert n == sum(x.size for x in fnad.tree_leaves(untied)) - c.d_model * c.vocab - c.vocab
    x, y = _tokens((2, 6), 13), _tokens((2, 6), 13, seed=3)
    g = fnad.grad(M.token_loss)(params, c, x, y)
    unused = np.setdiff1d(np.arange(13), x)
    assert np.abs(g["tok"]["w"][unused]).max() > 0  # rows never embedded still learn via the head


def test_dropout_uses_the_key_and_is_off_in_eval():
    params, c = _gpt(dropout=0.2)
    x = _tokens((2, 6), 13)
    a = M.gpt(params, c, x, key=fnad.random.PRNGKey(1), train=True)
    b = M.gpt(params, c, x, key=fnad.random.PRNGKey(2), train=True)
    assert np.abs(a - b).max() > 0
    np.testing.assert_array_equal(a, M.gpt(params, c, x, key=fnad.random.PRNGKey(1), train=True))
    np.testing.assert_array_equal(M.gpt(params, c, x), M.gpt(params, c, x, key=KEY))


@pytest.mark.parametrize("model", ["gpt", "seq2seq", "rnn_lm", "rnn_seq2seq"])
def test_check_grads_tiny_models(model):
    if model == "gpt":
        c = M.GPTConfig(vocab=5, d_model=4, n_heads=2, n_layers=1, max_len=4,
                        positions="rotary", activation="swiglu", norm="rms", dtype=np.float64)
        params, inputs = M.init_gpt(KEY, c), _tokens((2, 3), 5)
    elif model == "seq2seq":
        c = M.Seq2SeqConfig(src_vocab=6, tgt_vocab=6, d_model=4, n_heads=2, n_enc_layers=1,
                            n_dec_layers=1, max_len=4, shared_tok=True, rope_cross_q=True,
                            rope_cross_k=True, dtype=np.float64)
        params, inputs = M.init_seq2seq(KEY, c), (_source(2, 4, 6), _tokens((2, 3), 6))
    elif model == "rnn_lm":
        c = M.RNNLMConfig(vocab=5, d_embed=3, d_hidden=3, n_layers=2, cell="lstm",
                          dtype=np.float64)
        params, inputs = M.init_rnn_lm(KEY, c), _tokens((2, 3), 5)
    else:
        c = M.RNNSeq2SeqConfig(src_vocab=6, tgt_vocab=5, d_embed=3, enc_hidden=4, dec_hidden=3,
                               enc_layers=2, dec_layers=1, cell="gru", dtype=np.float64)
        params, inputs = M.init_rnn_seq2seq(KEY, c), (_tokens((2, 4), 6), _tokens((2, 3), 5))
    targets = _tokens((2, 3), 5, seed=9)
    check_grads(lambda p: M.token_loss(p, c, inputs, targets), (params,), order=1,
                modes=("rev",))


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_rnn_models_shapes_state_and_generation(cell):
    c = M.RNNLMConfig(vocab=7, d_embed=5, d_hidden=5, n_layers=2, cell=cell,
                      tie_embeddings=True, dtype=np.float64)
    params = M.init_rnn_lm(KEY, c)
    x = _tokens((3, 6), 7)
    logits, state = M.rnn_lm(params, c, x)
    a, s = M.rnn_lm(params, c, x[:, :2])
    b, _ = M.rnn_lm(params, c, x[:, 2:], state=s)
    np.testing.assert_allclose(np.concatenate([a, b], 1), logits, rtol=0, atol=1e-13)
    out = M.generate(params, c, x, max_new=4, temperature=0)
    assert out.shape == (3, 10)
    sc = M.RNNSeq2SeqConfig(src_vocab=7, tgt_vocab=9, enc_hidden=6, dec_hidden=4, enc_layers=2,
                            dec_layers=3, cell=cell, dtype=np.float64)
    sp = M.init_rnn_seq2seq(KEY, sc)
    assert M.rnn_seq2seq(sp, sc, x, _tokens((3, 4), 9)).shape == (3, 4, 9)
    assert M.generate(sp, sc, x, max_new=5, temperature=0, bos_id=1).shape == (3, 5)


def test_evaluate_perplexity_bits_per_char():
    params, c = _gpt()
    data = _tokens((200,), 13)
    batches = list(M.lm_batches(data, 8, 5))
    assert len(batches) == 5 and batches[-1][0].shape == (4, 8)
    np.testing.assert_array_equal(batches[0][1][0], data[1:9])
    val = M.evaluate(params, c, batches)
    per = [float(M.token_loss(params, c, x, y)) * y.size for x, y in batches]
    assert abs(val - sum(per) / sum(y.size for _, y in batches)) < 1e-12
    assert abs(M.perplexity(val) - np.exp(val)) < 1e-9
    assert abs(M.bits_per_char(val) - val / np.log(2)) < 1e-12
    assert abs(val - np.log(13)) < 0.5  # an untrained model is near uniform


@pytest.fixture
def parity(monkeypatch):
    """examples/parity_gpt.py as a module (with examples/ on sys.path for its imports of
    _common and _parity_torch, which are forgotten again afterwards)."""
    examples = pathlib.Path(__file__).parents[2] / "examples"
    monkeypatch.syspath_prepend(str(examples))
    before = set(sys.modules)
    spec = importlib.util.spec_from_file_location("parity_gpt", examples / "parity_gpt.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    yield mod
    for name in set(sys.modules) - before:
        if getattr(sys.modules[name], "__file__", None) and \
                pathlib.Path(sys.modules[name].__file__).parent == examples:
            del sys.modules[name]


@pytest.mark.parametrize("kind", ["gpt", "seq2seq"])
def test_short_training_run_matches_pytorch(kind, parity):
    pg = parity
    data = (np.arange(5000) * 7) % 20  # a learnable sequence
    if kind == "gpt":
        config = M.GPTConfig(vocab=20, d_model=16, n_heads=2, n_layers=2, max_len=12,
                             positions="rotary", dtype=np.float64)
    else:
        config = M.Seq2SeqConfig(src_vocab=23, tgt_vocab=23, d_model=16, n_heads=2,
                                 n_enc_layers=1, n_dec_layers=2, max_len=9, shared_tok=True,
                                 rope_decoder=True, rope_cross_q=True, dtype=np.float64)
    rows = pg.run(kind, config, data, steps=6, batch=4, seq_len=8, lr=1e-2, warmup=2,
                  clip=0.5)
    assert rows[-1][1] < rows[0][1]
    assert max(abs(a - b) for _, a, b in rows) <= 1e-12
