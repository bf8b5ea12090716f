"""fnad.export.onnx: the exported MLP, CNN and GPT forward run in onnxruntime and match
fnad to 1e-5 (float32); the elementwise, reduction, indexing and shape rules one by one;
an uncovered primitive is refused by name."""

import sys
from pathlib import Path

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad_nn as nn
from fnad_nn import models

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import _mnist  # noqa: E402  (the MNIST examples' models)


def run(model, *args):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    flat = fnad.tree_leaves(args)
    return sess.run(None, {f"input_{i}": np.asarray(a) for i, a in enumerate(flat)})


def check(f, *args, tol=1e-5, path=None):
    model = fnad.export.onnx(f, *args, path=path)
    got = run(model, *args)
    want = fnad.tree_leaves(f(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, atol=tol, rtol=tol)
    return model


def images(n=3):
    return np.random.default_rng(0).normal(size=(n, 1, 28, 28)).astype(np.float32)


def test_mlp_example(tmp_path):
    params = _mnist.init_mlp(fnad.random.PRNGKey(0), (64, 32))
    check(lambda x: _mnist.mlp(params, x), images(), path=tmp_path / "mlp.onnx")
    assert (tmp_path / "mlp.onnx").stat().st_size > 784 * 64 * 4  # the weights are inside


def test_cnn_example():
    params = _mnist.init_cnn(fnad.random.PRNGKey(1), 4, 8, 16)
    check(lambda x: _mnist.cnn(params, x), images())


def test_conv_and_pool_variants():
    k = fnad.random.PRNGKey(2)
    p = nn.init_conv2d(k, 3, 4, 3)
    x = np.random.default_rng(1).normal(size=(2, 3, 9, 9)).astype(np.float32)
    check(lambda x: nn.conv2d(p, x, stride=2, padding=1), x)
    check(lambda x: nn.conv2d(p, x, dilation=2), x)
    check(lambda x: nn.max_pool2d(x, 3, stride=2, padding=1), x)
    check(lambda x: nn.avg_pool2d(x, 2), x)


@pytest.mark.parametrize("kw", [
    dict(positions="learned", norm="layer", activation="gelu_tanh"),
    dict(positions="sinusoidal", norm="rms", activation="swiglu", tie_embeddings=False),
    dict(positions="rotary", norm="layer", activation="gelu"),
    dict(positions="learned", norm="rms", activation="silu", bias=False),
], ids=["gpt2", "sinusoidal-rms-swiglu", "rotary-gelu", "rms-silu-nobias"])
def test_gpt_forward(kw):
    config = models.GPTConfig(vocab=50, d_model=32, n_heads=4, n_layers=2, max_len=16, **kw)
    params = models.init_gpt(fnad.random.PRNGKey(3), config)
    ids = np.random.default_rng(2).integers(0, 50, size=(2, 9))
    check(lambda t: models.gpt(params, config, t), ids)


def test_seq2seq_forward_with_padding():
    config = models.Seq2SeqConfig(src_vocab=30, tgt_vocab=30, d_model=16, n_heads=2,
                                  max_len=12)
    params = models.init_seq2seq(fnad.random.PRNGKey(4), config)
    src = np.array([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12]])
    tgt = np.array([[1, 4, 5, 6], [1, 7, 8, 9]])
    check(lambda s, t: models.seq2seq(params, config, s, t), src, tgt)


def test_primitive_rules_one_by_one():
    x = np.linspace(0.1, 2.0, 24, dtype=np.float32).reshape(2, 3, 4)
    check(lambda x: (fnp.abs(x) / x - x ** 2 + fnp.maximum(x, 0.5), fnp.exp(x), fnp.log(x),
                     fnp.where(x > 1, x, -x), fnp.sqrt(x), fnp.square(x), 1 - x,
                     fnp.clip(x, 0.5, 1.5), fnp.minimum(x, 1.0), fnp.tanh(x),
                     nn.relu(x - 1), nn.gelu(x), nn.sigmoid(x), nn.softplus(x)), x)
    check(lambda x: (fnp.sum(x, axis=0), fnp.max(x), fnp.mean(x, axis=(0, 2)),
                     fnp.min(x, axis=-1, keepdims=True), nn.softmax(x), nn.log_softmax(x)), x)
    check(lambda x: (x[:, ::-1], x[None, 1:, 1], x[..., 2], x[-1, ::2, 1:3], x[:, 2:0:-1],
                     fnp.swapaxes(x, 0, 2), fnp.transpose(x), x.astype(np.float64),
                     fnp.broadcast_to(x[:, :1], (2, 3, 4)), fnp.squeeze(x[None]),
                     fnp.stack([x, x]), fnp.concatenate([x, x], axis=-1),
                     fnp.expand_dims(x, 1), fnp.reshape(x, (4, -1)), x @ x[0].T), x)
    sp = pytest.importorskip("fnad.scipy.special")
    check(lambda x: (fnp.exp2(x), fnp.sin(x), fnp.cos(x), fnp.floor(x), fnp.ceil(x),
                     fnp.sign(x - 1), fnp.reciprocal(x), fnp.logical_and(x > 1, x < 2),
                     fnp.logical_or(x > 1, x < 0.5), fnp.zeros_like(x), fnp.ones_like(x),
                     fnp.amax(x, axis=0), fnp.amin(x), fnp.ravel(x), sp.erf(x),
                     fnp.equal(x, 1), fnp.less(x, 1), fnp.less_equal(x, 1),
                     fnp.greater_equal(x, 1)), x)
    ids = np.array([[0, 2], [1, 1]])
    table = np.arange(12, dtype=np.float32).reshape(3, 4)
    check(lambda i: (nn.embedding({"w": table}, i), i != 1, ~(i == 0), i * 2), ids)


def test_uncovered_primitives_are_refused_by_name():
    x = np.ones((3, 3), np.float32)
    with pytest.raises(NotImplementedError, match="'cumsum'"):
        fnad.export.onnx(lambda x: fnp.cumsum(x, axis=0), x)
    with pytest.raises(NotImplementedError, match="not with array indices mixed"):
        fnad.export.onnx(lambda x: x[np.array([0, 2]), 1:], x)
    with pytest.raises(NotImplementedError, match=r"'max' is exported, but not with .*initial"):
        fnad.export.onnx(lambda x: fnp.max(x, axis=0, initial=5.0), x)


def test_covered_list_is_documented():
    text = (Path(__file__).resolve().parents[2] / "docs" / "interop.md").read_text()
    missing = [p for p in fnad.export.ONNX_PRIMITIVES if f"`{p}`" not in text]
    assert not missing, f"docs/interop.md does not list {missing}"
