"""Run under `mpiexec -n N` on a GPU machine by benchmarks/gpu_distributed.sh (part of
benchmarks/gpu_check.sh): the collectives on CuPy arrays through the transport the
world picks (NCCL; the host-memory fallback with FNAD_NCCL=0; CUDA-aware MPI with
FNAD_CUDA_AWARE_MPI=1 and FNAD_NCCL=0), checked against the same collectives on NumPy
copies through MPI; then a few data-parallel GPT steps on the GPU against one process on
the global batch, and (with --bench) the time of a 32 MiB psum. Prints `ok ...` lines and
a JSON line from process 0."""

import json
import sys
import time

import numpy as np

import fnad
import fnad.distributed as dist
from fnad.distributed._transport import transport_for

cp = fnad._core.backend.cupy_or_none()
if cp is None:
    print("no GPU: nothing to check", flush=True)
    sys.exit(0)
w = dist.initialize()
i, n = w.index, w.count
rng = np.random.default_rng(10 + i)
kind = transport_for(w, cp.zeros(1)).name
print(f"ok process {i} of {n} on GPU {cp.cuda.Device().id}, transport {kind}", flush=True)


def same(gpu, cpu, what, tol=0.0):
    got = cp.asnumpy(gpu)
    assert got.dtype == cpu.dtype and got.shape == cpu.shape, (what, got.dtype, got.shape)
    if tol:
        np.testing.assert_allclose(got, cpu, rtol=tol, atol=tol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, cpu, err_msg=what)


tree = {"f32": rng.normal(size=(3, 5)).astype(np.float32), "f64": rng.normal(size=7),
        "i32": np.arange(6, dtype=np.int32) * (i + 1), "f16": np.ones(4, np.float16) * (i + 1),
        "i16": np.full(3, i + 2, np.int16), "c64": (rng.normal(size=2) * 1j).astype(np.complex64)}
on_gpu = fnad.device_put(tree, "gpu")
for bb in (None, 64):
    got, want = dist.psum(on_gpu, bucket_bytes=bb), dist.psum(tree, bucket_bytes=bb)
    for k in tree:
        same(got[k], want[k], f"psum {k} bucket_bytes={bb}")
got = dist.all_gather({**on_gpu, "b": cp.asarray([i == 0])}, axis=0)
want = dist.all_gather({**tree, "b": np.array([i == 0])}, axis=0)
for k in want:
    same(got[k], want[k], f"all_gather {k}")
same(dist.all_gather(on_gpu["f32"], axis=1, tiled=True),
     dist.all_gather(tree["f32"], axis=1, tiled=True), "all_gather tiled")
rows = rng.normal(size=(2 * n, 3))
same(dist.psum_scatter(cp.asarray(rows), tiled=True), dist.psum_scatter(rows, tiled=True),
     "psum_scatter")
same(dist.broadcast(on_gpu, root=n - 1)["f64"], dist.broadcast(tree, root=n - 1)["f64"],
     "broadcast")
g = fnad.grad(lambda x: fnad.numpy.sum(fnad.numpy.sin(dist.all_gather(x))))(cp.asarray(rows))
same(g, fnad.grad(lambda x: fnad.numpy.sum(fnad.numpy.sin(dist.all_gather(x))))(rows),
     "grad of all_gather", tol=1e-12)
print(f"ok collectives on CuPy arrays ({kind}) equal the NumPy ones (process {i})", flush=True)

# a few data-parallel steps of the small float64 GPT, on the GPU
from tests.distributed import gpt_setup as gs  # noqa: E402

to_gpu = lambda t: fnad.device_put(t, "gpu")
ref_opt, dp_opt = gs.base_optimizer(), gs.data_parallel_optimizer()
p_ref = p_dp = to_gpu(gs.init_params())
s_ref, s_dp = ref_opt.init(p_ref), dp_opt.init(p_dp)
ref_step, dp_step = gs.make_step(ref_opt), fnad.jit(gs.make_step(dp_opt))
err = 0.0
for t in range(1, 6):
    x, y = gs.batch(t, shard=False)
    xl, yl = gs.batch(t, shard=True)
    p_ref, s_ref, _ = ref_step(p_ref, s_ref, to_gpu(x), to_gpu(y))
    p_dp, s_dp, _ = dp_step(p_dp, s_dp, to_gpu(xl), to_gpu(yl))
    err = max(err, gs.rel_err(fnad.to_numpy(p_dp), fnad.to_numpy(p_ref)))
    for leaf in fnad.tree_leaves(p_dp):
        both = cp.asnumpy(dist.all_gather(leaf))
        assert all(np.array_equal(both[0], b) for b in both), "params differ across processes"
assert err <= 1e-11, err
print(f"ok 5 data-parallel GPT steps on the GPU: {err:.1e} from one process (process {i})",
      flush=True)

result = {"processes": n, "transport": kind, "gpt_rel_err": err}
if "--bench" in sys.argv:
    x = cp.random.random(8 * 2**20, dtype=cp.float32)  # 32 MiB
    times = []
    for _ in range(12):
        dist.barrier()
        cp.cuda.get_current_stream().synchronize()
        t0 = time.perf_counter()
        dist.psum(x)
        cp.cuda.get_current_stream().synchronize()
        times.append(time.perf_counter() - t0)
    med = float(np.median(times[2:]))
    result.update(psum_32MiB_ms=med * 1e3, algbw_GiB_s=x.nbytes / med / 2**30)
if i == 0:
    print(json.dumps(result), flush=True)
