"""examples/gpt2_generate.py on a small random GPT-2 folder the test writes (weights from
transformers, a byte-level BPE tokenizer trained here): the same greedy tokens as
transformers' generate."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

TEXT = ("First Citizen: Before we proceed any further, hear me speak. All: Speak, speak. "
        "First Citizen: You are all resolved rather to die than to famish? ") * 20


def test_generates_transformers_greedy_tokens(example, tmp_path, capsys):
    from fnad_nn.data import Tokenizer

    tok = Tokenizer.train_bpe(TEXT, 300)
    tok.save(tmp_path / "tokenizer.json")
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=tok.vocab_size, n_positions=40, n_embd=32,
                                     n_layer=2, n_head=4)
    model = transformers.GPT2LMHeadModel(config).eval()
    model.save_pretrained(tmp_path)
    gen = example("gpt2_generate")
    out = gen.main(["--model", str(tmp_path), "--prompt", "First Citizen:", "--max-new", "10"])
    prompt = tok.encode("First Citizen:")
    with torch.no_grad():
        ref = model.generate(torch.as_tensor(prompt[None].astype(np.int64)), max_new_tokens=10,
                             do_sample=False, pad_token_id=0)[0].tolist()
    assert out["ids"] == ref
    assert out["text"].startswith("First Citizen:")
    assert out["text"] in capsys.readouterr().out
