"""Does unrolling a short lax.scan into the jitted program speed a training step up?

The tanh-RNN training step of benchmarks/steps.py (input 32, hidden 128, 50 steps, batch
32, Adam, float32) under `fnad.jit`, once with its scans kept (the default, `unroll=0`)
and once unrolled (`fnad.jit(step, unroll=4000)`): the size of each optimised program, then
medians of interleaved blocks of calls.

    PYTHONPATH=. python benchmarks/scan_unroll.py [--repeats 50]
"""

import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import fnad
import steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=50)
    args = ap.parse_args()
    w = steps.rnn_workload(steps.FULL["rnn"], np.random.default_rng(0))
    jitted = {}
    for name, limit in (("scan", 0), ("unrolled", 4000)):
        jitted[name] = fnad.jit(w["step"], unroll=limit)
        jitted[name](*w["args"])  # trace, optimise, compile
        counts = jitted[name].graph(*w["args"]).primitive_counts()
        print(f"{name:9s} program: {sum(counts.values())} equations, {counts.get('matmul', 0)} "
              f"matmul, {counts.get('fused_elementwise', 0)} fused kernels, "
              f"{counts.get('scan', 0)} scan")
    times = {k: [] for k in jitted}
    for _ in range(5):
        for k, f in jitted.items():
            for _ in range(args.repeats // 5):
                t = time.perf_counter()
                f(*w["args"])
                times[k].append(time.perf_counter() - t)
    for k, ts in times.items():
        print(f"{k:9s} median {1e3 * float(np.median(ts)):.2f} ms")


if __name__ == "__main__":
    main()
