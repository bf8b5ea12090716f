"""The character language-model training loop shared by train_gpt.py and rnn_lm.py:
TinyShakespeare batches, AdamW with warmup + cosine decay and global-norm clipping, periodic
validation, checkpoints that resume bit for bit, a generated sample, a loss-curve plot."""

import json
import math
import time
from pathlib import Path

import numpy as np

import fnad
import fnad.distributed as dist
import fnad.random as random
import fnad_optim as optim
from fnad_nn import data, models

from _common import (add_distributed_flag, docs_path, is_main, progress, require_data,
                     start_distributed)
from _common import train_step as common_train_step


def add_args(p, *, steps, batch_size, context, lr, warmup, eval_every, dropout):
    """The flags every character LM example takes (defaults are the example's preset)."""
    p.add_argument("--data-dir", type=Path, default=None,
                   help="directory holding input.txt (default: $FNAD_DATA_DIR/tinyshakespeare, "
                        "then ~/.cache/fnad/tinyshakespeare, then a download)")
    p.add_argument("--text-limit", type=int, default=None,
                   help="use the first N characters of the text (smoke runs)")
    p.add_argument("--steps", type=int, default=steps, help=f"training steps (default {steps})")
    p.add_argument("--batch-size", type=int, default=batch_size)
    p.add_argument("--context", type=int, default=context, help="characters per sequence")
    p.add_argument("--lr", type=float, default=lr, help=f"peak learning rate (default {lr})")
    p.add_argument("--warmup", type=int, default=warmup, help="linear warmup steps")
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--dropout", type=float, default=dropout)
    p.add_argument("--eval-every", type=int, default=eval_every,
                   help="steps between validation estimates (and checkpoints by default)")
    p.add_argument("--eval-batches", type=int, default=20,
                   help="random validation batches per periodic estimate")
    p.add_argument("--checkpoint", type=Path, default=None,
                   help="checkpoint file, an .npz written by fnad.save (default: none)")
    p.add_argument("--checkpoint-every", type=int, default=None,
                   help="steps between checkpoints (default: --eval-every)")
    p.add_argument("--resume", action="store_true",
                   help="continue from --checkpoint (same flags); the run continues bit for bit")
    p.add_argument("--stop-at", type=int, default=None,
                   help="stop at this step (saving the checkpoint), as if interrupted")
    p.add_argument("--sample-chars", type=int, default=500,
                   help="characters to generate at the end (0: none)")
    p.add_output("--plot", type=Path, default=lambda args: docs_path(f"{args.example}_loss.png"),
                 shown="docs/<example>_loss.png", help="the loss-curve PNG ('none': no plot)")
    add_distributed_flag(p)


def load_corpus(args):
    [path] = require_data(args, "tinyshakespeare")
    text = data.load_tinyshakespeare(path=path.parent)
    if args.text_limit is not None:
        text = text[:args.text_limit]
    return data.CharCorpus(text), text


def _schedule(args):
    warmup = min(args.warmup, max(args.steps - 1, 0))
    return optim.warmup_cosine_decay_schedule(0.0, args.lr, warmup, max(args.steps, warmup + 1),
                                              args.lr / 10)


def make_optimizer(args):
    """AdamW (betas 0.9/0.95, decay on matrices only) under warmup + cosine, clipped at 1."""
    decay = lambda p: fnad.tree_map(lambda w: w.ndim > 1, p)
    return optim.chain(optim.clip_by_global_norm(1.0),
                       optim.adamw(_schedule(args), b1=0.9, b2=0.95,
                                   weight_decay=args.weight_decay, mask=decay))


def val_estimate(params, config, corpus, args):
    """Mean validation loss over `--eval-batches` random windows, always the same ones."""
    key = random.PRNGKey(args.seed + 1000)
    batches = []
    for k in random.split(key, args.eval_batches):
        batches.append(corpus.batch("val", args.batch_size, args.context, key=k))
    return models.evaluate(params, config, batches)


def check_resume(args, name):
    """A clear error (before any data is read) when --resume has no checkpoint to read."""
    if args.resume and (args.checkpoint is None or not args.checkpoint.exists()):
        raise SystemExit(f"{name}: --resume needs an existing --checkpoint file, got "
                         f"{args.checkpoint}; run once with --checkpoint PATH first.")


def _state(params, opt_state, key, step, history):
    return {"params": params, "opt_state": opt_state, "key": key, "step": step,
            "history": json.dumps(history)}


