"""The CUDA side of `fnad.kernels.matmul`: kernel source, tile configurations, launch.

One kernel template, specialised per launch by constants written into its source:

  * each block computes a BM x BN tile of C = A @ B, walking K in steps of BK;
  * the A and B tiles go through shared memory, double-buffered: the next tile is read
    from global memory into registers while the current one is multiplied, so one
    __syncthreads per step suffices;
  * each thread accumulates a TM x TN block of C in registers (register blocking). Its
    rows (and columns) are split into runs of VW consecutive elements spaced BM*VW/TM
    apart, so a warp's 16-byte shared-memory reads hit distinct banks;
  * global loads and stores are 16-byte vectors (float4 / double2) when the shapes and
    pointers allow it (VEC), else scalar with bounds checks;
  * A and B may each be stored transposed (TA / TB): the VJP's `g @ b.T` and `a.T @ g`
    read the transposed views in place, without copies;
  * every thread sums over k in increasing order with one fused multiply-add per step, so
    the result is the same, bit for bit, whichever tile configuration runs.

Only this module touches CuPy; it is imported on first use on the GPU.
"""

import time

import numpy as np

__all__ = ["CONFIGS", "Config", "launch", "choose_config", "autotune", "kernel_source"]

_SOURCE = r"""
typedef @T@ T;
typedef @V@ V;                               // 16-byte vector of VW elements
#define FMA @FMA@                            // fmaf / fma: one rounding per step
constexpr int BM = @BM@, BN = @BN@, BK = @BK@, TM = @TM@, TN = @TN@, VW = @VW@;
constexpr bool TA = @TA@, TB = @TB@, VEC = @VEC@;
constexpr int NT = (BM / TM) * (BN / TN);    // threads per block
constexpr int PAD = VW;                      // keeps shared rows 16-byte aligned
constexpr int RS = BM * VW / TM;             // spacing of a thread's row runs
constexpr int CS = BN * VW / TN;             // spacing of a thread's column runs
constexpr int LA = BM * BK / (NT * VW);      // vector loads per thread for the A tile
constexpr int LB = BK * BN / (NT * VW);      // ... and for the B tile
static_assert(TM % VW == 0 && TN % VW == 0, "thread tile must hold whole vectors");
static_assert(LA >= 1 && LA * NT * VW == BM * BK, "A tile must split evenly");
static_assert(LB >= 1 && LB * NT * VW == BK * BN, "B tile must split evenly");
static_assert(BK % VW == 0, "BK must hold whole vectors");

// Read VW consecutive elements p[0..VW) of a row that has `avail` elements left (<= 0:
// none). VEC: the row length is a multiple of VW and p is 16-byte aligned.
__device__ __forceinline__ void load_run(T (&r)[VW], const T* p, long long avail, bool ok) {
    if (VEC) {
        if (ok && avail > 0) {
            V v = *reinterpret_cast<const V*>(p);
            const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
            for (int j = 0; j < VW; ++j) r[j] = e[j];
        } else {
#pragma unroll
            for (int j = 0; j < VW; ++j) r[j] = T(0);
        }
    } else {
#pragma unroll
        for (int j = 0; j < VW; ++j) r[j] = (ok && j < avail) ? p[j] : T(0);
    }
}

extern "C" __global__ void __launch_bounds__(NT)
fnad_matmul(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
            int M, int N, int K, int batch, long long sA, long long sB) {
    __shared__ __align__(16) T As[2][BK][BM + PAD];
    __shared__ __align__(16) T Bs[2][BK][BN + PAD];
    const int tid = threadIdx.x;
    const int tr = tid / (BN / TN), tc = tid % (BN / TN);
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int ntiles = (K + BK - 1) / BK;

    for (int z = blockIdx.z; z < batch; z += gridDim.z) {
        const T* Az = A + (long long)z * sA;
        const T* Bz = B + (long long)z * sB;
        T* Cz = C + (long long)z * M * N;
        T acc[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = T(0);
        T ra[LA][VW], rb[LB][VW];

        // Global -> registers for the tile starting at k0.
        auto fetch = [&](int k0) {
#pragma unroll
            for (int l = 0; l < LA; ++l) {
                const int idx = tid + l * NT;
                if (!TA) {   // A is M x K, row-major: runs along k
                    const int m = idx / (BK / VW), k = (idx % (BK / VW)) * VW;
                    load_run(ra[l], Az + (long long)(m0 + m) * K + k0 + k,
                             (long long)K - (k0 + k), m0 + m < M);
                } else {     // A is stored K x M: runs along m
                    const int k = idx / (BM / VW), m = (idx % (BM / VW)) * VW;
                    load_run(ra[l], Az + (long long)(k0 + k) * M + m0 + m,
                             (long long)M - (m0 + m), k0 + k < K);
                }
            }
#pragma unroll
            for (int l = 0; l < LB; ++l) {
                const int idx = tid + l * NT;
                if (!TB) {   // B is K x N, row-major: runs along n
                    const int k = idx / (BN / VW), n = (idx % (BN / VW)) * VW;
                    load_run(rb[l], Bz + (long long)(k0 + k) * N + n0 + n,
                             (long long)N - (n0 + n), k0 + k < K);
                } else {     // B is stored N x K: runs along k
                    const int n = idx / (BK / VW), k = (idx % (BK / VW)) * VW;
                    load_run(rb[l], Bz + (long long)(n0 + n) * K + k0 + k,
                             (long long)K - (k0 + k), n0 + n < N);
                }
            }
        };
        // Registers -> shared buffer s, as As[k][m] and Bs[k][n].
        auto stash = [&](int s) {
#pragma unroll
            for (int l = 0; l < LA; ++l) {
                const int idx = tid + l * NT;
                if (!TA) {
                    const int m = idx / (BK / VW), k = (idx % (BK / VW)) * VW;
#pragma unroll
                    for (int j = 0; j < VW; ++j) As[s][k + j][m] = ra[l][j];
                } else {
                    const int k = idx / (BM / VW), m = (idx % (BM / VW)) * VW;
#pragma unroll
                    for (int j = 0; j < VW; ++j) As[s][k][m + j] = ra[l][j];
                }
            }
#pragma unroll
            for (int l = 0; l < LB; ++l) {
                const int idx = tid + l * NT;
                if (!TB) {
                    const int k = idx / (BN / VW), n = (idx % (BN / VW)) * VW;
#pragma unroll
                    for (int j = 0; j < VW; ++j) Bs[s][k][n + j] = rb[l][j];
                } else {
                    const int n = idx / (BK / VW), k = (idx % (BK / VW)) * VW;
#pragma unroll
                    for (int j = 0; j < VW; ++j) Bs[s][k + j][n] = rb[l][j];
                }
            }
        };

        if (ntiles > 0) {
            fetch(0);
            stash(0);
        }
        __syncthreads();
        for (int t = 0; t < ntiles; ++t) {
            const int cur = t & 1;
            if (t + 1 < ntiles) fetch((t + 1) * BK);   // in flight while we multiply
#pragma unroll
            for (int k = 0; k < BK; ++k) {
                T a[TM], b[TN];
#pragma unroll
                for (int g = 0; g < TM / VW; ++g) {
                    V v = *reinterpret_cast<const V*>(&As[cur][k][g * RS + tr * VW]);
                    const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
                    for (int j = 0; j < VW; ++j) a[g * VW + j] = e[j];
                }
#pragma unroll
                for (int g = 0; g < TN / VW; ++g) {
                    V v = *reinterpret_cast<const V*>(&Bs[cur][k][g * CS + tc * VW]);
                    const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
                    for (int j = 0; j < VW; ++j) b[g * VW + j] = e[j];
                }
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) acc[i][j] = FMA(a[i], b[j], acc[i][j]);
            }
            if (t + 1 < ntiles) stash(cur ^ 1);
            __syncthreads();
        }

        // Registers -> C, in runs of VW along n.
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int m = m0 + (i / VW) * RS + tr * VW + (i % VW);
            if (m >= M) continue;
#pragma unroll
            for (int g = 0; g < TN / VW; ++g) {
                const int n = n0 + g * CS + tc * VW;
                T* p = Cz + (long long)m * N + n;
                if (VEC) {
                    if (n < N) {
                        V v;
                        T* e = reinterpret_cast<T*>(&v);
#pragma unroll
                        for (int j = 0; j < VW; ++j) e[j] = acc[i][g * VW + j];
                        *reinterpret_cast<V*>(p) = v;
                    }
                } else {
#pragma unroll
                    for (int j = 0; j < VW; ++j)
                        if (n + j < N) p[j] = acc[i][g * VW + j];
                }
            }
        }
    }
}
"""


