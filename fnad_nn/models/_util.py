"""Helpers shared by the models: the array module of the params, constant tables on that
device, norms and activations chosen by name, and dropout keys."""

import functools
import math

import numpy as np

import fnad
import fnad.random as random
from fnad.extend import array_module as _array_module
from fnad.extend import getval

import fnad_nn as nn

from .._util import ParamSpec, check_params

NORMS = ("layer", "rms")
ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu", "swiglu")


def _embedding_leaf(params):
    # every model's params hold an embedding table; reading it is cheaper than a flatten
    for name in ("tok", "src_tok"):
        if isinstance(params, dict) and isinstance(params.get(name), dict) and "w" in params[name]:
            return params[name]["w"]
    return None


def array_module(params):
    """`numpy` or `cupy`, by where the params live."""
    leaf = _embedding_leaf(params)
    return _array_module(leaf) if leaf is not None else _array_module(*fnad.tree_leaves(params))


def param_dtype(params):
    """The dtype of the params (of the embedding table, else the first float leaf)."""
    leaf = _embedding_leaf(params)
    for leaf in [leaf] if leaf is not None else fnad.tree_leaves(params):
        dt = getattr(getval(leaf), "dtype", None)
        if dt is not None and dt.kind == "f":
            return dt
    raise ValueError("models: the params have no float leaves; initialise them with init_*.")


@functools.lru_cache(maxsize=64)
def _tables(kind, xp, dtype, max_len, d, base, scale):
    if kind == "rope":
        t = nn.rotary_tables(max_len, d, base=base, scale=scale, dtype=dtype)
        return {k: xp.asarray(v) for k, v in t.items()}
    return xp.asarray(nn.sinusoidal_positional_encoding(max_len, d, base=base, dtype=dtype))


def rope_tables(xp, dtype, max_len, d_head, base, scale):
    """Rotary tables `{"cos", "sin"}` on the params' device (cached)."""
    return _tables("rope", xp, np.dtype(dtype), max_len, d_head, float(base), float(scale))


def sinusoid_table(xp, dtype, max_len, d_model, base=10000.0):
    """Sinusoidal encodings `(max_len, d_model)` on the params' device (cached)."""
    return _tables("sin", xp, np.dtype(dtype), max_len, d_model, float(base), 1.0)


def init_cache(params, n_layers, batch_size, n_heads, d_head, max_len):
    """Per-layer self-attention caches with room for `max_len` positions, on the params'
    device (written in place step by step: no copy of the prefix per token)."""
    xp, dt = array_module(params), param_dtype(params)
    return [nn.init_kv_cache((batch_size,), n_heads, d_head, dtype=dt, max_len=max_len, xp=xp)
            for _ in range(n_layers)]


def cache_length(layer_cache):
    """Positions held by one layer's cache."""
    if "length" in layer_cache:
        return layer_cache["length"]
    return layer_cache["k"].shape[-2]


def check_choice(fname, what, value, choices):
    if value not in choices:
        raise ValueError(f"{fname}: {what}={value!r}; use one of {list(choices)}.")


def check_transformer_config(fname, config, positions):
    """The checks a transformer config shares: its choices, and heads that split d_model."""
    check_choice(fname, "positions", config.positions, positions)
    check_choice(fname, "norm", config.norm, NORMS)
    check_choice(fname, "activation", config.activation, ACTIVATIONS)
    if config.d_model % config.n_heads:
        raise ValueError(f"{fname}: d_model={config.d_model} is not divisible by "
                         f"n_heads={config.n_heads}; pick another n_heads.")


def init_norm(kind, d, dtype):
    return nn.init_layer_norm(d, dtype=dtype) if kind == "layer" else nn.init_rms_norm(
        d, dtype=dtype)


def norm(kind, params, x, eps):
    return nn.layer_norm(params, x, eps=eps) if kind == "layer" else nn.rms_norm(
        params, x, eps=eps)


def dropout_keys(fname, key, n, train, rate):
    """`n` keys for dropout when training with `rate > 0`, else `n` Nones."""
    if not (train and rate):
        return [None] * n
    if key is None:
        raise ValueError(f"{fname}: training with dropout needs key=; pass "
                         "key=fnad.random.PRNGKey(...) (a fresh one per step) or train=False.")
    return list(random.split(key, n))


@functools.lru_cache(maxsize=None)
def _model_spec(init, keys):
    return ParamSpec(init, dict.fromkeys(sorted(keys)))


def check_model(fname, params, init, keys):
    """`params` a dict with exactly the top-level `keys` that `init` gives for the config
    (the layers inside check their own), else an error naming the model and the key."""
    check_params(fname, params, init=init, call=f"{fname}(params, config, ...)",
                 spec=_model_spec(init, frozenset(keys)))


def check_tokens(fname, params, tokens):
    """Token ids as an integer array `(batch, time)` on the params' device."""
    t = getval(tokens)
    if getattr(t, "dtype", None) is None or t.dtype.kind not in "iu" or t.ndim != 2:
        raise TypeError(f"{fname}: tokens must be an integer array with 2 axes "
                        f"(batch, time), got {getattr(t, 'dtype', type(t).__name__)} of shape "
                        f"{getattr(t, 'shape', None)}; cast with .astype(int) or add a batch "
                        "axis with x[None].")
    return on_params_device(params, t)


def on_params_device(params, x):
    """A concrete array moved to the params' device; a staged one (jit) as it is."""
    x = getval(x)
    return x if isinstance(x, fnad.extend.Tracer) else array_module(params).asarray(x)


def embed_scale(d_model, scaled):
    return math.sqrt(d_model) if scaled else 1.0
