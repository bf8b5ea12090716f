"""Every layer taking `(params, x)` refuses swapped arguments and a single params entry with
a TypeError that names the layer and says what to pass (NumPy's IndexError used to)."""

import re

import numpy as np
import pytest

import fnad
import fnad_nn as nn

K = fnad.random.PRNGKey(0)
X = np.ones((2, 3, 4), np.float32)
IDS = np.array([[1, 2, 3]])
H = np.zeros((2, 5), np.float32)

# name -> (layer, params, the arguments after params); a swapped call puts the first of
# these arguments first and params second
DICT_LAYERS = {
    "linear": (nn.linear, nn.init_linear(K, 4, 3), (X,)),
    "embedding": (nn.embedding, nn.init_embedding(K, 10, 4), (IDS,)),
    "layer_norm": (nn.layer_norm, nn.init_layer_norm(4), (X,)),
    "rms_norm": (nn.rms_norm, nn.init_rms_norm(4), (X,)),
    "batch_norm": (lambda params, x, state: nn.batch_norm(params, state, x),
                   nn.init_batch_norm(4)[0], (X, nn.init_batch_norm(4)[1])),
    "conv2d": (nn.conv2d, nn.init_conv2d(K, 1, 2, 3), (np.ones((1, 1, 5, 5), np.float32),)),
    "positional_embedding": (nn.positional_embedding, nn.init_positional_embedding(K, 8, 4),
                             (X,)),
    "multi_head_attention": (nn.multi_head_attention, nn.init_multi_head_attention(K, 4, 2),
                             (X,)),
    "context_kv": (nn.context_kv, nn.init_multi_head_attention(K, 4, 2), (X,)),
    "feed_forward": (nn.feed_forward, nn.init_feed_forward(K, 4, 8), (X,)),
    "transformer_block": (nn.transformer_block, nn.init_transformer_block(K, 4, 2), (X,)),
    "decoder_block": (nn.decoder_block, nn.init_decoder_block(K, 4, 2), (X, X)),
    "rnn_cell": (nn.rnn_cell, nn.init_rnn_cell(K, 4, 5), (X[:, 0], H)),
    "lstm_cell": (nn.lstm_cell, nn.init_lstm_cell(K, 4, 5), (X[:, 0], (H, H))),
    "gru_cell": (nn.gru_cell, nn.init_gru_cell(K, 4, 5), (X[:, 0], H)),
    "bridge": (nn.bridge, nn.init_bridge(K, 5, 5, 1, 1), (H[None],)),
}
LIST_LAYERS = {
    "mlp": (nn.mlp, nn.init_mlp(K, [4, 3]), (X,), "linear"),
    "rnn": (nn.rnn, nn.init_rnn(K, 4, 5), (X,), "rnn_cell"),
    "stacked_rnn": (nn.stacked_rnn, nn.init_stacked_rnn(K, 4, 5, 2), (X,), "rnn_cell"),
    "lstm": (nn.lstm, nn.init_lstm(K, 4, 5), (X,), "lstm_cell"),
    "gru": (nn.gru, nn.init_gru(K, 4, 5), (X,), "gru_cell"),
}


def _first_array(params):
    return fnad.tree_leaves(params)[0]


@pytest.mark.parametrize("name", list(DICT_LAYERS))
def test_dict_layer_refuses_swapped_arguments_and_one_entry(name):
    layer, params, rest = DICT_LAYERS[name]
    layer(params, *rest)  # the right call works
    with pytest.raises(TypeError, match=rf"^{name}: params must be the dict returned by "
                                        rf"init_\w+.*got an array of shape .*swapped"):
        layer(rest[0], params, *rest[1:])
    entry = _first_array(params)
    shape = re.escape(str(tuple(entry.shape)))
    with pytest.raises(TypeError, match=rf"^{name}: params must be the dict .*got an array of "
                                        rf"shape {shape}.*not one entry such as params\['w'\]"):
        layer(entry, *rest)


