"""A character-level GPT on TinyShakespeare, trained with AdamW under warmup + cosine decay.

Goal: validation loss <= 1.60 nats/char within 30 minutes on a 2-core CPU (the default
"cpu" preset is sized for that); with a GPU, `--preset nanogpt` is nanoGPT's
shakespeare-char configuration (published validation loss 1.4697; goal <= 1.50).
Validation loss is estimated every --eval-every steps on fixed random windows and measured
on the whole validation split at the end (in nats and bits per character). With
--checkpoint the run saves params, optimizer state, PRNG key and history (fnad.save, no
pickle) every --checkpoint-every steps; --resume continues it bit for bit. At the end it
prints a sample generated with the KV cache and draws the loss curves.

    python examples/train_gpt.py                                  # cpu preset, 2000 steps
    python examples/train_gpt.py --preset nanogpt                 # 6 x 384, 5000 steps
    python examples/train_gpt.py --steps 20 --checkpoint /tmp/gpt.npz  # a smoke run
    python examples/train_gpt.py --steps 40 --checkpoint /tmp/gpt.npz --resume
    python examples/train_gpt.py --tokenizer bpe --vocab-size 1024 --steps 500

With `--tokenizer bpe` the text is cut in byte-level BPE tokens (Hugging Face `tokenizers`,
trained on the training split only, `--vocab-size` ids) instead of characters, and
`--context` counts tokens. The validation loss is still reported in nats per character:
the loss per token times the validation split's tokens per character, comparable with the
character model's row.
"""

import argparse
import sys
import time

from _common import parser, write_result
import _lm

import fnad.random as random
from fnad_nn import models

# model and training defaults per preset; any flag given on the command line wins
PRESETS = {
    "cpu": dict(layers=4, heads=4, d_model=128, context=128, batch_size=32, dropout=0.0,
                steps=2000, lr=2e-3, warmup=100, eval_every=250),
    "nanogpt": dict(layers=6, heads=6, d_model=384, context=256, batch_size=64, dropout=0.2,
                    steps=5000, lr=1e-3, warmup=100, eval_every=250),
    "tiny": dict(layers=1, heads=2, d_model=16, context=16, batch_size=4, dropout=0.1,
                 steps=20, lr=1e-2, warmup=2, eval_every=10),
}
GOALS = {"cpu": 1.60, "nanogpt": 1.50}


def build_parser(preset):
    d = PRESETS[preset]
    p = parser("train_gpt", __doc__)
    p.add_argument("--preset", choices=list(PRESETS), default="cpu",
                   help="defaults for the flags below: cpu (default), nanogpt, tiny (tests)")
    _lm.add_args(p, steps=d["steps"], batch_size=d["batch_size"], context=d["context"],
                 lr=d["lr"], warmup=d["warmup"], eval_every=d["eval_every"],
                 dropout=d["dropout"])
    p.add_argument("--layers", type=int, default=d["layers"])
    p.add_argument("--heads", type=int, default=d["heads"])
    p.add_argument("--d-model", type=int, default=d["d_model"])
    p.add_argument("--positions", choices=["learned", "sinusoidal", "rotary"],
                   default="learned")
    p.add_argument("--tokenizer", choices=["char", "bpe"], default="char",
                   help="characters (default) or a byte-level BPE trained on the training split")
    p.add_argument("--vocab-size", type=int, default=1024,
                   help="BPE vocabulary size with --tokenizer bpe (default 1024)")
    return p


def load_corpus(args):
    """The character corpus, or with --tokenizer bpe a TokenCorpus over a BPE learned from
    the training split (the first 90% of the text)."""
    corpus, text = _lm.load_corpus(args)
    if args.tokenizer == "char":
        return corpus
    from fnad_nn.data import TokenCorpus, Tokenizer

    start = time.perf_counter()
    tok = Tokenizer.train_bpe(text[:int(round(len(text) * 0.9))], args.vocab_size)
    corpus = TokenCorpus(text, tok)
    print(f"train_gpt: BPE of {tok.vocab_size} ids trained in "
          f"{time.perf_counter() - start:.1f} s; {len(corpus.val) / corpus.val_chars:.3f} "
          "validation tokens per character")
    return corpus


def parse(argv):
    """Parse twice: first --preset alone, then every flag with that preset's defaults."""
    first = argparse.ArgumentParser(add_help=False)
    first.add_argument("--preset", choices=list(PRESETS), default="cpu")
    return build_parser(first.parse_known_args(argv)[0].preset).parse_args(argv)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse(argv)
    _lm.check_resume(args, "train_gpt")
    start = time.perf_counter()
    corpus = load_corpus(args)
    config = models.GPTConfig(vocab=corpus.vocab_size, d_model=args.d_model,
                              n_heads=args.heads, n_layers=args.layers, max_len=args.context,
                              positions=args.positions, dropout=args.dropout)
    params = models.init_gpt(random.PRNGKey(args.seed), config)
    params, history, n_params = _lm.train(args, config, params, corpus, name="train_gpt")
    val, text = _lm.finish(args, "train_gpt", config, params, corpus, history)
    extra = {}
    if args.tokenizer == "bpe":  # per token -> per character of the validation split
        extra = {"tokenizer": "bpe", "vocab_size": corpus.vocab_size,
                 "val_loss_per_token": val,
                 "tokens_per_char": len(corpus.val) / corpus.val_chars}
        val = val * extra["tokens_per_char"]
        print(f"train_gpt: validation loss {val:.4f} nats/char "
              f"({models.bits_per_char(val):.4f} bits/char) with the BPE tokenizer")
    goal = GOALS.get(args.preset) if args.tokenizer == "char" else None
    bpe = ", BPE" if args.tokenizer == "bpe" else ""
    return write_result(
        args, argv, "train_gpt", f"TinyShakespeare validation loss (nats/char, GPT "
        f"{args.layers}x{args.d_model}{bpe})", val, goal=f"<= {goal}" if goal else None,
        start=start, bits_per_char=models.bits_per_char(val), parameters=n_params,
        preset=args.preset, steps=args.steps, history=_lm.round_history(history),
        sample=text[:500], complete=args.stop_at is None or args.stop_at >= args.steps,
        **extra)


if __name__ == "__main__":
    main()
