"""The encoder-decoder transformer on a synthetic task: reverse a variable-length sequence.

Sources are random strings of --min-len to --max-len symbols, right-padded with PAD (the
encoder masks the padding); the decoder reads BOS + the reversed string and predicts the
reversed string + EOS. Training batches are drawn fresh from a `fnad.random` key; the test
set is drawn once from another key. The figure is the exact-match accuracy of KV-cached
greedy decoding (fnad_nn.models.generate, temperature 0, stopping at EOS) on the test set:
a row counts only if every token and the EOS are right. Goal: >= 99%.

    python examples/seq2seq.py                 # 2 + 2 layers, d 64, 3000 steps
    python examples/seq2seq.py --steps 20      # a smoke run of a few seconds
"""

import sys
import time

import numpy as np

import fnad
import fnad.random as random
import fnad_optim as optim
from fnad_nn import models

from _common import parser, progress, write_result
from _common import train_step as common_train_step

PAD, BOS, EOS = 0, 1, 2
GOAL = 0.99


def build_parser():
    p = parser("seq2seq", __doc__)
    p.add_argument("--steps", type=int, default=3000, help="training steps (default 3000)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--symbols", type=int, default=10, help="distinct symbols (default 10)")
    p.add_argument("--min-len", type=int, default=3)
    p.add_argument("--max-len", type=int, default=12)
    p.add_argument("--test-size", type=int, default=1000, help="held-out sequences")
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=2, help="encoder and decoder blocks each")
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate")
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--eval-every", type=int, default=500)
    return p


def make_batch(key, n, args):
    """`(src, tgt_in, tgt_out)` int64 arrays for `n` random sequences: src `(n, max_len)`,
    the targets `(n, max_len + 1)`, all padded with PAD."""
    k_len, k_sym = random.split(key)
    lengths = np.asarray(random.randint(k_len, (n,), args.min_len, args.max_len + 1))
    sym = np.asarray(random.randint(k_sym, (n, args.max_len), 3, 3 + args.symbols))
    pos = np.arange(args.max_len)
    valid = pos < lengths[:, None]
    src = np.where(valid, sym, PAD).astype(np.int64)
    # reversed[i, j] = src[i, len_i - 1 - j] for j < len_i
    rev_idx = np.clip(lengths[:, None] - 1 - pos, 0, args.max_len - 1)
    rev = np.where(valid, np.take_along_axis(src, rev_idx, 1), PAD)
    tgt_out = np.concatenate([rev, np.full((n, 1), PAD)], 1)
    tgt_out[np.arange(n), lengths] = EOS
    tgt_in = np.concatenate([np.full((n, 1), BOS), tgt_out[:, :-1]], 1)
    tgt_in[tgt_in == EOS] = PAD
    return src, tgt_in.astype(np.int64), tgt_out.astype(np.int64)


def exact_match(params, config, src, tgt_out, batch=500):
    """Fraction of rows whose KV-cached greedy decoding equals the target (through EOS)."""
    hits = 0
    for i in range(0, len(src), batch):
        out = np.asarray(models.generate(params, config, src[i:i + batch],
                                         max_new=tgt_out.shape[1], temperature=0, eos_id=EOS,
                                         pad_id=PAD, bos_id=BOS))
        want = tgt_out[i:i + batch]
        width = max(out.shape[1], want.shape[1])
        pad = lambda a: np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=PAD)
        hits += int(np.all(pad(out) == pad(want), axis=1).sum())
    return hits / len(src)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    if not 1 <= args.min_len <= args.max_len:
        raise SystemExit(f"seq2seq: need 1 <= --min-len <= --max-len, got {args.min_len} and "
                         f"{args.max_len}.")
    start = time.perf_counter()
    vocab = 3 + args.symbols
    config = models.Seq2SeqConfig(src_vocab=vocab, tgt_vocab=vocab, d_model=args.d_model,
                                  n_heads=args.heads, n_enc_layers=args.layers,
                                  n_dec_layers=args.layers, max_len=args.max_len + 1,
                                  pad_id=PAD, shared_tok=True)
    root = random.PRNGKey(args.seed)
    k_init, k_test, key = random.split(root, 3)
    params = models.init_seq2seq(k_init, config)
    n_params = sum(int(p.size) for p in fnad.tree_leaves(params))
    test = make_batch(k_test, args.test_size, args)
    warmup = min(args.warmup, max(args.steps - 1, 0))
    schedule = optim.warmup_cosine_decay_schedule(0.0, args.lr, warmup,
                                                  max(args.steps, warmup + 1), args.lr / 20)
    opt = optim.chain(optim.clip_by_global_norm(1.0), optim.adamw(schedule, weight_decay=0.01))
    opt_state = opt.init(params)

    def loss_fn(params, src, tgt_in, tgt_out):
        return models.token_loss(params, config, (src, tgt_in), tgt_out, ignore_index=PAD)

    train_step = common_train_step(loss_fn, opt, jit=not args.no_jit)
    print(f"seq2seq: reversal of {args.min_len}-{args.max_len} symbols over {args.symbols}, "
          f"{n_params:,} parameters, {args.steps} steps of batch {args.batch_size}, "
          f"{args.test_size} test sequences")
    bar = progress(range(args.steps), desc="seq2seq", disable=args.no_progress)
    say = getattr(bar, "write", print)   # a line above the bar (print without tqdm)
    history, losses, t0 = [], [], time.perf_counter()
    for step in bar:
        key, sub = random.split(key)
        src, tgt_in, tgt_out = make_batch(sub, args.batch_size, args)
        params, opt_state, loss = train_step(params, opt_state, src, tgt_in, tgt_out)
        losses.append(float(loss))
        rate = (step + 1) * args.batch_size / (time.perf_counter() - t0)
        bar.set_postfix(loss=f"{np.mean(losses[-20:]):.4f}", seq_per_s=f"{rate:.0f}")
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            acc = exact_match(params, config, *test[::2])
            history.append({"step": step + 1, "train_loss": round(float(np.mean(losses)), 5),
                            "test_exact_match": acc,
                            "seconds": round(time.perf_counter() - t0, 1)})
            losses = []
            say(f"step {step + 1}: train loss {history[-1]['train_loss']:.4f}, greedy "
                f"exact match {acc:.4f}")
    bar.close()
    acc = history[-1]["test_exact_match"] if history else exact_match(params, config, *test[::2])
    print(f"seq2seq: exact-match accuracy {acc:.4f} on {args.test_size} held-out sequences "
          f"(goal >= {GOAL})")
    return write_result(args, argv, "seq2seq", "reversal exact-match accuracy (greedy, KV cache)",
                        acc, goal=f">= {GOAL}", start=start, parameters=n_params,
                        history=history)


if __name__ == "__main__":
    main()
