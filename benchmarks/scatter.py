"""Gathers' backward passes: scatter-add strategies at GPT sizes, side by side.

Run: python benchmarks/scatter.py [--repeat N]

Cases: a GPT-2 token embedding (vocab 50257, width 768, 8 x 1024 ids, mostly distinct
rows) and a char-level embedding (vocab 65, width 384, 64 x 256 ids, every row repeated).
Rows printed per case, all measured in this one process, medians of N runs:
  add.at           np.add.at(z, ids, g) into an existing zero array (the raw primitive)
  fnad scatter     fnad.numpy._scatter.scatter_add, same inputs (the strategy chosen)
  old vjp          the former take-backward: zeros + copy + np.add.at
  fnad vjp         fnad's backward of fnp.take(w, ids, axis=0) (zeros + scatter_add)
Ratios are against add.at (lower is faster).
"""

import argparse
import time

import numpy as np

import fnad
import fnad.numpy as fnp
from fnad.numpy._scatter import scatter_add

CASES = {"gpt2 token embedding": (50257, 768, 8, 1024, None),
         "char-level embedding": (65, 384, 64, 256, 0.3)}


def median_ms(fun, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fun()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def run_case(vocab, width, batch, seq, skew, repeat, dtype=np.float32):
    rng = np.random.default_rng(0)
    if skew is None:
        ids = rng.integers(0, vocab, (batch, seq))
    else:  # one frequent symbol (the space), the rest uniform
        p = np.r_[skew, np.full(vocab - 1, (1 - skew) / (vocab - 1))]
        ids = rng.choice(vocab, (batch, seq), p=p)
    g = rng.standard_normal((batch, seq, width)).astype(dtype)
    w = rng.standard_normal((vocab, width)).astype(dtype)
    z = np.zeros((vocab, width), dtype)

    def old_vjp():
        out = np.zeros((vocab, width), dtype).copy()
        np.add.at(out, ids, g)

    _, f_vjp = fnad.vjp(lambda m: fnp.take(m, ids, axis=0), w)
    rows = {
        "add.at": lambda: np.add.at(z, ids, g),
        "fnad scatter": lambda: scatter_add(z, (ids,), g),
        "old vjp": old_vjp,
        "fnad vjp": lambda: f_vjp(g),
    }
    for f in rows.values():  # warm up (page faults of fresh arrays, caches)
        f()
    return {k: median_ms(f, repeat) for k, f in rows.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    print(f"numpy {np.__version__}; medians of {args.repeat} runs; float32")
    for name, (vocab, width, batch, seq, skew) in CASES.items():
        res = run_case(vocab, width, batch, seq, skew, args.repeat)
        base = res["add.at"]
        print(f"\n{name}: vocab {vocab}, width {width}, ids {batch}x{seq}")
        print(f"  {'strategy':<14} {'median ms':>10} {'vs add.at':>10}")
        for k, v in res.items():
            print(f"  {k:<14} {v:>10.2f} {v / base:>10.2f}")


if __name__ == "__main__":
    main()