def train(args, config, params, corpus, *, name):
    """Train `params` (a model for `config`) on the corpus; returns `(params, history,
    n_params)`.

    Each step draws its batch and dropout key from one `fnad.random` key carried through
    the run, so a checkpoint (params, optimizer state, key, step, history) is all a resumed
    run needs to continue exactly as an uninterrupted one.

    With --distributed every process draws the same global batch and trains on its rows,
    with its own dropout key (the step's key folded with its index); the optimizer
    averages the gradients first, and process 0 writes the checkpoints."""
    start_distributed(args)
    opt = make_optimizer(args)
    if args.distributed:
        opt = optim.data_parallel(opt)
    opt_state = opt.init(params)
    key = random.fold_in(random.PRNGKey(args.seed), 1)
    step, history = 0, []
    every = args.checkpoint_every or args.eval_every
    if args.resume:
        check_resume(args, name)
        st = fnad.load(args.checkpoint, like=_state(params, opt_state, key, 0, []))
        params, opt_state, key, step = st["params"], st["opt_state"], st["key"], st["step"]
        history = json.loads(st["history"])
        print(f"resumed from {args.checkpoint} at step {step}")

    def loss_fn(params, x, y, key):
        return models.token_loss(params, config, x, y, key=key, train=True)

    train_step = common_train_step(loss_fn, opt, jit=not args.no_jit)
    n_params = sum(int(p.size) for p in fnad.tree_leaves(params))
    print(f"{name}: {n_params:,} parameters, {len(corpus.train):,} training and "
          f"{len(corpus.val):,} validation {unit(corpus)}s, vocabulary {corpus.vocab_size}, "
          f"{args.steps} steps of {args.batch_size} x {args.context}")
    bar = progress(total=args.steps, desc=name, disable=args.no_progress)
    bar.update(step)
    say = getattr(bar, "write", print)   # a line above the bar (print without tqdm)
    losses, t0, start = [], time.perf_counter(), step
    stop = args.steps if args.stop_at is None else min(args.stop_at, args.steps)
    while step < stop:
        key, kb, kd = random.split(key, 3)
        x, y = corpus.batch("train", args.batch_size, args.context, key=kb,
                            shard=args.distributed)
        if args.distributed:
            kd = dist.process_key(kd)
        params, opt_state, loss = train_step(params, opt_state, x, y, kd)
        losses.append(float(dist.pmean(loss) if args.distributed else loss))
        step += 1
        bar.update(1)
        rate = (step - start) * args.batch_size * args.context / (time.perf_counter() - t0)
        bar.set_postfix(loss=f"{np.mean(losses[-20:]):.3f}", chars_per_s=f"{rate:.0f}")
        if step % args.eval_every == 0 or step == args.steps:
            val = val_estimate(params, config, corpus, args)
            seconds = np.float64(time.perf_counter() - t0)
            if args.distributed:  # each process's clock differs: the history holds process 0's
                seconds = dist.broadcast(seconds)  # so that the replicas saved agree
            history.append({"step": step, "train_loss": float(np.mean(losses)),
                            "val_loss": val, "seconds": round(float(seconds), 1)})
            losses = []
            say(f"step {step}: train loss {history[-1]['train_loss']:.4f}, val loss "
                f"{val:.4f} nats ({models.bits_per_char(val):.4f} bits) per {unit(corpus)}")
        if args.checkpoint is not None and (step % every == 0 or step == stop):
            save = dist.save if args.distributed else fnad.save  # dist: once, by process 0
            save(args.checkpoint, _state(params, opt_state, key, step, history))
    bar.close()
    return params, history, n_params


def full_val_loss(params, config, corpus, args):
    """The validation loss over the whole validation split (non-overlapping windows)."""
    return models.evaluate(params, config,
                           models.lm_batches(corpus.val, args.context, args.batch_size))


def sample(params, config, corpus, args, *, prompt="\n"):
    """`--sample-chars` characters generated from `prompt` (temperature 0.8, top-k 20) with
    the KV cache. A GPT sees at most `max_len` positions, so a long sample is made in
    pieces, each starting from the last `max_len // 2` characters of the text so far."""
    n = args.sample_chars
    if n <= 0:
        return ""
    chars = getattr(corpus, "chars", None)  # a TokenCorpus encodes any text
    if chars is not None and prompt not in chars:
        prompt = chars[0]
    ids = corpus.encode(prompt).astype(np.int64)
    limit = getattr(config, "max_len", None)
    key, piece = random.PRNGKey(args.seed + 7), 0
    while n > 0:
        context = ids if limit is None else ids[-(limit // 2):]
        new = n if limit is None else min(n, limit - len(context) + 1)
        out = models.generate(params, config, context[None], key=random.fold_in(key, piece),
                              max_new=new, temperature=0.8, top_k=20)
        ids = np.concatenate([ids, np.asarray(out)[0, len(context):]])
        n, piece = n - new, piece + 1
    return corpus.decode(ids)


def plot(path, history, title, per="char"):
    """Train and validation loss against steps; False (with a message) without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the plot")
        return False
    steps = [h["step"] for h in history]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(steps, [h["train_loss"] for h in history], label="train (mean since last point)")
    ax.plot(steps, [h["val_loss"] for h in history], label="validation (estimate)")
    ax.set_xlabel("step")
    ax.set_ylabel(f"loss (nats per {per})")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"wrote {path}")
    return True


def plot_path(args):
    """The loss-curve path: --plot, or docs/<example>_loss.png for the full default run;
    None for no plot."""
    return None if args.plot is None or str(args.plot) == "none" else args.plot


def unit(corpus):
    """What the corpus's ids are: "char" (a CharCorpus) or "token" (a TokenCorpus)."""
    return "char" if hasattr(corpus, "chars") else "token"


def finish(args, name, config, params, corpus, history):
    """Full validation loss (per id of the corpus), the sample and the plot; returns
    `(val_loss, sample_text)`."""
    val = full_val_loss(params, config, corpus, args)
    u = unit(corpus)
    print(f"{name}: validation loss {val:.4f} nats/{u}, {models.bits_per_char(val):.4f} "
          f"bits/{u}, perplexity {models.perplexity(val):.3f}")
    text = sample(params, config, corpus, args) if is_main(args) else ""
    if text:
        print("---- sample ----\n" + text + "\n----------------")
    path = plot_path(args)
    if path is not None and history and is_main(args):
        plot(path, history, f"{name} on TinyShakespeare", unit(corpus))
    return val, text


def round_history(history):
    return [{k: (round(v, 5) if isinstance(v, float) and not math.isnan(v) else v)
             for k, v in h.items()} for h in history]
