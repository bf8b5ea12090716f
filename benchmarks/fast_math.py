"""fnad.jit's fast math (`fast_math=True`, fnad/_jit/fastmath.py): tanh-GELU, softmax and a
cube (`x ** 3`, NumPy's power exactly, products under fast math) written with plain
`fnad.numpy`, forward and forward+backward, eager against exact jit and
fast jit, float32, at (64*32, 128) and (4096, 1024). Medians of alternating blocks in one
process; each jit is called once before timing. Exact jit is checked bit for bit against
eager first, fast jit to its documented bound (docs/jit.md, "Fast math").

--bounds instead measures each op's largest error in ulps against float64 (float32 ops) and
long double (float64 ops) references: float32 over every float32 input with --exhaustive
(2^32 values; minutes), else over a sample of every scale; and `x ** 3`, `x ** 4` as fast
math's products (with NumPy's `power` beside them) over every scale whose power is normal.

Run: python benchmarks/fast_math.py [--repeats N] [--threads N]
     python benchmarks/fast_math.py --bounds [--exhaustive]
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this fnad
from _timing import median_times, threads_from_argv

THREADS = threads_from_argv()
os.environ.setdefault("FNAD_CACHE_DIR", tempfile.mkdtemp(prefix="fnad_bench_cache_"))

import numpy as np  # noqa: E402

import fnad  # noqa: E402
import fnad.numpy as fnp  # noqa: E402


def gelu(x):
    return 0.5 * x * (1.0 + fnp.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def softmax(x):
    e = fnp.exp(x - fnp.max(x, axis=-1, keepdims=True))
    return e / fnp.sum(e, axis=-1, keepdims=True)


def cube(x):
    return x ** 3


def backward(f):
    return fnad.grad(lambda x, w: fnp.sum(f(x) * w))


def timings(repeats):
    rng = np.random.default_rng(0)
    print(f"# benchmarks/fast_math.py, {THREADS} threads, float32, median ms; load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'case':34s} {'eager':>8s} {'exact jit':>10s} {'fast jit':>9s} {'fast/exact':>11s}")
    for shape in ((64 * 32, 128), (4096, 1024)):
        x = rng.standard_normal(shape).astype(np.float32)
        w = rng.standard_normal(shape).astype(np.float32)
        for name, f in (("tanh-GELU", gelu), ("softmax", softmax), ("cube", cube)):
            for what, fn, args in ((f"{name} fwd", f, (x,)),
                                   (f"{name} fwd+bwd", backward(f), (x, w))):
                exact, fast = fnad.jit(fn), fnad.jit(fn, fast_math=True)
                want = fn(*args)
                assert exact(*args).tobytes() == want.tobytes(), what
                err = np.max(np.abs(fast(*args) - want)) / max(np.max(np.abs(want)), 1e-30)
                assert err < 1e-5, (what, err)
                med = median_times({"eager": lambda: fn(*args), "exact": lambda: exact(*args),
                                    "fast": lambda: fast(*args)}, repeats)
                print(f"{what + ' ' + str(shape):34s} {med['eager'] * 1e3:8.2f} "
                      f"{med['exact'] * 1e3:10.2f} {med['fast'] * 1e3:9.2f} "
                      f"{med['fast'] / med['exact']:11.2f}")


def bounds(exhaustive):
    import scipy.special as sp
    from numba import njit

    from fnad._jit import fastmath as fm

    def runner(f):
        @njit(error_model="numpy")
        def run(x, o):
            for i in range(x.size):
                o[i] = f(x[i])
        return run

    def ulps(got, ref, dt):
        with np.errstate(all="ignore"):
            r = ref.astype(dt)
            wide = np.float64 if dt == np.float32 else np.longdouble
            d = np.abs(got.astype(wide) - ref) / np.spacing(np.abs(r)).astype(wide)
        same = (got == r) | (np.isnan(got) & np.isnan(r))
        return np.where(same, 0.0, d).astype(np.float64)

    refs = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "erf": sp.erf,
            "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x))}
    rng = np.random.default_rng(0)
    print("# largest error in ulps of the correctly rounded result (fnad/_jit/fastmath.py)")
    for bits, dt in ((32, np.float32), (64, np.float64)):
        for op in ("exp", "log", "tanh", "erf", "sigmoid"):
            f = getattr(fm, f"{op}{bits}", None)
            if f is None:
                continue
            run, worst = runner(f), (0.0, None)
            if dt == np.float32 and exhaustive:
                chunks = (np.arange(lo, lo + (1 << 24), dtype=np.uint64).astype(np.uint32)
                          .view(np.float32) for lo in range(0, 1 << 32, 1 << 24))
                what = "every float32"
            else:
                tiny = float(np.finfo(dt).smallest_subnormal)
                big = float(np.finfo(dt).max)
                chunks = (dt(np.exp(rng.uniform(np.log(tiny), np.log(big), 1 << 22))
                             * rng.choice([-1, 1], 1 << 22)) for _ in range(4))
                what = "16M samples over every scale"
            for x in chunks:
                o = np.empty_like(x)
                run(x, o)
                with np.errstate(all="ignore"):
                    ref = refs[op](x.astype(np.float64 if dt == np.float32 else np.longdouble))
                d = ulps(o, ref, dt)
                k = int(np.argmax(d))
                if d[k] > worst[0]:
                    worst = (float(d[k]), x[k])
            print(f"{op}{bits}: {worst[0]:.3f} ulps (at x = {worst[1]!r}; {what})", flush=True)
    for bits, dt in ((32, np.float32), (64, np.float64)):
        wide = np.float64 if dt == np.float32 else np.longdouble
        for n in (3, 4):
            lo = np.log2(float(np.finfo(dt).tiny)) / n + 1
            hi = np.log2(float(np.finfo(dt).max)) / n - 1
            x = np.concatenate([2.0 ** rng.uniform(lo, hi, 1 << 22) * rng.choice([-1, 1], 1 << 22),
                                rng.uniform(-3, 3, 1 << 21)]).astype(dt)
            fast = fnad.jit(lambda x, n=n: -(x ** n), fast_math=True)
            ref = x.astype(wide) ** n
            got, numpy = ulps(-fast(x), ref, dt).max(), ulps(np.power(x, n), ref, dt).max()
            print(f"x ** {n} ({bits}-bit): {got:.3f} ulps by products, NumPy's power "
                  f"{numpy:.3f} ({x.size} samples over every scale with a normal power)",
                  flush=True)


def main():
    ap = argparse.ArgumentParser(prog="python benchmarks/fast_math.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--bounds", action="store_true", help="measure each op's ulp error")
    ap.add_argument("--exhaustive", action="store_true", help="--bounds: every float32")
    args = ap.parse_args()
    if args.bounds:
        bounds(args.exhaustive)
    else:
        timings(args.repeats)


if __name__ == "__main__":
    main()
