"""Hugging Face GPT-2 folders (`config.json` + `model.safetensors`) in and out of the GPT
family: GPT-2 is a `GPTConfig` with learned positions, pre-norm LayerNorm blocks, the tanh
GELU and tied embeddings, so `gpt`, `generate` and the KV cache serve it unchanged.

Weights map name by name: Hugging Face's Conv1D stores `(in, out)` matrices, as fnad's
linear layers do; the packed `c_attn` splits into the query, key and value projections,
each reshaped to `(d_model, heads, d_head)`.
"""

import json
import os

import numpy as np

import fnad

from ._gpt import GPTConfig

__all__ = ["from_pretrained", "save_pretrained"]

_ACTIVATIONS = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu",
                "relu": "relu", "silu": "silu", "swish": "silu"}
_TO_HF = {"gelu_tanh": "gelu_new", "gelu": "gelu", "relu": "relu", "silu": "silu"}
# GPT-2 options fnad's GPT does not have: refused when set to anything but these values
_FIXED = {"scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False,
          "reorder_and_upcast_attn": False, "add_cross_attention": False}


def _read_json(path, fname):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(f"{fname}: {path!r} does not exist; the folder must hold a "
                                "Hugging Face GPT-2 model (config.json and model.safetensors, "
                                "e.g. from huggingface-cli download gpt2).") from None
    except ValueError as e:
        raise ValueError(f"{fname}: {path!r} is not valid JSON ({e}).") from None


def _config(hf, dtype):
    fname = "from_pretrained"
    if hf.get("model_type", "gpt2") != "gpt2":
        raise ValueError(f"{fname}: config.json has model_type={hf.get('model_type')!r}; only "
                         "GPT-2 ('gpt2') folders load into fnad's GPT.")
    for k, v in _FIXED.items():
        if hf.get(k, v) != v:
            raise ValueError(f"{fname}: config.json sets {k}={hf[k]!r}, which fnad's GPT does "
                             f"not implement (it needs {v!r}).")
    act = hf.get("activation_function", "gelu_new")
    if act not in _ACTIVATIONS:
        raise ValueError(f"{fname}: activation_function={act!r} is not one of "
                         f"{sorted(_ACTIVATIONS)}.")
    d = hf.get("n_embd", 768)
    return GPTConfig(vocab=hf.get("vocab_size", 50257), d_model=d, n_heads=hf.get("n_head", 12),
                     n_layers=hf.get("n_layer", 12), max_len=hf.get("n_positions", 1024),
                     d_ff=hf.get("n_inner"), positions="learned", norm="layer",
                     norm_eps=hf.get("layer_norm_epsilon", 1e-5), activation=_ACTIVATIONS[act],
                     dropout=hf.get("resid_pdrop", 0.0),
                     tie_embeddings=hf.get("tie_word_embeddings", True), bias=True,
                     dtype=dtype)


def _flat(tree, prefix, out):
    if isinstance(tree, dict):
        items = tree.items()
    elif isinstance(tree, list):
        items = enumerate(tree)
    else:
        out[prefix] = tree
        return out
    for k, v in items:
        _flat(v, f"{prefix}.{k}" if prefix else str(k), out)
    return out


def _tensors(folder):
    """The flat `{name: array}` of the folder's safetensors file(s), without the
    "transformer." prefix that GPT2LMHeadModel's names carry."""
    single = os.path.join(folder, "model.safetensors")
    index = single + ".index.json"
    if os.path.exists(single):
        files = [single]
    elif os.path.exists(index):
        shards = _read_json(index, "from_pretrained").get("weight_map", {}).values()
        files = [os.path.join(folder, os.path.basename(s)) for s in sorted(set(shards))]
    else:
        raise FileNotFoundError(f"from_pretrained: {folder!r} has no model.safetensors (nor a "
                                "sharded model.safetensors.index.json); fnad reads safetensors "
                                "weights only, never pickled pytorch_model.bin files.")
    flat = {}
    for f in files:
        _flat(fnad.load(f), "", flat)
    return {k.removeprefix("transformer."): v for k, v in flat.items()}


