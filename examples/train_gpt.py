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
    return p


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
    corpus, _ = _lm.load_corpus(args)
    config = models.GPTConfig(vocab=corpus.vocab_size, d_model=args.d_model,
                              n_heads=args.heads, n_layers=args.layers, max_len=args.context,
                              positions=args.positions, dropout=args.dropout)
    params = models.init_gpt(random.PRNGKey(args.seed), config)
    params, history, n_params = _lm.train(args, config, params, corpus, name="train_gpt")
    val, text = _lm.finish(args, "train_gpt", config, params, corpus, history)
    goal = GOALS.get(args.preset)
    return write_result(
        args, argv, "train_gpt", f"TinyShakespeare validation loss (nats/char, GPT "
        f"{args.layers}x{args.d_model})", val, goal=f"<= {goal}" if goal else None,
        start=start, bits_per_char=models.bits_per_char(val), parameters=n_params,
        preset=args.preset, steps=args.steps, history=_lm.round_history(history),
        sample=text[:500], complete=args.stop_at is None or args.stop_at >= args.steps)


if __name__ == "__main__":
    main()
