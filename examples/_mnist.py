"""The MNIST / Fashion-MNIST training loop shared by mnist_mlp.py, mnist_cnn.py and
mnist_curve.py: data, the two models, AdamW with warmup + cosine decay, per-epoch history."""

import math
import time

import numpy as np

import fnad
import fnad.distributed as dist
import fnad.random as random
import fnad_nn as nn
import fnad_optim as optim
from fnad_nn import data

from _common import add_distributed_flag, progress, require_data, start_distributed
from _common import train_step as common_train_step

NAMES = {"fashion": "Fashion-MNIST", "mnist": "MNIST"}
DATA_NAMES = {"fashion": "fashion-mnist", "mnist": "mnist"}   # the data sets' folder names


def add_args(p, *, epochs, lr, batch_size, dropout, distributed=True):
    p.add_argument("--dataset", choices=["fashion", "mnist"], default="fashion",
                   help="Fashion-MNIST (default) or MNIST")
    p.add_argument("--data-dir", default=None,
                   help="directory holding the four IDX files (default: $FNAD_DATA_DIR/<name>, "
                        "then ~/.cache/fnad/<name>, then a download)")
    p.add_argument("--epochs", type=int, default=epochs, help=f"epochs (default {epochs})")
    p.add_argument("--steps", type=int, default=None,
                   help="stop after this many steps (smoke runs)")
    p.add_argument("--batch-size", type=int, default=batch_size)
    p.add_argument("--lr", type=float, default=lr, help=f"peak learning rate (default {lr})")
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--dropout", type=float, default=dropout)
    p.add_argument("--no-flip", action="store_true",
                   help="no random horizontal flips (on by default for Fashion-MNIST only)")
    p.add_argument("--train-limit", type=int, default=None, help="use the first N training images")
    p.add_argument("--test-limit", type=int, default=None, help="use the first N test images")
    if distributed:  # the examples that train with `train` below
        add_distributed_flag(p)


def load(args):
    """Train and test images as float32 (N, 1, 28, 28), standardised with the training
    set's mean and standard deviation, and int64 labels. Missing files end the run with
    one message naming all four (see _common.require_data)."""
    require_data(args, DATA_NAMES[args.dataset])
    xtr, ytr = data.load_mnist(args.dataset, "train", path=args.data_dir, limit=args.train_limit)
    xte, yte = data.load_mnist(args.dataset, "test", path=args.data_dir, limit=args.test_limit)
    xtr, xte = xtr.astype(np.float32) / 255, xte.astype(np.float32) / 255
    mean, std = xtr.mean(), xtr.std()
    norm = lambda x: ((x - mean) / std)[:, None]
    return norm(xtr), ytr.astype(np.int64), norm(xte), yte.astype(np.int64)


# ----------------------------------------------------------------------------- models

def init_mlp(key, hidden=(512, 512)):
    return nn.init_mlp(key, [784, *hidden, 10])


def mlp(params, x, *, key=None, rate=0.0):
    h = nn.flatten(x)
    keys = random.split(key, len(params)) if key is not None else [None] * len(params)
    for layer, k in zip(params[:-1], keys):
        h = nn.dropout(nn.relu(nn.linear(layer, h)), rate, key=k, train=key is not None)
    return nn.linear(params[-1], h)


def init_cnn(key, c1=32, c2=64, hidden=128):
    k = random.split(key, 4)
    return {"conv1": nn.init_conv2d(k[0], 1, c1, 3), "conv2": nn.init_conv2d(k[1], c1, c2, 3),
            "fc1": nn.init_linear(k[2], c2 * 7 * 7, hidden),
            "fc2": nn.init_linear(k[3], hidden, 10)}


def cnn(params, x, *, key=None, rate=0.0):
    """conv3x3(32)-relu-maxpool2, conv3x3(64)-relu-maxpool2, dropout, fc(128)-relu, dropout,
    fc(10)."""
    k1, k2 = random.split(key) if key is not None else (None, None)
    train = key is not None
    h = nn.max_pool2d(nn.relu(nn.conv2d(params["conv1"], x, padding=1)), 2)
    h = nn.max_pool2d(nn.relu(nn.conv2d(params["conv2"], h, padding=1)), 2)
    h = nn.dropout(nn.flatten(h), rate / 2, key=k1, train=train)
    h = nn.dropout(nn.relu(nn.linear(params["fc1"], h)), rate, key=k2, train=train)
    return nn.linear(params["fc2"], h)


