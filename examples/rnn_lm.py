"""A recurrent character language model (LSTM by default; --cell rnn or gru) on
TinyShakespeare, trained like train_gpt.py: AdamW under warmup + cosine decay, periodic
validation, --checkpoint/--resume, a generated sample and a loss-curve plot.

    python examples/rnn_lm.py                          # 1-layer LSTM, 256 units, 2000 steps
    python examples/rnn_lm.py --cell gru --layers 2
    python examples/rnn_lm.py --steps 20               # a smoke run of a few seconds
"""

import sys
import time

import fnad.random as random
from fnad_nn import models

from _common import parser, write_result
import _lm


def build_parser():
    p = parser("rnn_lm", __doc__)
    _lm.add_args(p, steps=2000, batch_size=32, context=64, lr=3e-3, warmup=50,
                 eval_every=250, dropout=0.0)
    p.add_argument("--cell", choices=["lstm", "gru", "rnn"], default="lstm")
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--hidden", type=int, default=256, help="hidden units per layer")
    p.add_argument("--embed", type=int, default=64, help="embedding size")
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    _lm.check_resume(args, "rnn_lm")
    start = time.perf_counter()
    corpus, _ = _lm.load_corpus(args)
    config = models.RNNLMConfig(vocab=corpus.vocab_size, d_embed=args.embed,
                                d_hidden=args.hidden, n_layers=args.layers, cell=args.cell,
                                dropout=args.dropout)
    params = models.init_rnn_lm(random.PRNGKey(args.seed), config)
    params, history, n_params = _lm.train(args, config, params, corpus, name="rnn_lm")
    val, text = _lm.finish(args, "rnn_lm", config, params, corpus, history)
    return write_result(
        args, argv, "rnn_lm", f"TinyShakespeare validation loss (nats/char, {args.cell.upper()} "
        f"{args.layers}x{args.hidden})", val, start=start,
        bits_per_char=models.bits_per_char(val), parameters=n_params, steps=args.steps,
        history=_lm.round_history(history), sample=text[:500],
        complete=args.stop_at is None or args.stop_at >= args.steps)


if __name__ == "__main__":
    main()
