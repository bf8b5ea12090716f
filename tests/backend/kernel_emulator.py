"""Run fnad.kernels' CUDA matmul source on the CPU, to test its index arithmetic here.

The kernel source is compiled unchanged by a C++20 compiler with a small shim: CUDA's
qualifiers become nothing (`__shared__` becomes `static`, so one block's threads share
it), each CUDA thread is an OS thread, and `__syncthreads` is a `std::barrier`. Blocks
run one after another. This checks tiling, bounds, vector paths, transposed layouts and
the double-buffer synchronisation logic (a missing barrier shows up as wrong results
under the OS scheduler only by luck, so that part is best-effort); it cannot check
performance or anything specific to NVRTC.
"""

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile

import numpy as np

from fnad.kernels import _matmul_cuda as cuda

_SHIM = r"""
#include <barrier>
#include <cmath>
#include <thread>
#include <vector>
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) double2 { double x, y; };
struct Dim3 { int x, y, z; };
thread_local Dim3 threadIdx, blockIdx;
static Dim3 gridDim;
static std::barrier<>* g_barrier;
static inline void __syncthreads() { g_barrier->arrive_and_wait(); }
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
using std::fma;
using std::fmaf;
"""

_RUNNER = r"""
extern "C" void run_@ID@(const void* A, const void* B, void* C, int M, int N, int K,
                        int batch, long long sA, long long sB, int gx, int gy, int gz) {
    using namespace k@ID@;
    gridDim = {gx, gy, gz};
    for (int bz = 0; bz < gz; ++bz)
        for (int by = 0; by < gy; ++by)
            for (int bx = 0; bx < gx; ++bx) {
                std::barrier<> bar(NT);
                g_barrier = &bar;
                std::vector<std::thread> ts;
                for (int t = 0; t < NT; ++t)
                    ts.emplace_back([=] {
                        threadIdx = {t, 0, 0};
                        blockIdx = {bx, by, bz};
                        fnad_matmul((const T*)A, (const T*)B, (T*)C, M, N, K, batch, sA, sB);
                    });
                for (auto& th : ts) th.join();
            }
}
"""


def compiler():
    """The C++ compiler to use, or None."""
    return shutil.which(os.environ.get("CXX", "g++")) or shutil.which("clang++")


class Emulator:
    """Compiles a set of kernel specialisations into one shared library."""

    def __init__(self, specs, workdir=None):
        """`specs`: list of (dtype, Config, ta, tb, vec)."""
        self.specs = list(specs)
        parts = [_SHIM]
        for i, (dtype, cfg, ta, tb, vec) in enumerate(self.specs):
            src = cuda.kernel_source(dtype, cfg, ta, tb, vec).replace('extern "C" ', "")
            parts.append(f"namespace k{i} {{\n{src}\n}}\n")
            parts.append(_RUNNER.replace("@ID@", str(i)))
        code = "\n".join(parts)
        digest = hashlib.sha256(code.encode()).hexdigest()[:16]
        workdir = workdir or tempfile.gettempdir()
        lib = os.path.join(workdir, f"fnad_matmul_emu_{digest}.so")
        if not os.path.exists(lib):
            cpp = lib[:-3] + ".cpp"
            with open(cpp, "w") as f:
                f.write(code)
            tmp = lib + f".tmp{os.getpid()}"
            subprocess.run([compiler(), "-std=c++20", "-O1", "-fno-strict-aliasing", "-shared",
                            "-fPIC", "-pthread", "-Wno-unused", cpp, "-o", tmp],
                           check=True, capture_output=True, text=True)
            os.replace(tmp, lib)
        self.lib = ctypes.CDLL(lib)

    def matmul(self, i, a, b, ta=False, tb=False):
        """C = A @ B with specialisation `i`; `a`, `b` are (batch or 1, M, K) / (.., K, N)
        NumPy arrays, stored transposed in memory when `ta` / `tb`."""
        dtype, cfg, ta_i, tb_i, _ = self.specs[i]
        assert (ta, tb) == (ta_i, tb_i)
        m, k = a.shape[-2:]
        n = b.shape[-1]
        batch = max(a.shape[0], b.shape[0])
        sa = 0 if a.shape[0] == 1 else m * k
        sb = 0 if b.shape[0] == 1 else k * n
        # storage in memory: transposed operands are contiguous (.., K, M) / (.., N, K)
        a_mem = np.ascontiguousarray(np.swapaxes(a, -1, -2) if ta else a, dtype=dtype)
        b_mem = np.ascontiguousarray(np.swapaxes(b, -1, -2) if tb else b, dtype=dtype)
        out = np.full((batch, m, n), np.nan, dtype=dtype)
        gx, gy = -(-n // cfg.bn), -(-m // cfg.bm)
        fn = getattr(self.lib, f"run_{i}")
        p = ctypes.c_void_p
        fn.argtypes = [p, p, p] + [ctypes.c_int] * 4 + [ctypes.c_longlong] * 2 + \
            [ctypes.c_int] * 3
        fn(a_mem.ctypes.data, b_mem.ctypes.data, out.ctypes.data, m, n, k, batch, sa, sb,
           gx, gy, min(batch, 2))
        return out