@pytest.mark.parametrize("name", list(LIST_LAYERS))
def test_list_layer_refuses_swapped_arguments_and_one_layer(name):
    layer, params, rest, single = LIST_LAYERS[name]
    layer(params, *rest)
    with pytest.raises(TypeError, match=rf"^{name}: params must be the list returned by "
                                        rf"init_{name}.*swapped"):
        layer(rest[0], params, *rest[1:])
    with pytest.raises(TypeError, match=rf"^{name}: .*got one layer's dict; for a single layer "
                                        rf"use {single}"):
        layer(params[0], *rest)
    with pytest.raises(TypeError, match=rf"^{name}: params must be the list .*got an array"):
        layer(_first_array(params), *rest)


def test_linear_messages_in_full():
    params = nn.init_linear(K, 4, 3)
    x = np.ones((2, 4), np.float32)
    with pytest.raises(TypeError) as e:
        nn.linear(x, params)
    assert str(e.value) == (
        "linear: params must be the dict returned by init_linear, got an array of shape (2, 4) "
        "and dtype float32; the arguments look swapped: call linear(params, x), params first.")
    with pytest.raises(TypeError) as e:
        nn.linear(params["w"], x)
    assert str(e.value) == (
        "linear: params must be the dict returned by init_linear, got an array of shape (4, 3) "
        "and dtype float32; pass the whole dict that init_linear returns, not one entry such "
        "as params['w'], as the first argument: linear(params, x).")


def test_params_may_be_any_mapping_and_traced():
    from types import MappingProxyType

    params = nn.init_linear(K, 4, 3, dtype=np.float64)
    x = np.ones((2, 4))
    np.testing.assert_array_equal(nn.linear(MappingProxyType(params), x), nn.linear(params, x))
    g = fnad.grad(lambda p: nn.linear(p, x).sum())(params)  # leaves traced, the dict is not
    assert g["w"].shape == (4, 3)
    assert fnad.jit(nn.linear)(params, x).shape == (2, 3)


# ----------------------------------------------------------------------------- keys and shapes
# Issue 31: deleting "b" from a linear layer's params silently dropped the bias, and a
# misspelt key gave a bare KeyError: 'w' from inside fnad_nn. Every layer checks its keys
# (a layer without a bias keeps "b": None, as init_*(..., bias=False) gives) and shapes.

def _dicts(params, path=()):
    """(path, dict) of every params dict a layer reads, outermost first."""
    if isinstance(params, dict):
        yield path, params
        for k, v in params.items():
            yield from _dicts(v, path + (k,))
    elif isinstance(params, (list, tuple)):
        for i, v in enumerate(params):
            yield from _dicts(v, path + (i,))


def _with(params, path, change):
    """A copy of `params` with `change` applied to the dict at `path`."""
    if not path:
        new = dict(params)
        change(new)
        return new
    new = list(params) if isinstance(params, list) else dict(params)
    new[path[0]] = _with(params[path[0]], path[1:], change)
    return new


def _every_layer():
    for name, (layer, params, rest) in DICT_LAYERS.items():
        yield name, layer, params, rest
    for name, (layer, params, rest, _) in LIST_LAYERS.items():
        yield name, layer, params, rest


CASES = [(name, path, key) for name, layer, params, rest in _every_layer()
         for path, d in _dicts(params) for key in d]


@pytest.mark.parametrize("name,path,key", CASES, ids=[f"{n}-{'.'.join(map(str, p + (k,)))}"
                                                      for n, p, k in CASES])
def test_every_layer_names_a_deleted_or_misspelt_key(name, path, key):
    layer, params, rest = next((lay, p, r) for n, lay, p, r in _every_layer() if n == name)
    gone = _with(params, path, lambda d: d.pop(key))
    with pytest.raises(ValueError, match=rf": params.*has no key {key!r}"):
        layer(gone, *rest)
    typo = _with(params, path, lambda d: d.__setitem__(key.upper(), d.pop(key)))
    with pytest.raises(ValueError, match=rf"no key {key!r} but the unexpected key "
                                         rf"{key.upper()!r} \(a misspelling\?\)"):
        layer(typo, *rest)


