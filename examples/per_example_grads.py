"""Per-example gradients with fnad.vmap(fnad.grad(loss)), and DP-SGD on Fashion-MNIST.

An MLP (784-256-10, ReLU) is written for one example; `vmap(grad(loss))` gives the gradient
of every example of a batch in one batched pass. The script first checks them against a
Python loop of `grad` over the same batch (max abs difference printed, and both timed), then
trains with DP-SGD (Abadi et al. 2016): each example's gradient is clipped to L2 norm C, the
clipped gradients are summed, Gaussian noise of standard deviation sigma * C is added, and the
sum is divided by the batch size. It reports the test accuracy reached (no privacy
accounting: the script prints sigma, C and the sampling rate for an accountant).

    python examples/per_example_grads.py                 # 2 epochs of DP-SGD
    python examples/per_example_grads.py --steps 20      # a smoke run of a few seconds
"""

import math
import sys
import time

import numpy as np

import fnad
import fnad.numpy as fnp
import fnad.random as random
import fnad_nn as nn
import fnad_optim as optim
from fnad_nn import data

from _common import parser, progress, write_result
import _mnist


def init(key, hidden=256):
    return nn.init_mlp(key, [784, hidden, 10])


def predict(params, x):
    """Logits for images `x` of shape (..., 1, 28, 28): one example or a batch."""
    h = fnp.reshape(x, fnp.shape(x)[:-3] + (784,))
    for layer in params[:-1]:
        h = nn.relu(nn.linear(layer, h))
    return nn.linear(params[-1], h)


def loss(params, x, y):
    """The cross-entropy of ONE example: x (1, 28, 28), y a 0-d label."""
    return nn.sparse_softmax_cross_entropy(predict(params, x), y)


per_example_grads = fnad.vmap(fnad.grad(loss), in_axes=(None, 0, 0))


def loop_grads(params, xs, ys):
    grads = [fnad.grad(loss)(params, x, y) for x, y in zip(xs, ys)]
    return fnad.tree_map(lambda *g: np.stack(g), *grads)


def check(params, xs, ys):
    """Max abs difference of vmap's per-example gradients from a loop's, and both times."""
    t0 = time.perf_counter()
    fast = per_example_grads(params, xs, ys)
    t1 = time.perf_counter()
    slow = loop_grads(params, xs, ys)
    t2 = time.perf_counter()
    diff = max(float(np.max(np.abs(a - b))) for a, b in
               zip(fnad.tree_leaves(fast), fnad.tree_leaves(slow)))
    return diff, t1 - t0, t2 - t1


def privatize(grads, clip, sigma, rng):
    """DP-SGD's gradient: per-example grads clipped to norm `clip`, summed, Gaussian noise
    (std sigma * clip) added, divided by the batch size."""
    leaves, tree = fnad.tree_flatten(grads)
    n = leaves[0].shape[0]
    sq = sum(np.einsum("ij,ij->i", g.reshape(n, -1), g.reshape(n, -1)) for g in leaves)
    scale = np.minimum(1.0, clip / np.maximum(np.sqrt(sq), 1e-12))
    out = []
    for g in leaves:
        total = np.tensordot(scale.astype(g.dtype), g, axes=1)
        noise = rng.standard_normal(total.shape).astype(g.dtype) * (sigma * clip)
        out.append((total + noise) / n)
    return fnad.tree_unflatten(tree, out), float(np.mean(scale < 1))


def build_parser():
    p = parser("per_example_grads", __doc__)
    _mnist.add_args(p, epochs=2, lr=1e-3, batch_size=128, dropout=0.0, distributed=False)
    p.add_argument("--clip", type=float, default=1.0, help="per-example L2 clip norm C")
    p.add_argument("--sigma", type=float, default=1.0, help="noise multiplier sigma")
    p.add_argument("--check-batch", type=int, default=64,
                   help="examples in the vmap-versus-loop check (default 64)")
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    start = time.perf_counter()
    xtr, ytr, xte, yte = _mnist.load(args)
    rng = np.random.default_rng(args.seed)
    params = init(random.PRNGKey(args.seed))

    n = min(args.check_batch, len(ytr))
    diff, t_vmap, t_loop = check(params, xtr[:n], ytr[:n])
    print(f"per-example grads of {n} examples: max |vmap - loop| = {diff:.2e}; vmap "
          f"{t_vmap * 1e3:.1f} ms, loop {t_loop * 1e3:.1f} ms ({t_loop / t_vmap:.1f}x)")

    steps_per_epoch = math.ceil(len(ytr) / args.batch_size)
    total = args.epochs * steps_per_epoch if args.steps is None else args.steps
    opt = optim.adam(optim.cosine_decay_schedule(args.lr, total, 0.1))
    state = opt.init(params)
    print(f"DP-SGD: C = {args.clip}, sigma = {args.sigma}, batch {args.batch_size} of "
          f"{len(ytr)} (q = {args.batch_size / len(ytr):.4f}), {total} steps")
    step, history = 0, []
    bar = progress(total=total, desc="DP-SGD", disable=args.no_progress)
    while step < total:
        for idx in data.minibatches(len(ytr), args.batch_size, rng=rng)[:total - step]:
            grads = per_example_grads(params, xtr[idx], ytr[idx])
            g, clipped = privatize(grads, args.clip, args.sigma, rng)
            updates, state = opt.update(g, state, params)
            params = optim.apply_updates(params, updates)
            step += 1
            bar.update()
            bar.set_postfix(clipped=f"{clipped:.2f}")
        acc = _mnist.accuracy(predict, params, xte, yte)
        history.append({"step": step, "test_accuracy": acc})
        getattr(bar, "write", print)(f"step {step}: test accuracy {acc:.4f}")
    bar.close()
    acc = history[-1]["test_accuracy"]
    dataset = _mnist.NAMES[args.dataset]
    print(f"{dataset} DP-SGD test accuracy {acc:.4f}")
    return write_result(args, argv, "per_example_grads", f"{dataset} test accuracy (DP-SGD MLP)",
                        acc, start=start, per_example_max_abs_diff=diff,
                        check_examples=n, check_vmap_s=round(t_vmap, 4),
                        check_loop_s=round(t_loop, 4), clip=args.clip, sigma=args.sigma,
                        batch_size=args.batch_size, steps=total, history=history)


if __name__ == "__main__":
    main()
