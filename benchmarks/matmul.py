"""Square matmul throughput: CPU NumPy, cuBLAS FP32 and fnad's own CUDA kernel.

For n = 256 ... 8192 (float32, C = A @ B, 2 n^3 flops) it prints and writes
docs/benchmark_matmul.csv (and docs/benchmark_matmul.png if matplotlib is installed):

  n, cpu_numpy_gflops, cublas_fp32_gflops, fnad_kernel_gflops, kernel_over_cublas, ...

cuBLAS runs through cupy.matmul with TF32 disabled (CUPY_TF32=0, the default, set here
explicitly), i.e. true FP32 FMA. Every GPU timing synchronises the device before each
clock read; the kernel is autotuned once per size (fnad.kernels.matmul_autotune) before
timing. Each number is the median over repeats. Without a GPU only the CPU column is
measured, and the script says so.

Run: PYTHONPATH=. python benchmarks/matmul.py [--sizes 256 512 ...] [--out DIR]
"""

import argparse
import csv
import os
import platform
import statistics
import sys
import time

os.environ["CUPY_TF32"] = "0"  # before CuPy is imported: cuBLAS in true FP32

import numpy as np

import fnad
from fnad._core.backend import cupy_or_none, gpu_unavailable_reason

SIZES = [256, 512, 1024, 2048, 4096, 8192]


def _median_time(fn, sync, min_time, max_reps):
    fn()  # warm up (and compile)
    sync()
    times = []
    t_start = time.perf_counter()
    while len(times) < max_reps and (len(times) < 3 or time.perf_counter() - t_start < min_time):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
        if len(times) >= 1 and times[0] > 4 * min_time:
            break  # one slow run is enough (large CPU sizes)
    return statistics.median(times)


def _gflops(n, seconds):
    return 2.0 * n ** 3 / seconds / 1e9


def bench_cpu(n, args):
    if n > args.cpu_max:
        return None
    r = np.random.default_rng(0)
    a = r.standard_normal((n, n), dtype=np.float32)
    b = r.standard_normal((n, n), dtype=np.float32)
    return _gflops(n, _median_time(lambda: a @ b, lambda: None, args.min_time, args.reps))


def bench_gpu(cp, n, args):
    sync = cp.cuda.Device().synchronize
    r = np.random.default_rng(0)
    a = cp.asarray(r.standard_normal((n, n), dtype=np.float32))
    b = cp.asarray(r.standard_normal((n, n), dtype=np.float32))
    cublas = _gflops(n, _median_time(lambda: cp.matmul(a, b), sync, args.min_time, args.reps))
    cfg = fnad.kernels.matmul_autotune(a, b)
    kern = _gflops(n, _median_time(lambda: fnad.kernels.matmul(a, b), sync, args.min_time,
                                   args.reps))
    c, ref = fnad.kernels.matmul(a, b), cp.matmul(a.astype(cp.float64), b.astype(cp.float64))
    err = float(cp.max(cp.abs(c - ref)) / cp.max(cp.abs(ref)))
    return cublas, kern, cfg, err


def _device_name(cp):
    if cp is None:
        return f"CPU only ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)"
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    return f"{name}; CPU {os.cpu_count()} cores"


def _fmt(x, spec=".1f"):
    return "" if x is None else format(x, spec)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "docs"),
                   help="directory for benchmark_matmul.csv / .png (default: docs/)")
    p.add_argument("--cpu-max", type=int, default=4096,
                   help="largest n timed on the CPU (8192 takes long on small machines)")
    p.add_argument("--min-time", type=float, default=0.3, help="seconds of timing per cell")
    p.add_argument("--reps", type=int, default=20, help="at most this many timed runs")
    p.add_argument("--no-plot", action="store_true", help="write the CSV only")
    args = p.parse_args()

    cp = cupy_or_none()
    device = _device_name(cp)
    print(f"fnad matmul benchmark, float32, device: {device}")
    if cp is None:
        print(f"No GPU ({gpu_unavailable_reason()}): measuring the CPU column only.")
    else:
        print("cuBLAS via cupy.matmul with CUPY_TF32=0 (FP32, no TF32); device synchronised "
              "before every clock read.")
    header = ["n", "cpu_numpy_gflops", "cublas_fp32_gflops", "fnad_kernel_gflops",
              "kernel_over_cublas", "kernel_config", "kernel_max_rel_err", "device"]
    rows = []
    print(f"{'n':>6} {'CPU NumPy':>10} {'cuBLAS FP32':>12} {'fnad kernel':>12} {'ratio':>7}"
          "  config / max rel err")
    for n in args.sizes:
        cpu = bench_cpu(n, args)
        cublas = kern = cfg = err = None
        if cp is not None:
            cublas, kern, cfg, err = bench_gpu(cp, n, args)
        ratio = None if not (cublas and kern) else kern / cublas
        rows.append([n, _fmt(cpu), _fmt(cublas), _fmt(kern), _fmt(ratio, ".3f"),
                     "" if cfg is None else repr(cfg), _fmt(err, ".2e"), device])
        print(f"{n:>6} {_fmt(cpu):>10} {_fmt(cublas):>12} {_fmt(kern):>12} "
              f"{_fmt(ratio, '.2f'):>7}  {'' if cfg is None else cfg} {_fmt(err, '.1e')}",
              flush=True)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "benchmark_matmul.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    print(f"wrote {os.path.normpath(path)}")
    if not args.no_plot:
        _plot(rows, args.out, device)


def _plot(rows, out, device):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        print("matplotlib not installed: no plot")
        return
    ns = [r[0] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    for col, label in [(1, "CPU NumPy"), (2, "cuBLAS FP32"), (3, "fnad kernel")]:
        pts = [(n, float(r[col])) for n, r in zip(ns, rows) if r[col]]
        if pts:
            ax.plot(*zip(*pts), marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("n (square float32 matmul)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"benchmarks/matmul.py on {device}", fontsize=8)
    ax.legend()
    fig.tight_layout()
    path = os.path.join(out, "benchmark_matmul.png")
    fig.savefig(path, dpi=120)
    print(f"wrote {os.path.normpath(path)}")


if __name__ == "__main__":
    sys.exit(main())
