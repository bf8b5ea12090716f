"""GPT-2 in the GPT family: a small random `transformers.GPT2LMHeadModel` saved to a folder
loads into fnad with the same logits (float32 and float64), loss and gradients as torch,
the same greedy tokens through the KV cache, and fnad's params save back into transformers."""

import json

import numpy as np
import pytest

import fnad
import fnad_nn as nn
from fnad_nn.models import from_pretrained, gpt, generate, save_pretrained

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

SMALL = dict(vocab_size=97, n_positions=32, n_embd=32, n_layer=2, n_head=4,
             resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)


def hf_model(folder, dtype=torch.float32, **kw):
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(**{**SMALL, **kw}))
    with torch.no_grad():  # biases and norms away from their zero/one init
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    model = model.to(dtype).eval()
    model.save_pretrained(folder)
    return model


def tokens(b=2, t=11, v=97):
    return np.random.default_rng(1).integers(0, v, size=(b, t))


def hf_logits(model, ids):
    with torch.no_grad():
        return model(torch.as_tensor(ids)).logits.numpy()


@pytest.fixture(scope="module")
def folder32(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpt2")
    return folder, hf_model(folder)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float64, 1e-10)])
def test_logits_match_transformers(tmp_path, dtype, tol):
    model = hf_model(tmp_path, torch.float32 if dtype == np.float32 else torch.float64)
    params, config = from_pretrained(tmp_path, dtype=dtype)
    assert config.activation == "gelu_tanh" and config.tie_embeddings and config.max_len == 32
    ids = tokens()
    ours = np.asarray(gpt(params, config, ids))
    assert ours.dtype == dtype
    err = np.abs(ours - hf_logits(model, ids)).max()
    assert err < tol, err


def test_untied_head_and_n_inner(tmp_path):
    model = hf_model(tmp_path, tie_word_embeddings=False, n_inner=48,
                     activation_function="relu")
    params, config = from_pretrained(tmp_path)
    assert not config.tie_embeddings and config.d_ff == 48 and config.activation == "relu"
    ids = tokens()
    np.testing.assert_allclose(gpt(params, config, ids), hf_logits(model, ids), atol=1e-5)


def test_loss_and_gradients_match_torch(tmp_path):
    model = hf_model(tmp_path, torch.float64)
    params, config = from_pretrained(tmp_path, dtype=np.float64)
    ids = tokens()
    logits = model(torch.as_tensor(ids[:, :-1])).logits  # transformers' own loss is float32
    torch_loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 97),
                                                   torch.as_tensor(ids[:, 1:]).reshape(-1))
    torch_loss.backward()

    def loss(p):
        logits = gpt(p, config, ids[:, :-1])
        return nn.sparse_softmax_cross_entropy(logits, ids[:, 1:])

    value, grads = fnad.value_and_grad(loss)(params)
    assert abs(float(value) - torch_loss.item()) < 1e-12
    tg = {k: v.grad.numpy() for k, v in model.named_parameters()}
    np.testing.assert_allclose(grads["tok"]["w"], tg["transformer.wte.weight"], atol=1e-10)
    np.testing.assert_allclose(grads["pos"]["w"], tg["transformer.wpe.weight"], atol=1e-10)
    b = grads["blocks"][1]
    qkv = np.concatenate([b["attn"][n]["w"].reshape(32, 32) for n in "qkv"], axis=1)
    np.testing.assert_allclose(qkv, tg["transformer.h.1.attn.c_attn.weight"], atol=1e-10)
    np.testing.assert_allclose(b["ff"]["fc2"]["w"], tg["transformer.h.1.mlp.c_proj.weight"],
                               atol=1e-10)
    np.testing.assert_allclose(b["norm1"]["scale"], tg["transformer.h.1.ln_1.weight"],
                               atol=1e-10)


def test_greedy_generation_with_the_cache_gives_transformers_tokens(folder32):
    folder, model = folder32
    params, config = from_pretrained(folder, dtype=np.float64)
    prompt = tokens(b=1, t=5)
    ours = np.asarray(generate(params, config, prompt, max_new=12, temperature=0))
    with torch.no_grad():
        theirs = model.double().generate(torch.as_tensor(prompt), max_new_tokens=12,
                                         do_sample=False, pad_token_id=0).numpy()
    model.float()
    np.testing.assert_array_equal(ours, theirs)


def test_round_trip_fnad_to_transformers(tmp_path):
    config = nn.models.GPTConfig(vocab=50, d_model=24, n_heads=3, n_layers=2, max_len=16,
                                 activation="gelu_tanh")
    params = nn.models.init_gpt(fnad.random.PRNGKey(3), config)
    save_pretrained(tmp_path, params, config)
    assert json.loads((tmp_path / "config.json").read_text())["model_type"] == "gpt2"
    model = transformers.GPT2LMHeadModel.from_pretrained(tmp_path).eval()
    ids = tokens(v=50, t=9)
    np.testing.assert_allclose(hf_logits(model, ids), gpt(params, config, ids), atol=1e-5)
    back, config2 = from_pretrained(tmp_path)
    assert config2 == config
    for a, b in zip(fnad.tree_leaves(back), fnad.tree_leaves(params)):
        np.testing.assert_array_equal(a, b)


def test_refusals_say_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match="config.json"):
        from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    with pytest.raises(ValueError, match="only GPT-2"):
        from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    with pytest.raises(FileNotFoundError, match="model.safetensors"):
        from_pretrained(tmp_path)
    rotary = nn.models.GPTConfig(vocab=10, d_model=8, n_heads=2, n_layers=1, positions="rotary")
    with pytest.raises(ValueError, match="positions='rotary'"):
        save_pretrained(tmp_path, nn.models.init_gpt(fnad.random.PRNGKey(0), rotary), rotary)


def test_hub_layout_sharded_and_half_precision(tmp_path, folder32):
    """The names of the original gpt2 upload (no "transformer." prefix, with the attention
    mask buffers), split over two shards with an index, stored as float16."""
    st = pytest.importorskip("safetensors.numpy")
    folder, model = folder32
    state = {k.removeprefix("transformer."): v.detach().numpy()
             for k, v in model.state_dict().items() if k != "lm_head.weight"}
    for i in range(2):
        state[f"h.{i}.attn.bias"] = np.tril(np.ones((1, 1, 32, 32), np.float32))
    names = sorted(state)
    shards = {"model-00001-of-00002.safetensors": names[:10],
              "model-00002-of-00002.safetensors": names[10:]}
    for file, keys in shards.items():
        st.save_file({k: state[k].astype(np.float16) for k in keys}, str(tmp_path / file),
                     metadata={"format": "pt"})
    index = {"weight_map": {k: f for f, keys in shards.items() for k in keys}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    (tmp_path / "config.json").write_text((folder / "config.json").read_text())
    params, config = from_pretrained(tmp_path)
    assert params["tok"]["w"].dtype == np.float32
    np.testing.assert_array_equal(params["pos"]["w"],
                                  state["wpe.weight"].astype(np.float16).astype(np.float32))
    ids = tokens()
    np.testing.assert_allclose(gpt(params, config, ids), hf_logits(model, ids), atol=5e-2)
