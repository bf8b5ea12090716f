"""The fused layer kernels of fnad.kernels.cpu against the NumPy formulations they replace
and PyTorch's own CPU kernels (and the two new reductions of the backward pass: bias
gradients by a vector-matrix product, the embedding gradient by sorted segment sums), on
the GPT step's shapes (benchmarks/steps.py: batch 32, context 64, d 128, 4 heads, hidden
512), float32, one process, interleaved medians.

Columns: fnad's kernel on 1 thread and on --threads threads, the NumPy formulation
(FNAD_CPU_KERNELS=numpy's path), PyTorch; ratios to PyTorch. Then two checks behind the
kernels' design: the GELU written with libm's scalar `erf` in numba (what the kernels'
own vectorized exponential replaces), and the GELU on 1 and on --threads threads called
back to back, without the 0.1 s pause that starts each timed block above.

Run: python benchmarks/layer_kernels.py [--threads N] [--repeats N]
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_times, threads_from_argv

if __name__ == "__main__":
    THREADS = threads_from_argv()

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from fnad.kernels import cpu
from fnad.numpy._scatter import scatter_add
from fnad_nn import _activations, _fused


def cases(rng):
    h = rng.standard_normal((32, 64, 512), dtype=np.float32)
    g = rng.standard_normal((32, 64, 512), dtype=np.float32)
    s = rng.standard_normal((32, 4, 64, 64), dtype=np.float32)
    drop = ~np.tri(64, 64, 0, dtype=bool)
    p = cpu.attention_softmax(s, drop, 0.17)
    x = rng.standard_normal((32, 64, 128), dtype=np.float32)
    gx = rng.standard_normal((32, 64, 128), dtype=np.float32)
    xhat = cpu.normalize(x, 1e-5)[0]
    gb = rng.standard_normal((2048, 512), dtype=np.float32)
    ids = rng.integers(0, 65, (32, 64))

    def zeros():
        return np.zeros((65, 128), np.float32)

    return [
        ("gelu 32x64x512", lambda: cpu.gelu(h), lambda: _activations._gelu_exact_impl(h),
         lambda t, T: t.nn.functional.gelu(T(h))),
        ("gelu cotangent", lambda: cpu.gelu_grad_mul(g, h),
         lambda: _activations._gelu_grad_mul_impl(g, h), None),
        ("attention softmax 32x4x64x64", lambda: cpu.attention_softmax(s, drop, 0.17),
         lambda: _fused._attention_softmax_impl(s, drop, 0.17),
         lambda t, T: t.softmax(T(s).masked_fill(T(drop), -np.inf) * 0.17, -1)),
        ("softmax vjp", lambda: cpu.softmax_vjp(s, p, 0.17),
         lambda: _fused._softmax_vjp_impl(s, p, 0.17),
         lambda t, T: t.ops.aten._softmax_backward_data(T(s), T(p), -1, t.float32)),
        ("layer norm 32x64x128", lambda: cpu.normalize(x, 1e-5),
         lambda: _fused._normalize_impl(x, 1e-5),
         lambda t, T: t.nn.functional.layer_norm(T(x), (128,))),
        ("layer norm vjp", lambda: cpu.normalize_vjp(gx, xhat, x, 1e-5),
         lambda: _fused._normalize_vjp_impl(gx, xhat, x, 1e-5), None),
        ("bias gradient 2048x512", lambda: _fused.sum_leading(gb, 1),
         lambda: gb.sum(axis=0), lambda t, T: T(gb).sum(0)),
        ("embedding gradient 32x64 ids", lambda: scatter_add(zeros(), (ids,), x, fresh=True),
         lambda: np.add.at(zeros(), ids, x),
         lambda t, T: t.zeros(65, 128).index_add_(0, T(ids.reshape(-1)), T(x).reshape(-1, 128))),
    ]


def main():
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 2
    reps = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 60
    if not cpu.available():
        raise SystemExit("layer_kernels.py: fnad.kernels.cpu needs numba (pip install numba)")
    try:
        import torch
        torch.set_num_threads(threads)
    except ImportError:
        torch = None
    print(f"# benchmarks/layer_kernels.py: {threads} threads, {os.cpu_count()} CPUs, median "
          f"ms of {reps} calls, load average {os.getloadavg()[0]:.1f}")
    print(f"{'op':30s} {'kernel 1T':>10s} {f'kernel {threads}T':>10s} {'NumPy':>10s} "
          f"{'torch':>10s} {'kernel/torch':>12s} {'NumPy/kernel':>12s}")
    rows = []
    for name, fast, slow, peer in cases(np.random.default_rng(0)):

        def one_thread(fast=fast):
            os.environ["FNAD_NUM_THREADS"] = "1"
            try:
                return fast()
            finally:
                os.environ["FNAD_NUM_THREADS"] = str(threads)

        def numpy_path(slow=slow):
            os.environ["FNAD_CPU_KERNELS"] = "numpy"
            try:
                return slow()
            finally:
                del os.environ["FNAD_CPU_KERNELS"]

        med = median_times({"k1": one_thread, "kn": fast, "np": numpy_path}, reps, rounds=3,
                           pause=0.1)
        rows.append((name, med, peer))
    # PyTorch last: its OpenMP threads keep spinning after its calls and would take the
    # second core from the fnad kernels timed after them
    for name, med, peer in rows:
        if torch is not None and peer is not None:
            med.update(median_times({"torch": lambda peer=peer: peer(torch, torch.from_numpy)},
                                    reps, rounds=3, pause=0.1))
        tr = med.get("torch")
        torch_ms = "n/a" if tr is None else f"{tr * 1e3:.3f}"
        ratio = "n/a" if tr is None else f"{med['kn'] / tr:.2f}"
        print(f"{name:30s} {med['k1'] * 1e3:10.3f} {med['kn'] * 1e3:10.3f} "
              f"{med['np'] * 1e3:10.3f} {torch_ms:>10s} {ratio:>12s} "
              f"{med['np'] / med['kn']:12.2f}")
    design_checks(threads, reps)


def _libm_gelu():
    import math

    import numba

    @numba.njit(nogil=True)
    def gelu(x, out):
        for i in range(x.size):
            out[i] = 0.5 * x[i] * (1.0 + math.erf(x[i] * 0.7071067811865476))

    return gelu


def design_checks(threads, reps):
    x = np.random.default_rng(1).standard_normal(32 * 64 * 512, dtype=np.float32)
    out = np.empty_like(x)
    libm = _libm_gelu()
    libm(x, out)
    os.environ["FNAD_NUM_THREADS"] = "1"
    med = median_times({"libm": lambda: libm(x, out), "kernel": lambda: cpu.gelu(x)}, reps,
                       rounds=3, pause=0.1)
    print(f"# GELU of 1M float32 on 1 thread: numba with libm's erf "
          f"{med['libm'] * 1e9 / x.size:.1f} ns per value; fnad's kernel "
          f"{med['kernel'] * 1e9 / x.size:.1f} ns per value")
    back_to_back = {}
    for n in (1, threads):
        os.environ["FNAD_NUM_THREADS"] = str(n)
        cpu.gelu(x)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            cpu.gelu(x)
            times.append(time.perf_counter() - t0)
        back_to_back[n] = statistics.median(times)
    os.environ["FNAD_NUM_THREADS"] = str(threads)
    print(f"# GELU of 1M float32 called back to back: 1 thread {back_to_back[1] * 1e3:.3f} ms, "
          f"{threads} threads {back_to_back[threads] * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
