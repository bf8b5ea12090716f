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
