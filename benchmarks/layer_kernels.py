"""The fused layer kernels of fnad.kernels.cpu against the NumPy formulations they replace,
PyTorch's own CPU kernels and what fnad's compiler makes of the layer written in plain
`fnad.numpy` (and the two new reductions of the backward pass: bias gradients by a
vector-matrix product, the embedding gradient by sorted segment sums), on the GPT step's
shapes (benchmarks/steps.py: batch 32, context 64, d 128, 4 heads, hidden 512), float32,
one process, interleaved medians.

First table: fnad's kernel on 1 thread and on --threads threads, the NumPy formulation
(FNAD_CPU_KERNELS=numpy's path), PyTorch; ratios to PyTorch.

Second table (issue 30 item 7, "one path for layers"): each layer as a user writes it in
plain fnad.numpy (`0.5 * x * (1 + erf(x / sqrt 2))`, softmax of `where(drop, -inf, s *
scale)` as `exp(z - max) / sum`, layer norm by `mean` and `var`, the VJPs as what
`fnad.vjp` of those gives, the bias gradient as `g.sum(0)`, the embedding gradient as the
VJP of `table[ids]`), run eagerly, under `fnad.jit(f)` (exact) and under
`fnad.jit(f, fast_math=True)`, timed in the same interleaved blocks as the kernel, with
the ratios compiler / kernel. A VJP that needs the forward's output (softmax, layer norm)
is jitted as the function that applies the VJP, so it computes the forward too: its
kernel column is then the forward kernel and the VJP kernel, one after the other. Before
timing, every column's values are checked against the plain formulation in float64:
within max(16, n) float32 epsilons of the largest magnitude, n the length of the row
reduced (docs/jit.md's bound for fast math's softmax and GELU rows, and the reassociated
sums' n eps).

Then the checks behind the kernels' design: the GELU written with libm's scalar `erf` in
numba (what the kernels' own vectorized exponential replaces), the GELU on 1 and on
--threads threads called back to back, without the 0.1 s pause that starts each timed
block above, fnad's exact `erf` per value, and fast math's `exp` of -inf against -10.

Run: python benchmarks/layer_kernels.py [--threads N] [--repeats N] [--quick]
(--quick: small shapes and 3 calls, a smoke run, not for the record)
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
import fnad
import fnad.numpy as fnp
from fnad.kernels import cpu
from fnad.numpy._scatter import scatter_add
from fnad.scipy.special import erf
from fnad_nn import _activations, _fused

SCALE = 0.17
FULL = dict(batch=32, ctx=64, d=128, heads=4, hidden=512, vocab=65)
QUICK = dict(batch=2, ctx=8, d=16, heads=2, hidden=32, vocab=65)


# ----------------------------------------------------------------------------- plain fnad.numpy

def plain_gelu(x):
    return 0.5 * x * (1 + erf(x * (1 / np.sqrt(2)).astype(x.dtype)))


def plain_softmax(s, drop):
    z = fnp.where(drop, -np.inf, s * np.asarray(SCALE, s.dtype))
    e = fnp.exp(z - fnp.max(z, axis=-1, keepdims=True))
    return e / fnp.sum(e, axis=-1, keepdims=True)


def plain_layer_norm(x):
    mean = fnp.mean(x, axis=-1, keepdims=True)
    return (x - mean) / fnp.sqrt(fnp.var(x, axis=-1, keepdims=True) + np.asarray(1e-5, x.dtype))


def vjp_of(f):
    """The cotangent of f's first argument, the others held: (x, g, *rest) -> vjp."""

    def apply(x, g, *rest):
        return fnad.vjp(lambda x: f(x, *rest), x)[1](g)[0]

    return apply


def plain_bias_gradient(g):
    return g.sum(0)


def plain_embedding_gradient(table, ids, g):
    return fnad.vjp(lambda t: t[ids], table)[1](g)[0]


# ----------------------------------------------------------------------------- cases

