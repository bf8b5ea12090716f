"""Fast math's batching of a Python loop's weight GEMMs (fnad/_jit/loops.py), before and after.

The tanh-RNN training step of benchmarks/steps.py written as a Python loop over time (its
`rnn_loop` workload: input 32, hidden 128, 50 steps, batch 32, Adam, float32) under exact
`fnad.jit`, under `fast_math=True` without the pass (`optimize=` every pass but "loops":
fast math before it), with it, and with it but without in-place writes ("inplace" off: a
fused kernel writing into one of its own inputs ran slower here), with and without the
pass: the GEMMs and equations of each optimised program, the largest difference of its
loss and gradients from eager's, then medians of interleaved blocks of calls.

    PYTHONPATH=. python benchmarks/loop_gemms.py [--repeats 90] [--threads 2]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_times, threads_from_argv

if __name__ == "__main__":
    threads_from_argv()   # before NumPy loads its BLAS

import numpy as np

import fnad
import steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=90)
    ap.add_argument("--threads", type=int, default=2, help="BLAS threads")
    args = ap.parse_args()
    w = steps.rnn_loop_workload(steps.FULL["rnn_loop"], np.random.default_rng(0))
    step, sargs = w["step"], w["args"]
    vg = fnad.value_and_grad(w["loss"])
    want = fnad.tree_leaves(vg(sargs[0], *sargs[2:]))
    no_loops = set(fnad.jit.PASSES) - {"loops"}
    no_inplace = set(fnad.jit.PASSES) - {"inplace"}
    variants = {"exact jit": {}, "fast, loops off": dict(fast_math=True, optimize=no_loops),
                "fast": dict(fast_math=True),
                "fast, inplace off": dict(fast_math=True, optimize=no_inplace),
                "fast, both off": dict(fast_math=True, optimize=no_inplace - {"loops"})}
    fns = {}
    for name, kw in variants.items():
        jstep = fnad.jit(step, **kw)
        jstep(*sargs)  # trace, optimise, compile
        counts = jstep.graph(*sargs).primitive_counts()
        got = fnad.tree_leaves(fnad.jit(vg, **kw)(sargs[0], *sargs[2:]))
        err = max(float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))
                  for a, b in zip(got, want))
        print(f"{name:17s} program: {sum(counts.values())} equations, "
              f"{counts.get('matmul', 0)} matmul, {counts.get('concatenate', 0)} concatenate; "
              f"loss and gradients vs eager: max |diff| / max(1, max |eager|) {err:.2e}")
        fns[name] = lambda jstep=jstep: jstep(*sargs)
    med = median_times(fns, args.repeats)
    for name, t in med.items():
        print(f"{name:17s} median {1e3 * t:.2f} ms")


if __name__ == "__main__":
    main()