MODELS = {"mlp": (init_mlp, mlp), "cnn": (init_cnn, cnn)}


def accuracy(model, params, x, y, batch=1000):
    hits = sum(int(np.sum(np.argmax(model(params, x[i:i + batch]), -1) == y[i:i + batch]))
               for i in range(0, len(y), batch))
    return hits / len(y)


# ----------------------------------------------------------------------------- training

def train(args, model_name, *, on_epoch=None):
    """Train `model_name` ("mlp" or "cnn") and return `(params, history)`; `history` has
    one dict per epoch: epoch, step, train_loss (mean over the epoch), test_accuracy,
    seconds and cpu_seconds (wall and CPU time since the start of training).

    With --distributed every process shuffles alike and trains on its rows of each batch
    (with its own dropout key); the optimizer averages the gradients first."""
    start_distributed(args)
    xtr, ytr, xte, yte = load(args)
    init, model = MODELS[model_name]
    flip = args.dataset == "fashion" and not args.no_flip
    rng = np.random.default_rng(args.seed)
    key, init_key = random.split(random.PRNGKey(args.seed))
    params = init(init_key)
    n_params = sum(int(p.size) for p in fnad.tree_leaves(params))
    steps_per_epoch = math.ceil(len(ytr) / args.batch_size)
    total = args.epochs * steps_per_epoch
    if args.steps is not None:
        total = min(total, args.steps)
    epochs = math.ceil(total / steps_per_epoch)
    schedule = optim.warmup_cosine_decay_schedule(
        0.0, args.lr, min(steps_per_epoch, max(total // 10, 1)), total, args.lr * 1e-2)
    opt = optim.adamw(schedule, weight_decay=args.weight_decay,
                      mask=lambda p: fnad.tree_map(lambda w: w.ndim > 1, p))
    if args.distributed:
        opt = optim.data_parallel(opt)
    opt_state = opt.init(params)

    def loss_fn(params, x, y, key):
        return nn.sparse_softmax_cross_entropy(model(params, x, key=key, rate=args.dropout), y)

    train_step = common_train_step(loss_fn, opt, jit=not args.no_jit)
    print(f"{NAMES[args.dataset]} {model_name}: {len(ytr)} training and {len(yte)} test images, "
          f"{n_params:,} parameters, {total} steps of batch {args.batch_size}")
    history, step, start, cpu0 = [], 0, time.perf_counter(), time.process_time()
    for epoch in range(1, epochs + 1):
        batches = data.minibatches(len(ytr), args.batch_size, rng=rng)[:total - step]
        bar = progress(batches, desc=f"epoch {epoch}/{epochs}", disable=args.no_progress)
        losses, t0, seen = [], time.perf_counter(), 0
        for idx in bar:
            flips = rng.random(len(idx)) < 0.5 if flip else None  # drawn for the whole batch
            key, sub = random.split(key)
            if args.distributed:  # this process's rows and dropout key
                idx, flips, sub = *data.shard_batch((idx, flips)), dist.process_key(sub)
            x, y = xtr[idx], ytr[idx]
            if flip:
                x = np.where(flips[:, None, None, None], x[..., ::-1], x)
            params, opt_state, loss = train_step(params, opt_state, x, y, sub)
            losses.append(float(dist.pmean(loss) if args.distributed else loss))
            step, seen = step + 1, seen + len(idx)
            bar.set_postfix(loss=f"{np.mean(losses[-50:]):.4f}",
                            ex_per_s=f"{seen / (time.perf_counter() - t0):.0f}")
        bar.close()
        acc = accuracy(model, params, xte, yte)
        history.append({"epoch": epoch, "step": step, "train_loss": float(np.mean(losses)),
                        "test_accuracy": acc, "seconds": round(time.perf_counter() - start, 1),
                        "cpu_seconds": round(time.process_time() - cpu0, 1)})
        print(f"epoch {epoch}: train loss {history[-1]['train_loss']:.4f}, test accuracy "
              f"{acc:.4f} ({history[-1]['seconds']:.0f} s)")
        if on_epoch is not None and epoch < epochs:
            on_epoch(history, n_params)
    return params, history, n_params
