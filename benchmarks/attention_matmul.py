"""Formulations of attention's batched small matmuls on the GPT step's shapes (batch 32,
4 heads, context 64, head size 32, float32): which one fnad_nn should use.

The heads come out of the projections as (B, T, H, D) arrays viewed as (B, H, T, D), so the
operands of `q @ k^T` and `p @ v` are strided. Candidates, each giving the same product:
  matmul      np.matmul on the strided views
  k^T copied  k^T copied C-ordered first (what fnad_nn's attention does)
  contiguous  np.matmul after copying the strided operands C-ordered (the copies counted)
  einsum      np.einsum with optimize=False on the (B, T, H, D) arrays, no transposes
  split       the batch split over fnad's kernel thread pool, BLAS on one thread per part
Medians in interleaved blocks (benchmarks/_timing.py).

Run: python benchmarks/attention_matmul.py [--threads N] [--repeats N]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_times, threads_from_argv

if __name__ == "__main__":
    THREADS = threads_from_argv()

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from fnad.kernels import _threads


def split_matmul(a, b, set_threads):
    out = np.empty(a.shape[:-1] + b.shape[-1:], np.float32)

    def part(lo, hi):
        np.matmul(a[lo:hi], b[lo:hi], out=out[lo:hi])

    old = set_threads(1)
    try:
        _threads.run_ranges(part, a.shape[0], (), work=1 << 30)
    finally:
        set_threads(old)
    return out


def main():
    reps = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 60
    r = np.random.default_rng(0)
    b_, t, h, d = 32, 64, 4, 32
    q4, k4, v4 = (r.standard_normal((b_, t, h, d), dtype=np.float32) for _ in range(3))
    q, k, v = (x.transpose(0, 2, 1, 3) for x in (q4, k4, v4))  # (B, H, T, D) views
    kt = k.transpose(0, 1, 3, 2)
    p = r.random((b_, h, t, t), dtype=np.float32)
    set_threads = _threads._blas_local()
    cases = {
        "scores q @ k^T": {
            "matmul": lambda: np.matmul(q, kt),
            "k^T copied": lambda: np.matmul(q, np.ascontiguousarray(kt)),
            "contiguous": lambda: np.matmul(np.ascontiguousarray(q), np.ascontiguousarray(kt)),
            "einsum": lambda: np.einsum("bqhd,bkhd->bhqk", q4, k4, optimize=False),
        },
        "output p @ v": {
            "matmul": lambda: np.matmul(p, v),
            "contiguous": lambda: np.matmul(p, np.ascontiguousarray(v)),
            "einsum": lambda: np.einsum("bhqk,bkhd->bhqd", p, v4, optimize=False),
        },
    }
    if set_threads is not None:
        cases["scores q @ k^T"]["split"] = lambda: split_matmul(q, kt, set_threads)
        cases["output p @ v"]["split"] = lambda: split_matmul(p, v, set_threads)
    print(f"# benchmarks/attention_matmul.py: {os.cpu_count()} CPUs, median ms of {reps} calls, "
          f"load average {os.getloadavg()[0]:.1f}")
    for name, fns in cases.items():
        ref = fns["matmul"]()
        for f in fns.values():
            np.testing.assert_allclose(f(), ref, rtol=1e-4, atol=1e-4)
        med = median_times(fns, reps, rounds=3, pause=0.1)
        print(f"{name:16s} " + "  ".join(f"{k} {v * 1e3:.3f}" for k, v in med.items()))


if __name__ == "__main__":
    main()
