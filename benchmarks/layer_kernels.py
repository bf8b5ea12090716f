"""The fused layer kernels of fnad.kernels.cpu against the NumPy formulations they replace
and PyTorch's own CPU kernels, on the GPT step's shapes (benchmarks/steps.py: batch 32,
context 64, d 128, 4 heads, hidden 512), float32, one process, interleaved medians.

Columns: fnad's kernel on 1 thread and on --threads threads, the NumPy formulation
(FNAD_CPU_KERNELS=numpy's path), PyTorch; ratios to PyTorch.

Run: python benchmarks/layer_kernels.py [--threads N] [--repeats N]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_times, threads_from_argv  # noqa: E402

if __name__ == "__main__":
    THREADS = threads_from_argv()

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from fnad.kernels import cpu  # noqa: E402
from fnad_nn import _activations, _fused  # noqa: E402


def cases(rng):
    h = rng.standard_normal((32, 64, 512), dtype=np.float32)
    g = rng.standard_normal((32, 64, 512), dtype=np.float32)
    s = rng.standard_normal((32, 4, 64, 64), dtype=np.float32)
    drop = ~np.tri(64, 64, 0, dtype=bool)
    p = cpu.attention_softmax(s, drop, 0.17)
    x = rng.standard_normal((32, 64, 128), dtype=np.float32)
    gx = rng.standard_normal((32, 64, 128), dtype=np.float32)
    xhat = cpu.normalize(x, 1e-5)[0]
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


if __name__ == "__main__":
    main()
