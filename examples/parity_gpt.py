"""Training-run parity: an fnad GPT (or Seq2Seq) and an identical PyTorch model, float64.

    python examples/parity_gpt.py --data-dir /path/to/tinyshakespeare    # GPT, 300 steps
    python examples/parity_gpt.py --model seq2seq --data input.txt       # Seq2Seq, 100 steps
    python examples/parity_gpt.py --steps 10 --out /tmp                  # a smoke run

Both models start from the same weights (the fnad init, copied into torch tensors), see the
same TinyShakespeare character batches and train with AdamW under a warmup + cosine schedule
and global-norm gradient clipping. The PyTorch models are written with torch ops in the
same layout as the fnad params, in examples/_parity_torch.py (torch is the oracle; fnad
never imports it). The full default run of a model writes docs/parity_<model>.csv (per-step
losses and their difference) and docs/parity_<model>.png (another run writes them only with
--out DIR); the script fails unless the largest difference is at most 1e-12.

Clipping: torch's `clip_grad_norm_` scales by `max_norm / (norm + 1e-6)`, optax (and
fnad_optim) by `max_norm / max(norm, max_norm)`; the torch side applies the latter formula
by hand, so both runs compute the same function.
"""

import csv
import os
import sys
import time
from pathlib import Path

import numpy as np

import fnad
import fnad_optim as optim
from fnad_nn import models

from _common import docs_path, parser, require_data

# ----------------------------------------------------------------------------- data

PAD, BOS, EOS = 0, 1, 2


def read_chars(path):
    """Character ids of a text file (vocabulary: its sorted characters)."""
    if not os.path.exists(path):
        raise SystemExit(f"parity_gpt: no text file at {path} (--data); pass --data FILE with "
                         "an existing text file, or leave --data out to train on "
                         "TinyShakespeare (found with --data-dir DIR or FNAD_DATA_DIR).")
    text = open(path, encoding="utf-8").read()
    chars = sorted(set(text))
    lookup = {ch: i for i, ch in enumerate(chars)}
    return np.array([lookup[ch] for ch in text], np.int64), len(chars)


def lm_batch(rng, data, batch, seq_len):
    ix = rng.integers(0, len(data) - seq_len - 1, size=batch)
    x = np.stack([data[i:i + seq_len] for i in ix])
    return x, np.stack([data[i + 1:i + seq_len + 1] for i in ix])


def reverse_batch(rng, data, batch, max_src):
    """Source: a text chunk of 4..max_src characters (ids + 3, padded with PAD); target: the
    chunk reversed, then EOS. Returns (src, tgt_in, tgt_out)."""
    src = np.full((batch, max_src), PAD, np.int64)
    tgt = np.full((batch, max_src + 2), PAD, np.int64)
    for b in range(batch):
        n = int(rng.integers(4, max_src + 1))
        i = int(rng.integers(0, len(data) - n))
        chunk = data[i:i + n] + 3
        src[b, :n] = chunk
        tgt[b, 0], tgt[b, 1:n + 1], tgt[b, n + 1] = BOS, chunk[::-1], EOS
    return src, tgt[:, :-1], tgt[:, 1:]


# ----------------------------------------------------------------------------- the run


def _torch_side():
    """torch and examples/_parity_torch.py, imported when a run starts (not for --help)."""
    try:
        import torch
    except ImportError:
        raise SystemExit("parity_gpt: PyTorch is the oracle of this script and is not "
                         "installed; pip install torch (the project's dev extra pins it).") \
            from None
    import _parity_torch
    return torch, _parity_torch


def run(kind, config, data, *, steps, batch, seq_len, lr=3e-3, warmup=20, clip=1.0,
        weight_decay=0.1, seed=0, log_every=0):
    """Train the fnad and torch models side by side; returns per-step (lr, fnad, torch)."""
    torch, twin = _torch_side()
    params = (models.init_gpt if kind == "gpt" else models.init_seq2seq)(
        fnad.random.PRNGKey(seed), config)
    tparams = fnad.tree_map(lambda a: torch.tensor(np.array(a), requires_grad=True), params)
    warmup = min(warmup, steps // 4)
    sched = optim.warmup_cosine_decay_schedule(0.0, lr, warmup, steps, end_value=lr / 10)
    opt = optim.chain(optim.clip_by_global_norm(clip),
                      optim.adamw(sched, b1=0.9, b2=0.95, eps=1e-8, weight_decay=weight_decay))
    state = opt.init(params)
    leaves = fnad.tree_leaves(tparams)
    topt = torch.optim.AdamW(leaves, lr=1.0, betas=(0.9, 0.95), eps=1e-8,
                             weight_decay=weight_decay, foreach=False)
    tsched = torch.optim.lr_scheduler.LambdaLR(topt, lambda s: float(sched(s)))
    ignore = PAD if kind == "seq2seq" else None

    def loss_fn(p, inputs, targets):
        return models.token_loss(p, config, inputs, targets, ignore_index=ignore)

    grad_fn = fnad.value_and_grad(loss_fn)
    rng = np.random.default_rng(seed)
    rows = []
    for step in range(steps):
        if kind == "gpt":
            x, y = lm_batch(rng, data, batch, seq_len)
            inputs, t_logits = x, lambda: twin.torch_gpt(tparams, config, torch.tensor(x))
        else:
            src, x, y = reverse_batch(rng, data, batch, seq_len)
            inputs = (src, x)
            t_logits = lambda: twin.torch_seq2seq(tparams, config,
                                                  torch.tensor(src), torch.tensor(x))
        loss, grads = grad_fn(params, inputs, y)
        updates, state = opt.update(grads, state, params)
        params = optim.apply_updates(params, updates)

        lr_now = topt.param_groups[0]["lr"]
        topt.zero_grad()
        logits = t_logits()
        tl = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), torch.tensor(y).reshape(-1),
            ignore_index=-100 if ignore is None else ignore)
        tl.backward()
        with torch.no_grad():
            norm = torch.sqrt(sum((g.grad * g.grad).sum() for g in leaves))
            factor = clip / torch.clamp(norm, min=clip)
            for g in leaves:
                g.grad.mul_(factor)
        topt.step()
        tsched.step()
        rows.append((lr_now, float(loss), tl.item()))
        if log_every and step % log_every == 0:
            print(f"step {step:4d}  lr {lr_now:.2e}  fnad {float(loss):.15f}  "
                  f"torch {float(tl):.15f}  diff {abs(float(loss) - float(tl)):.2e}", flush=True)
    return rows