def cases(rng, size):
    b, t, d, nh, hid = size["batch"], size["ctx"], size["d"], size["heads"], size["hidden"]
    h = rng.standard_normal((b, t, hid), dtype=np.float32)
    g = rng.standard_normal((b, t, hid), dtype=np.float32)
    s = rng.standard_normal((b, nh, t, t), dtype=np.float32)
    gs = rng.standard_normal((b, nh, t, t), dtype=np.float32)
    drop = ~np.tri(t, t, 0, dtype=bool)
    p = _fused.attention_softmax(s, drop, SCALE)
    x = rng.standard_normal((b, t, d), dtype=np.float32)
    gx = rng.standard_normal((b, t, d), dtype=np.float32)
    xhat = _fused.normalize(x, 1e-5)
    gb = rng.standard_normal((b * t, hid), dtype=np.float32)
    ids = rng.integers(0, size["vocab"], (b, t))
    table = np.zeros((size["vocab"], d), np.float32)

    def zeros():
        return np.zeros((size["vocab"], d), np.float32)

    def softmax_fwd_vjp():
        return cpu.softmax_vjp(gs, cpu.attention_softmax(s, drop, SCALE), SCALE)

    def norm_fwd_vjp():
        y = cpu.normalize(x, 1e-5)[0]
        return cpu.normalize_vjp(gx, y, x, 1e-5)

    # name, kernel, NumPy formulation, PyTorch, then the compiler's case: the plain
    # function, its arguments, the kernel it is compared with (None: the first column's),
    # the length of the row it reduces
    return [
        (f"gelu {b}x{t}x{hid}", lambda: cpu.gelu(h), lambda: _activations._gelu_exact_impl(h),
         lambda tc, T: tc.nn.functional.gelu(T(h)),
         (plain_gelu, (h,), None, 1)),
        ("gelu cotangent", lambda: cpu.gelu_grad_mul(g, h),
         lambda: _activations._gelu_grad_mul_impl(g, h), None,
         (vjp_of(plain_gelu), (h, g), None, 1)),
        (f"attention softmax {b}x{nh}x{t}x{t}", lambda: cpu.attention_softmax(s, drop, SCALE),
         lambda: _fused._attention_softmax_impl(s, drop, SCALE),
         lambda tc, T: tc.softmax(T(s).masked_fill(T(drop), -np.inf) * SCALE, -1),
         (plain_softmax, (s, drop), None, t)),
        ("softmax vjp", lambda: cpu.softmax_vjp(gs, p, SCALE),
         lambda: _fused._softmax_vjp_impl(gs, p, SCALE),
         lambda tc, T: tc.ops.aten._softmax_backward_data(T(gs), T(p), -1, tc.float32),
         (vjp_of(plain_softmax), (s, gs, drop), softmax_fwd_vjp, t)),
        (f"layer norm {b}x{t}x{d}", lambda: cpu.normalize(x, 1e-5),
         lambda: _fused._normalize_impl(x, 1e-5),
         lambda tc, T: tc.nn.functional.layer_norm(T(x), (d,)),
         (plain_layer_norm, (x,), None, d)),
        ("layer norm vjp", lambda: cpu.normalize_vjp(gx, xhat, x, 1e-5),
         lambda: _fused._normalize_vjp_impl(gx, xhat, x, 1e-5), None,
         (vjp_of(plain_layer_norm), (x, gx), norm_fwd_vjp, d)),
        (f"bias gradient {b * t}x{hid}", lambda: _fused.sum_leading(gb, 1),
         lambda: gb.sum(axis=0), lambda tc, T: T(gb).sum(0),
         (plain_bias_gradient, (gb,), None, b * t)),
        (f"embedding gradient {b}x{t} ids",
         lambda: scatter_add(zeros(), (ids,), x, fresh=True),
         lambda: np.add.at(zeros(), ids, x),
         lambda tc, T: tc.zeros(size["vocab"], d).index_add_(0, T(ids.reshape(-1)),
                                                               T(x).reshape(-1, d)),
         (plain_embedding_gradient, (table, ids, x), None, b * t)),
    ]


def _float64(a):
    return a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float32 else a


def _first(y):
    return y[0] if isinstance(y, tuple) else y


def check_values(name, columns, plain, args, n):
    """Every column (name -> callable) within max(16, n) float32 eps of the largest magnitude
    of the plain formulation run in float64."""
    ref = np.asarray(plain(*map(_float64, args)))
    tol = max(16, n) * float(np.finfo(np.float32).eps) * max(float(np.abs(ref).max()), 1e-30)
    for col, f in columns.items():
        err = float(np.abs(np.asarray(_first(f()), np.float64) - ref).max())
        if not err <= tol:
            raise SystemExit(f"layer_kernels.py: {name}, {col}: largest error {err:.3g} "
                             f"against float64 exceeds {tol:.3g}; the compiler columns would "
                             "time a wrong result")


def compiler_columns(name, fast, case):
    """The columns of the second table for one case: kernel (fwd+vjp where the compiler's
    function computes the forward too), plain eager, exact jit, fast-math jit."""
    plain, args, kernel, n = case
    exact, fast_math = fnad.jit(plain), fnad.jit(plain, fast_math=True)
    cols = {"kernel": kernel or fast, "eager": lambda: plain(*args),
            "jit": lambda: exact(*args), "fast": lambda: fast_math(*args)}
    check_values(name, cols, plain, args, n)
    return cols


def parse(argv):
    argv = sys.argv[1:] if argv is None else argv
    threads = int(argv[argv.index("--threads") + 1]) if "--threads" in argv else 2
    quick = "--quick" in argv
    reps = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else 3 if quick else 60
    return threads, reps, quick