@pytest.mark.parametrize("name", [n for n, *_ in _every_layer() if n != "bridge"])
def test_every_layer_refuses_an_extra_key(name):
    layer, params, rest = next((lay, p, r) for n, lay, p, r in _every_layer() if n == name)
    path = next(iter(_dicts(params)))[0]
    extra = _with(params, path, lambda d: d.__setitem__("extra", np.ones(2)))
    with pytest.raises(ValueError, match=r"has the unexpected key 'extra'; it takes the keys"):
        layer(extra, *rest)


def test_linear_messages_for_keys_and_shapes():
    params = nn.init_linear(K, 4, 3)
    x = np.ones((2, 4), np.float32)
    with pytest.raises(ValueError) as e:
        nn.linear({"w": params["w"]}, x)
    assert str(e.value) == (
        "linear: params has no key 'b'. A layer without that part keeps the key with the value "
        "None, as init_linear(..., bias=False) gives: put it back (the keys are 'b', 'w'), or "
        "initialise the layer with bias=False.")
    with pytest.raises(ValueError, match=r"linear: params\['b'\] has shape \(2,\), which does "
                                         r"not fit params\['w'\] of shape \(4, 3\)"):
        nn.linear({"w": params["w"], "b": params["b"][:2]}, x)
    with pytest.raises(ValueError, match=r"linear: params\['w'\] has shape \(12,\), but the "
                                         r"layer expects a 2-d array there"):
        nn.linear({"w": params["w"].ravel(), "b": params["b"]}, x)
    with pytest.raises(ValueError, match=r"params\['w'\] is None"):
        nn.linear({"w": None, "b": None}, x)


@pytest.mark.parametrize("init,layer,rest", [
    (lambda b: nn.init_linear(K, 4, 3, bias=b), nn.linear, (X,)),
    (lambda b: nn.init_conv2d(K, 1, 2, 3, bias=b), nn.conv2d, (np.ones((1, 1, 5, 5)),)),
    (lambda b: nn.init_layer_norm(4, bias=b), nn.layer_norm, (X,)),
    (lambda b: nn.init_multi_head_attention(K, 4, 2, bias=b), nn.multi_head_attention, (X,)),
    (lambda b: nn.init_lstm(K, 4, 5, bias=b), nn.lstm, (X,)),
    (lambda b: nn.init_transformer_block(K, 4, 2, bias=b), nn.transformer_block, (X,)),
], ids=["linear", "conv2d", "layer_norm", "mha", "lstm", "transformer_block"])
def test_bias_false_keeps_the_key_as_none_and_checks_under_jit(init, layer, rest):
    no_bias = init(False)
    assert None in [d.get(k) for _, d in _dicts(no_bias) for k in ("b", "bias", "b_ih")]
    out = layer(no_bias, *rest)
    jitted = fnad.jit(layer)
    np.testing.assert_allclose(fnad.tree_leaves(jitted(no_bias, *rest))[0],
                               fnad.tree_leaves(out)[0], rtol=1e-6)
    g = fnad.grad(lambda p: fnad.numpy.sum(fnad.tree_leaves(layer(p, *rest))[0]))(no_bias)
    assert fnad.tree_structure(g) == fnad.tree_structure(no_bias)
    with pytest.raises(ValueError, match="has no key"):  # checked while tracing too
        jitted(_with(init(True), next(iter(_dicts(init(True))))[0],
                     lambda d: d.pop(sorted(d)[0])), *rest)


def test_models_name_a_missing_top_level_key():
    from fnad_nn import models

    c = models.GPTConfig(vocab=11, d_model=8, n_heads=2, n_layers=1, max_len=8,
                         tie_embeddings=False)
    params = models.init_gpt(K, c)
    tokens = np.zeros((1, 4), np.int64)
    assert models.gpt(params, c, tokens).shape == (1, 4, 11)
    with pytest.raises(ValueError, match=r"^gpt: params has no key 'head'; .*init_gpt"):
        models.gpt({k: v for k, v in params.items() if k != "head"}, c, tokens)
    with pytest.raises(ValueError, match=r"^gpt: params has no key 'norm' but the unexpected "
                                         r"key 'nrom'"):
        models.gpt({("nrom" if k == "norm" else k): v for k, v in params.items()}, c, tokens)
