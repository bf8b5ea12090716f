"""Generate text with a Hugging Face GPT-2 folder, loaded into fnad's GPT (no torch).

The folder holds config.json, model.safetensors and the tokenizer (tokenizer.json, or
vocab.json + merges.txt), as `huggingface-cli download gpt2 --local-dir gpt2` leaves it, or
as transformers' `save_pretrained` / `fnad_nn.models.save_pretrained` write it. Nothing is
downloaded here. Generation runs with the KV cache: greedy with --temperature 0, else
sampled (--top-k, --top-p).

    python examples/gpt2_generate.py --model gpt2 --prompt "Hello, I'm a language model,"
    python examples/gpt2_generate.py --model gpt2 --prompt "The" --temperature 0.8 --top-k 40
"""

import sys
import time

import numpy as np

from _common import parser

import fnad.random as random
from fnad_nn import models
from fnad_nn.data import Tokenizer


def build_parser():
    p = parser("gpt2_generate", __doc__, result=False)
    p.add_argument("--model", help="a local Hugging Face GPT-2 folder (required)")
    p.add_argument("--prompt", help="the text to continue (required)")
    p.add_argument("--max-new", type=int, default=40, help="tokens to add (default 40)")
    p.add_argument("--temperature", type=float, default=0.0,
                   help="0 (default) for greedy decoding, else the sampling temperature")
    p.add_argument("--top-k", type=int, default=None)
    p.add_argument("--top-p", type=float, default=None)
    p.add_argument("--float64", action="store_true", help="compute in float64")
    return p


def main(argv=None):
    p = build_parser()
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if args.model is None or args.prompt is None:
        p.error("give --model FOLDER and --prompt TEXT")
    start = time.perf_counter()
    params, config = models.from_pretrained(args.model,
                                            dtype=np.float64 if args.float64 else np.float32)
    tok = Tokenizer.from_folder(args.model)
    prompt = tok.encode(args.prompt).astype(np.int64)[None]
    if prompt.shape[1] == 0:
        raise SystemExit("gpt2_generate: the prompt encodes to no tokens; give some text.")
    room = config.max_len - prompt.shape[1]
    if room < 1:
        raise SystemExit(f"gpt2_generate: the prompt has {prompt.shape[1]} tokens, as many as "
                         f"the model's {config.max_len} positions; shorten it.")
    loaded = time.perf_counter()
    out = models.generate(params, config, prompt, key=random.PRNGKey(args.seed),
                          max_new=min(args.max_new, room), temperature=args.temperature,
                          top_k=args.top_k, top_p=args.top_p)
    ids = np.asarray(out)[0]
    text = tok.decode(ids)
    done = time.perf_counter()
    print(text)
    print(f"gpt2_generate: {config.n_layers} layers x {config.d_model}, vocabulary "
          f"{config.vocab}; loaded in {loaded - start:.1f} s, {len(ids) - prompt.shape[1]} "
          f"tokens in {done - loaded:.1f} s", file=sys.stderr)
    return {"ids": ids.tolist(), "text": text}


if __name__ == "__main__":
    main()
