"""jit's fused elementwise kernels run serially against split over fnad's thread pool, by
size: what `SPLIT_MIN` (fnad/_jit/kernels.py, elements touched) was chosen from.

Three float32 kernels, each at a few sizes: a cheap flat one (`a * 1.5 + c * c - a`, two
inputs, one output), the tanh-GELU of `x + b` with a broadcast bias under fast math (one
kernel, split by rows) and the GELU's forward and backward together (fast math). Every
kernel is made to split at any size here; the table gives the median call with the pool at 1 thread
(serial) and at --threads (split), and checks that both give the same bits.

Run: python benchmarks/jit_split.py [--repeats N] [--threads N]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_times, threads_from_argv

THREADS = threads_from_argv()

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import fnad  # noqa: E402
import fnad.numpy as fnp  # noqa: E402
from fnad._jit import kernels  # noqa: E402
from fnad.kernels import _threads  # noqa: E402


def flat(a, c):
    return a * 1.5 + c * c - a


def gelu_bias(x, b):
    h = x + b
    return 0.5 * h * (1.0 + fnp.tanh(0.7978846 * (h + 0.044715 * h ** 3)))


def gelu_bias_grad(x, b, g):
    return fnad.vjp(gelu_bias, x, b)[1](g)[0]


CASES = ((flat, False, lambda x, b: (x, x[::-1].copy())),
         (gelu_bias, True, lambda x, b: (x, b)),
         (gelu_bias_grad, True, lambda x, b: (x, b, x[::-1].copy())))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--threads", type=int, default=THREADS)
    args = p.parse_args()
    kernels.SPLIT_MIN = 0  # split every kernel built from here on
    _threads.MIN_WORK = 0
    rng = np.random.default_rng(0)
    print(f"fused elementwise kernels, float32, 1 thread vs {args.threads} "
          f"(ms, median of {args.repeats} calls; load average {os.getloadavg()[0]:.1f})")
    print(f"{'kernel':<16}{'elements':>10}{'touched':>10}{'serial':>9}{'split':>9}"
          f"{'split/serial':>14}")
    for rows in (32, 256, 1024, 4096):
        x = rng.standard_normal((rows, 512)).astype(np.float32)
        b = rng.standard_normal(512).astype(np.float32)
        for f, fast, make in CASES:
            a = make(x, b)
            jf = fnad.jit(f, fast_math=fast)
            eqns = [e for e in jf.graph(*a).eqns if e.prim.name == "fused_elementwise"]
            touched = sum(x.size * (len(e.args) + len(e.outvars)) for e in eqns)
            run = {}
            for label, n in (("serial", 1), ("split", args.threads)):
                run[label] = lambda n=n: (_threads.set_threads(n), jf(*a))[1]
            same = run["serial"]().tobytes() == run["split"]().tobytes()
            med = median_times(run, args.repeats, pause=0.05)
            _threads.set_threads(None)
            s, t = med["serial"], med["split"]
            print(f"{f.__name__:<16}{x.size:>10}{touched:>10}{s * 1e3:9.3f}{t * 1e3:9.3f}"
                  f"{t / s:14.2f}{'' if same else '  BITS DIFFER'}")


if __name__ == "__main__":
    main()