def _take(t, name, shape, dtype):
    if name not in t:
        raise ValueError(f"from_pretrained: the weights have no tensor {name!r}; is this a "
                         "GPT-2 model?")
    a = t[name]
    if a.shape != tuple(shape):
        raise ValueError(f"from_pretrained: the tensor {name!r} has shape {a.shape}; "
                         f"config.json implies {tuple(shape)}.")
    return np.ascontiguousarray(a, dtype=dtype)


def _block(t, i, c, dt):
    d, h, d_ff = c.d_model, c.n_heads, c.d_ff or 4 * c.d_model
    p = f"h.{i}."

    def ln(name):
        return {"scale": _take(t, p + name + ".weight", (d,), dt),
                "bias": _take(t, p + name + ".bias", (d,), dt)}

    def lin(name, d_in, d_out):
        return {"w": _take(t, p + name + ".weight", (d_in, d_out), dt),
                "b": _take(t, p + name + ".bias", (d_out,), dt)}

    qkv = lin("attn.c_attn", d, 3 * d)
    attn = {n: {"w": qkv["w"][:, j * d:(j + 1) * d].reshape(d, h, d // h).copy(),
                "b": qkv["b"][j * d:(j + 1) * d].reshape(h, d // h).copy()}
            for j, n in enumerate("qkv")}
    o = lin("attn.c_proj", d, d)
    attn["o"] = {"w": o["w"].reshape(h, d // h, d), "b": o["b"]}
    return {"norm1": ln("ln_1"), "attn": attn, "norm2": ln("ln_2"),
            "ff": {"fc1": lin("mlp.c_fc", d, d_ff), "fc2": lin("mlp.c_proj", d_ff, d)}}


def from_pretrained(folder, *, dtype=np.float32):
    """Load a Hugging Face GPT-2 folder (`config.json` + `model.safetensors`, or sharded
    safetensors with their index) as fnad GPT params and config. Reads local files only.

    Args:
      folder: the model folder, e.g. what `huggingface-cli download gpt2 --local-dir gpt2`
        or `GPT2LMHeadModel.save_pretrained(folder)` wrote.
      dtype: the params' dtype (float32 or float64); half-precision weights widen exactly.

    Returns:
      `(params, config)`: params as `init_gpt` lays them out, a `GPTConfig` with learned
      positions, LayerNorm, GPT-2's activation ("gelu_new" is "gelu_tanh") and
      `dropout=resid_pdrop` (active only with `train=True`).

    Example:
      params, config = fnad_nn.models.from_pretrained("gpt2")
      logits = fnad_nn.models.gpt(params, config, tokens)
    """
    folder = os.fspath(folder)
    config = _config(_read_json(os.path.join(folder, "config.json"), "from_pretrained"),
                     np.dtype(dtype).type)
    t, c, dt = _tensors(folder), config, np.dtype(dtype)
    params = {"tok": {"w": _take(t, "wte.weight", (c.vocab, c.d_model), dt)},
              "pos": {"w": _take(t, "wpe.weight", (c.max_len, c.d_model), dt)},
              "blocks": [_block(t, i, c, dt) for i in range(c.n_layers)],
              "norm": {"scale": _take(t, "ln_f.weight", (c.d_model,), dt),
                       "bias": _take(t, "ln_f.bias", (c.d_model,), dt)}}
    if not c.tie_embeddings:
        params["head"] = {"w": _take(t, "lm_head.weight", (c.vocab, c.d_model), dt).T.copy(),
                          "b": None}
    return params, config


def _check_gpt2(config):
    c = config
    wrong = [f"{k}={getattr(c, k)!r}" for k, ok in (
        ("positions", c.positions == "learned"), ("norm", c.norm == "layer"),
        ("activation", c.activation in _TO_HF), ("bias", c.bias))
        if not ok]
    if wrong:
        raise ValueError(f"save_pretrained: a GPT-2 folder holds GPTs with learned positions, "
                         f"LayerNorm, biases and a relu/gelu/gelu_tanh/silu activation; this "
                         f"config has {', '.join(wrong)}.")


def _host(x):
    return np.ascontiguousarray(fnad.to_numpy(x))


def _hf_tensors(params, c):
    d, out = c.d_model, {}
    for i, b in enumerate(params["blocks"]):
        p, a = f"transformer.h.{i}.", b["attn"]
        for name, ln in (("ln_1", b["norm1"]), ("ln_2", b["norm2"])):
            out[p + name + ".weight"], out[p + name + ".bias"] = _host(ln["scale"]), \
                _host(ln["bias"])
        out[p + "attn.c_attn.weight"] = np.concatenate(
            [_host(a[n]["w"]).reshape(d, d) for n in "qkv"], axis=1)
        out[p + "attn.c_attn.bias"] = np.concatenate([_host(a[n]["b"]).reshape(d)
                                                      for n in "qkv"])
        out[p + "attn.c_proj.weight"] = _host(a["o"]["w"]).reshape(d, d)
        out[p + "attn.c_proj.bias"] = _host(a["o"]["b"])
        for name, lin in (("mlp.c_fc", b["ff"]["fc1"]), ("mlp.c_proj", b["ff"]["fc2"])):
            out[p + name + ".weight"], out[p + name + ".bias"] = _host(lin["w"]), \
                _host(lin["b"])
    out["transformer.wte.weight"] = _host(params["tok"]["w"])
    out["transformer.wpe.weight"] = _host(params["pos"]["w"])
    out["transformer.ln_f.weight"] = _host(params["norm"]["scale"])
    out["transformer.ln_f.bias"] = _host(params["norm"]["bias"])
    if not c.tie_embeddings:
        if params["head"].get("b") is not None:
            raise ValueError("save_pretrained: GPT-2's untied lm_head has no bias; this "
                             "params' head has one.")
        out["lm_head.weight"] = _host(params["head"]["w"]).T.copy()
    return out


def save_pretrained(folder, params, config):
    """Write GPT params as a Hugging Face GPT-2 folder (`config.json`, `model.safetensors`)
    that `transformers.GPT2LMHeadModel.from_pretrained(folder)` and `from_pretrained` load.

    Args:
      folder: created if missing; existing files of those names are replaced.
      params: GPT params (from `init_gpt`, training, or `from_pretrained`).
      config: their `GPTConfig`; it must be GPT-2-shaped (learned positions, LayerNorm,
        biases, relu/gelu/gelu_tanh/silu).

    Example:
      fnad_nn.models.save_pretrained("my-gpt", params, config)
      model = transformers.GPT2LMHeadModel.from_pretrained("my-gpt")
    """
    c = config
    _check_gpt2(c)
    folder = os.fspath(folder)
    os.makedirs(folder, exist_ok=True)
    hf = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": c.vocab,
          "n_positions": c.max_len, "n_embd": c.d_model, "n_layer": c.n_layers,
          "n_head": c.n_heads, "n_inner": c.d_ff, "activation_function": _TO_HF[c.activation],
          "layer_norm_epsilon": c.norm_eps, "resid_pdrop": c.dropout, "embd_pdrop": c.dropout,
          "attn_pdrop": 0.0, "tie_word_embeddings": c.tie_embeddings,
          "dtype": np.dtype(c.dtype).name}
    eos = 50256 if c.vocab > 50256 else None  # GPT-2's <|endoftext|>, when the vocab has it
    hf["bos_token_id"] = hf["eos_token_id"] = eos
    fnad.save(os.path.join(folder, "model.safetensors"), _hf_tensors(params, c))
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        json.dump(hf, f, indent=2)