def gpt_config(vocab, seq_len):
    return models.GPTConfig(vocab=vocab, d_model=64, n_heads=4, n_layers=4, max_len=seq_len,
                            positions="learned", norm="layer", activation="gelu",
                            dtype=np.float64)


def seq2seq_config(vocab, seq_len):
    return models.Seq2SeqConfig(src_vocab=vocab + 3, tgt_vocab=vocab + 3, d_model=64, n_heads=4,
                                n_enc_layers=2, n_dec_layers=2, max_len=seq_len + 1,
                                pad_id=PAD, shared_tok=True, positions="sinusoidal",
                                rope_encoder=True, rope_decoder=True, dtype=np.float64)


def write_outputs(rows, stem):
    with open(stem + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", "lr", "loss_fnad", "loss_torch", "abs_diff"])
        for i, (lr, a, b) in enumerate(rows):
            w.writerow([i, f"{lr:.17g}", f"{a:.17g}", f"{b:.17g}", f"{abs(a - b):.3e}"])
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    steps = np.arange(len(rows))
    a, b = np.array([r[1] for r in rows]), np.array([r[2] for r in rows])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    ax1.plot(steps, a, label="fnad", lw=2)
    ax1.plot(steps, b, "--", label="PyTorch", lw=1.5)
    ax1.set(xlabel="step", ylabel="training loss (nats/token)", title="loss, float64")
    ax1.legend()
    ax2.plot(steps, np.abs(a - b), ".", ms=3)
    ax2.set(xlabel="step", ylabel="|fnad - PyTorch|",
            title=f"difference (max {np.abs(a - b).max():.2e})")
    ax2.set_ylim(0, max(np.abs(a - b).max() * 1.2, 1e-16))
    fig.tight_layout()
    fig.savefig(stem + ".png", dpi=110)


def build_parser():
    p = parser("parity_gpt", __doc__, result=False)
    p.add_argument("--model", choices=("gpt", "seq2seq"), default="gpt",
                   help="the model to compare (each has its own default run and files)")
    p.add_argument("--data", type=Path, default=None,
                   help="a text file to train on instead of TinyShakespeare")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="directory holding TinyShakespeare's input.txt (default: "
                        "$FNAD_DATA_DIR/tinyshakespeare, then ~/.cache/fnad/tinyshakespeare, "
                        "then a download)")
    p.add_argument("--steps", type=int, default=None, help="default 300 (gpt), 100 (seq2seq)")
    p.add_output("--out", type=Path, default=lambda args: docs_path(), shown="docs/",
                 help="directory for parity_<model>.csv and .png")
    p.neutral.add("model")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    path = args.data if args.data is not None else require_data(args, "tinyshakespeare")[0]
    data, vocab = read_chars(path)
    torch, _ = _torch_side()
    torch.set_num_threads(1)
    if args.model == "gpt":
        steps, seq_len, batch = args.steps or 300, 64, 16
        config = gpt_config(vocab, seq_len)
    else:
        steps, seq_len, batch = args.steps or 100, 24, 16
        config = seq2seq_config(vocab, seq_len)
    print(config)
    t0 = time.perf_counter()
    rows = run(args.model, config, data, steps=steps, batch=batch, seq_len=seq_len,
               seed=args.seed, log_every=max(steps // 10, 1))
    diff = max(abs(a - b) for _, a, b in rows)
    print(f"{steps} steps in {time.perf_counter() - t0:.0f} s; loss {rows[0][1]:.4f} -> "
          f"{rows[-1][1]:.4f}; max |fnad - torch| = {diff:.3e}")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        stem = os.path.join(args.out, f"parity_{args.model}")
        write_outputs(rows, stem)
        print(f"wrote {stem}.csv and {stem}.png")
    if not diff <= 1e-12:
        sys.exit(f"parity_gpt: max divergence {diff:.3e} > 1e-12")
    return rows


if __name__ == "__main__":
    main()
