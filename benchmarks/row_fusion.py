"""fnad.jit's row fusion (fnad/_jit/rows.py): softmax, layer norm and RMS norm written with
plain `fnad.numpy`, forward and forward+backward, eager against jit with the "rows" pass on
and off, at (64*32, 128) and (4096, 1024) float32. Medians of alternating blocks in one
process; each jit is called once before timing (trace, optimise, kernel build). Every jit
result is checked bit for bit against eager first.

Run: python benchmarks/row_fusion.py [--repeats N] [--threads N]
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_times, threads_from_argv

THREADS = threads_from_argv()
os.environ.setdefault("FNAD_CACHE_DIR", tempfile.mkdtemp(prefix="fnad_bench_cache_"))

import numpy as np  # noqa: E402

import fnad  # noqa: E402
import fnad.numpy as fnp  # noqa: E402

NO_ROWS = set(fnad.jit.PASSES) - {"rows"}


def softmax(x, g, b):
    e = fnp.exp(x - fnp.max(x, axis=-1, keepdims=True))
    return e / fnp.sum(e, axis=-1, keepdims=True)


def layer_norm(x, g, b):
    mu = fnp.mean(x, axis=-1, keepdims=True)
    var = fnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / fnp.sqrt(var + 1e-5) * g + b


def rms_norm(x, g, b):
    return x / fnp.sqrt(fnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g


def backward(f):
    def loss(x, g, b, w):
        return fnp.sum(f(x, g, b) * w)
    return fnad.grad(loss, argnums=(0, 1, 2))


def _same(a, b):
    return all(np.asarray(p).tobytes() == np.asarray(q).tobytes()
               for p, q in zip(fnad.tree.tree_leaves(a), fnad.tree.tree_leaves(b)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"row fusion, float32, {THREADS} threads, median of {args.repeats} calls "
          "(ms; ratios to eager)")
    print(f"{'case':<28}{'eager':>9}{'jit rows off':>14}{'jit rows on':>13}"
          f"{'off/eager':>11}{'on/eager':>10}{'on/off':>8}")
    for shape in ((64 * 32, 128), (4096, 1024)):
        x = rng.standard_normal(shape).astype(np.float32)
        g, b = (rng.standard_normal(shape[-1]).astype(np.float32) for _ in range(2))
        w = rng.standard_normal(shape).astype(np.float32)
        for f in (softmax, layer_norm, rms_norm):
            for label, fn, a in ((f"{f.__name__}", f, (x, g, b)),
                                 (f"{f.__name__} fwd+bwd", backward(f), (x, g, b, w))):
                on, off = fnad.jit(fn), fnad.jit(fn, optimize=NO_ROWS)
                want = fn(*a)
                assert _same(on(*a), want) and _same(off(*a), want), label
                med = median_times({"eager": lambda: fn(*a), "off": lambda: off(*a),
                                    "on": lambda: on(*a)}, args.repeats, pause=0.05)
                e, o, n = med["eager"], med["off"], med["on"]
                print(f"{label + ' ' + str(shape):<28}{e * 1e3:9.3f}{o * 1e3:14.3f}"
                      f"{n * 1e3:13.3f}{o / e:11.2f}{n / e:10.2f}{n / o:8.2f}")


if __name__ == "__main__":
    main()
