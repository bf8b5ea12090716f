"""Memory saved by fnad.checkpoint: peak traced memory of a gradient with and without
rematerialisation, and what the recomputation costs in time.

The model is a stack of residual tanh blocks (batch 1024, width 256, float64); each block
holds two activations for its backward pass. With `fnad.checkpoint` around each block the
tape keeps only the blocks' inputs, and the backward pass recomputes each block's inside.

Run: python benchmarks/checkpoint_memory.py [--blocks 16]
"""

import argparse
import statistics
import time
import tracemalloc

import numpy as np

import fnad
import fnad.numpy as fnp


def block(x, w1, w2):
    h = fnp.tanh(x @ w1)
    return x + fnp.tanh(h @ w2)


def loss(params, x, remat):
    f = fnad.checkpoint(block) if remat else block
    for w1, w2 in params:
        x = f(x, w1, w2)
    return fnp.mean(x * x)


def peak_mib(fn):
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2 ** 20


def median_s(fn, repeats=5):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=16)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--width", type=int, default=256)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    d = args.width
    params = [(rng.standard_normal((d, d)) / np.sqrt(d), rng.standard_normal((d, d)) / np.sqrt(d))
              for _ in range(args.blocks)]
    x = rng.standard_normal((args.batch, d))
    grad = fnad.grad(loss)

    g_plain = grad(params, x, False)
    g_remat = grad(params, x, True)
    err = max(float(np.max(np.abs(a - b))) for a, b in zip(fnad.tree_leaves(g_plain),
                                                           fnad.tree_leaves(g_remat)))
    act_mib = args.batch * d * 8 / 2 ** 20
    rows = []
    for name, remat in (("plain", False), ("checkpoint", True)):
        rows.append((name, peak_mib(lambda: grad(params, x, remat)),
                     median_s(lambda: grad(params, x, remat))))
    param_mib = sum(p.nbytes for p in fnad.tree_leaves(params)) / 2 ** 20
    print(f"{args.blocks} residual tanh blocks, batch {args.batch}, width {d}, float64 "
          f"(one activation = {act_mib:.2f} MiB; the gradient itself = {param_mib:.0f} MiB)")
    print(f"max |grad difference| plain vs checkpoint: {err:.1e}")
    print(f"{'':12s} {'peak MiB':>9s} {'time ms':>9s}")
    for name, mib, sec in rows:
        print(f"{name:12s} {mib:9.1f} {sec * 1e3:9.1f}")
    (_, m0, t0), (_, m1, t1) = rows
    print(f"checkpoint / plain: memory {m1 / m0:.2f}x, time {t1 / t0:.2f}x")


if __name__ == "__main__":
    main()