def main(argv=None):
    """Print both tables (and, unless --quick, the design checks); returns the rows as
    (name, {column: median seconds})."""
    threads, reps, quick = parse(argv)
    if not cpu.available():
        raise SystemExit("layer_kernels.py: fnad.kernels.cpu needs numba (pip install numba)")
    try:
        import torch
        torch.set_num_threads(threads)
    except ImportError:
        torch = None
    os.environ["FNAD_NUM_THREADS"] = str(threads)
    pause = 0.0 if quick else 0.1
    print(f"# benchmarks/layer_kernels.py: {threads} threads, {os.cpu_count()} CPUs, median "
          f"ms of {reps} calls, load average {os.getloadavg()[0]:.1f}"
          + (" -- QUICK: small shapes, not for the record" if quick else ""))
    rows = []
    for name, fast, slow, peer, case in cases(np.random.default_rng(0),
                                              QUICK if quick else FULL):

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

        cols = {"k1": one_thread, "kn": fast, "np": numpy_path}
        cols.update(compiler_columns(name, fast, case))
        both = cols["kernel"] is not fast  # the forward and VJP kernels
        if not both:
            del cols["kernel"]
        med = median_times(cols, reps, rounds=3, pause=pause)
        med.setdefault("kernel", med["kn"])
        rows.append((name + (" (fwd+vjp)" if both else ""), med, peer))
    # PyTorch last: its OpenMP threads keep spinning after its calls and would take the
    # second core from the fnad kernels timed after them
    for name, med, peer in rows:
        if torch is not None and peer is not None:
            med.update(median_times({"torch": lambda peer=peer: peer(torch, torch.from_numpy)},
                                    reps, rounds=3, pause=pause))
    print_kernels(rows, threads)
    print_compiler(rows, threads)
    if not quick:
        design_checks(threads, reps)
    return [(name, med) for name, med, _ in rows]


def print_kernels(rows, threads):
    print(f"{'op':30s} {'kernel 1T':>10s} {f'kernel {threads}T':>10s} {'NumPy':>10s} "
          f"{'torch':>10s} {'kernel/torch':>12s} {'NumPy/kernel':>12s}")
    for name, med, _ in rows:
        name = name.removesuffix(" (fwd+vjp)")
        tr = med.get("torch")
        torch_ms = "n/a" if tr is None else f"{tr * 1e3:.3f}"
        ratio = "n/a" if tr is None else f"{med['kn'] / tr:.2f}"
        print(f"{name:30s} {med['k1'] * 1e3:10.3f} {med['kn'] * 1e3:10.3f} "
              f"{med['np'] * 1e3:10.3f} {torch_ms:>10s} {ratio:>12s} "
              f"{med['np'] / med['kn']:12.2f}")


def print_compiler(rows, threads):
    print(f"# the layer in plain fnad.numpy: eager, jit, jit(fast_math=True); kernel on "
          f"{threads} threads (fwd+vjp: the VJP rows' jitted function computes the forward)")
    print(f"{'op':30s} {'kernel':>10s} {'eager':>10s} {'jit':>10s} {'jit fast':>10s} "
          f"{'eager/kern':>10s} {'jit/kern':>10s} {'fast/kern':>10s} {'<= 1.05':>8s}")
    for name, med, _ in rows:
        k = med["kernel"]
        best = min(med["jit"], med["fast"]) / k
        print(f"{name:30s} {k * 1e3:10.3f} {med['eager'] * 1e3:10.3f} "
              f"{med['jit'] * 1e3:10.3f} {med['fast'] * 1e3:10.3f} {med['eager'] / k:10.2f} "
              f"{med['jit'] / k:10.2f} {med['fast'] / k:10.2f} "
              f"{'yes' if best <= 1.05 else 'no':>8s}")


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
    compiler_checks(x, reps)


def compiler_checks(x, reps):
    """Two costs behind the compiler columns: fnad's exact float32 erf (NumPy passes, which
    exact jit cannot fuse) and fast math's exp of a mask's -inf against an ordinary value."""
    fast_exp = fnad.jit(lambda z: fnp.exp(z) * 2, fast_math=True)
    low, ten = np.full_like(x, -np.inf), np.full_like(x, -10.0)
    med = median_times({"erf": lambda: erf(x), "inf": lambda: fast_exp(low),
                        "ten": lambda: fast_exp(ten)}, reps, rounds=3, pause=0.1)
    print(f"# fnad.scipy.special.erf of 1M float32: {med['erf'] * 1e9 / x.size:.1f} ns per value;"
          f" jit(exp(z) * 2, fast_math=True) of 1M float32: all -inf {med['inf'] * 1e3:.3f} ms,"
          f" all -10 {med['ten'] * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