class Config:
    """A tile configuration: block tile BM x BN x BK, thread tile TM x TN."""

    __slots__ = ("bm", "bn", "bk", "tm", "tn")

    def __init__(self, bm, bn, bk, tm, tn):
        self.bm, self.bn, self.bk, self.tm, self.tn = bm, bn, bk, tm, tn

    @property
    def threads(self):
        return (self.bm // self.tm) * (self.bn // self.tn)

    def __repr__(self):
        return f"Config({self.bm}x{self.bn}x{self.bk}, thread {self.tm}x{self.tn})"

    def key(self):
        return (self.bm, self.bn, self.bk, self.tm, self.tn)


# Largest tiles first; 256 threads each (64 for the smallest float32 tile).
# float32 vectors hold 4 elements, float64 vectors 2.
CONFIGS = {
    np.dtype(np.float32): [Config(128, 128, 8, 8, 8), Config(128, 128, 16, 8, 8),
                           Config(128, 64, 16, 8, 4), Config(64, 64, 16, 4, 4),
                           Config(32, 32, 32, 4, 4)],
    np.dtype(np.float64): [Config(128, 64, 8, 8, 4), Config(64, 64, 8, 4, 4),
                           Config(64, 64, 16, 4, 4), Config(32, 32, 16, 2, 2)],
}
_VW = {np.dtype(np.float32): 4, np.dtype(np.float64): 2}
_CTYPES = {np.dtype(np.float32): ("float", "float4"), np.dtype(np.float64): ("double", "double2")}


def _valid(cfg, dtype):
    vw = _VW[dtype]
    if cfg.tm % vw or cfg.tn % vw or cfg.bk % vw:
        return False
    nt = cfg.threads
    return ((cfg.bm * cfg.bk) % (nt * vw) == 0 and (cfg.bk * cfg.bn) % (nt * vw) == 0
            and cfg.bm * cfg.bk >= nt * vw and cfg.bk * cfg.bn >= nt * vw)


for _dt, _cfgs in CONFIGS.items():
    _cfgs[:] = [c for c in _cfgs if _valid(c, _dt)]
    if not _cfgs:
        raise AssertionError(f"no valid matmul tile configuration for {_dt}")


def kernel_source(dtype, cfg, ta, tb, vec):
    """The CUDA source of one specialisation (also handy for reading the kernel)."""
    t, v = _CTYPES[np.dtype(dtype)]
    subs = {"T": t, "V": v, "FMA": "fmaf" if t == "float" else "fma", "BM": cfg.bm,
            "BN": cfg.bn, "BK": cfg.bk, "TM": cfg.tm, "TN": cfg.tn, "VW": _VW[np.dtype(dtype)],
            "TA": str(ta).lower(), "TB": str(tb).lower(), "VEC": str(vec).lower()}
    src = _SOURCE
    for k, val in subs.items():
        src = src.replace(f"@{k}@", str(val))
    return src


_kernels = {}


def _kernel(cp, dtype, cfg, ta, tb, vec):
    key = (np.dtype(dtype).str, cfg.key(), ta, tb, vec)
    k = _kernels.get(key)
    if k is None:
        k = cp.RawKernel(kernel_source(dtype, cfg, ta, tb, vec), "fnad_matmul")
        _kernels[key] = k
    return k


def _num_sms(cp):
    dev = cp.cuda.Device()
    return dev.attributes["MultiProcessorCount"]


def choose_config(dtype, m, n, k, batch, num_sms):
    """The largest tile whose grid still gives every SM about one block or more."""
    cfgs = CONFIGS[np.dtype(dtype)]
    for cfg in cfgs:
        blocks = -(-m // cfg.bm) * -(-n // cfg.bn) * batch
        if blocks >= num_sms:
            return cfg
    return cfgs[-1]


_tuned = {}


def launch(cp, a, b, out, m, n, k, batch, s_a, s_b, ta, tb, vec, cfg=None):
    """Run C = A @ B into `out` (contiguous (batch, m, n)); `a`/`b` point at the first
    matrices, with batch strides `s_a`/`s_b` in elements (0 for a broadcast operand)."""
    dtype = out.dtype
    if cfg is None:
        cfg = _tuned.get((dtype.str, m, n, k, batch, ta, tb, vec))
        if cfg is None:
            cfg = choose_config(dtype, m, n, k, batch, _num_sms(cp))
    gx, gy = -(-n // cfg.bn), -(-m // cfg.bm)
    if gy > 65535:
        raise ValueError(f"fnad.kernels.matmul: {m} rows need {gy} row blocks of {cfg.bm}, "
                         "more than CUDA's grid allows (65535); split the matrix.")
    gz = min(batch, 65535)
    kern = _kernel(cp, dtype, cfg, ta, tb, vec)
    kern((gx, gy, gz), (cfg.threads,),
         (a, b, out, np.int32(m), np.int32(n), np.int32(k), np.int32(batch),
          np.int64(s_a), np.int64(s_b)))
    return cfg


def autotune(cp, args, repeats=3):
    """Time every configuration on these operands once and remember the fastest for this
    shape. `args` are launch()'s positional arguments after `cp`. Results do not depend
    on the configuration (same summation order), only the speed does."""
    a, b, out, m, n, k, batch, s_a, s_b, ta, tb, vec = args
    best = None
    for cfg in CONFIGS[out.dtype]:
        launch(cp, *args, cfg=cfg)  # compile and warm up
        cp.cuda.get_current_stream().synchronize()
        t0 = time.perf_counter()
        for _ in range(repeats):
            launch(cp, *args, cfg=cfg)
        cp.cuda.get_current_stream().synchronize()
        dt = time.perf_counter() - t0
        if best is None or dt < best[0]:
            best = (dt, cfg)
    _tuned[(out.dtype.str, m, n, k, batch, ta, tb, vec)] = best[1]
    return best[1]
