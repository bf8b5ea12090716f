"""fnad.distributed on one machine: allreduce throughput against raw mpi4py, a data-parallel
training step on 2 processes against 1, and the optimizer memory of ZeRO stage 1.

1. Allreduce (2 processes): `fnad.distributed.psum` against mpi4py's `Allreduce` on the same
   float32 buffers (1, 8 and 32 MiB), and psum of a 64-leaf tree of 32 MiB (packed into one
   bucket by fnad) against `Allreduce` of one 32 MiB buffer; medians of interleaved rounds.
   fnad's extra work per call is the agreement (an allgather of 16 bytes) and, for trees,
   packing the leaves into the bucket and unpacking them. Goal: >= 0.9 of raw at 32 MiB.
2. Training step (the train_gpt "cpu" preset, 4 x 128, float32, global batch 32 x 128,
   jit, AdamW): 1 process with 1 and with 2 BLAS threads against 2 processes with 1 thread
   each, each on half of the batch. On a 2-core machine this shows the overhead of data
   parallelism (gradient averaging, two processes sharing the cores), not a speed-up; on a
   machine loaded by other jobs two processes also get a larger share of the cores than
   one, and two BLAS threads in one process can be slower than one.
3. ZeRO stage 1: bytes of the optimizer state per process, unsharded and sharded.

Timings on a shared machine are noisy: read the ratios, each measured side by side.

Run: python benchmarks/distributed.py [--repeats 15] [--json out.json]
(it launches `mpiexec` itself; `--worker` is how it calls itself under mpiexec).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import fnad
import fnad.distributed as dist
import fnad.random as random
import fnad_optim as optim
from fnad_nn import data, models

ROOT = Path(__file__).resolve().parent.parent
MiB = 2 ** 20


# ----------------------------------------------------------------------------- workers

def _median_pair(fns, repeats, w):
    """Median seconds of each function, the calls of all interleaved, every call started
    together on every process (a barrier first); the slowest process's median."""
    comm = w.comm
    times = {k: [] for k in fns}
    for f in fns.values():
        f()  # warm up
    for _ in range(repeats):
        for k, f in fns.items():
            comm.Barrier()
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    return {k: float(comm.allreduce(float(np.median(v)), op=w.mpi.MAX)) for k, v in times.items()}


def worker_allreduce(repeats):
    w = dist.initialize()
    comm = w.comm
    rows = []
    for mib in (1, 8, 32):
        x = np.random.default_rng(w.index).random(mib * MiB // 4, dtype=np.float32)
        out = np.empty_like(x)
        med = _median_pair({"raw": lambda: comm.Allreduce(x, out),
                            "fnad": lambda: dist.psum(x)}, repeats, w)
        rows.append({"what": f"one array, {mib} MiB", "bytes": x.nbytes, **med})
    leaves = [np.random.default_rng(k).random(MiB // 8, dtype=np.float32) for k in range(64)]
    packed = np.concatenate(leaves)
    out = np.empty_like(packed)
    med = _median_pair({"raw": lambda: comm.Allreduce(packed, out),
                        "fnad": lambda: dist.psum(leaves)}, repeats, w)
    rows.append({"what": "64-leaf tree, 32 MiB (raw: one packed buffer)",
                 "bytes": packed.nbytes, **med})
    if w.index == 0:
        print(json.dumps({"allreduce": rows}), flush=True)


def _gpt_setup():
    config = models.GPTConfig(vocab=65, d_model=128, n_heads=4, n_layers=4, max_len=128)
    params = models.init_gpt(random.PRNGKey(0), config)
    decay = lambda p: fnad.tree_map(lambda w: w.ndim > 1, p)
    return config, params, optim.adamw(2e-3, b1=0.9, b2=0.95, weight_decay=0.1, mask=decay)


def worker_step(repeats):
    w = dist.initialize()
    config, params, adamw = _gpt_setup()
    opt = optim.data_parallel(optim.chain(optim.clip_by_global_norm(1.0), adamw))
    state = opt.init(params)
    tokens = np.random.default_rng(0).integers(0, 65, size=(32, 129))

    def step(params, state, x, y):
        loss, grads = fnad.value_and_grad(
            lambda p: models.token_loss(p, config, x, y))(params)
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state, loss

    jstep = fnad.jit(step)
    mine = data.shard_rows(tokens)
    x, y = mine[:, :-1], mine[:, 1:]
    for _ in range(2):  # compile and warm up
        params, state, loss = jstep(params, state, x, y)
    times = []
    for _ in range(repeats):
        dist.barrier()
        t0 = time.perf_counter()
        params, state, loss = jstep(params, state, x, y)
        float(loss)
        times.append(time.perf_counter() - t0)
    med = float(np.median(times))
    med = float(np.max(dist.all_gather(np.float64(med))))  # the slowest process
    if w.index == 0:
        print(json.dumps({"step": {"processes": w.count, "median_s": med,
                                   "rows_per_process": int(x.shape[0])}}), flush=True)


def worker_memory():
    w = dist.initialize()
    _, params, adamw = _gpt_setup()
    size = lambda s: sum(int(x.nbytes) for x in fnad.tree_leaves(s) if hasattr(x, "nbytes"))
    full = size(adamw.init(params))
    sharded = size(optim.shard_optimizer_state(adamw).init(params))
    per = [int(v) for v in dist.all_gather(np.int64(sharded))]
    if w.index == 0:
        print(json.dumps({"memory": {"params_bytes": size(params), "unsharded_bytes": full,
                                     "sharded_bytes_per_process": per}}), flush=True)


# ----------------------------------------------------------------------------- launcher

def launch(n, threads, *args):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    here = Path(sys.executable).parent / "mpiexec"  # pip's mpich, even off PATH
    cmd = [str(here) if here.exists() else "mpiexec", "-n", str(n), sys.executable, __file__,
           *map(str, args)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)
    if out.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stdout}\n{out.stderr}")
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--json", type=Path, default=None, help="also write the results here")
    p.add_argument("--worker", choices=["allreduce", "step", "memory"], default=None)
    args = p.parse_args()
    if args.worker == "allreduce":
        return worker_allreduce(args.repeats)
    if args.worker == "step":
        return worker_step(args.repeats)
    if args.worker == "memory":
        return worker_memory()

    print(f"machine: {os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f} "
          "(shared: timings are noisy, read the ratios)")
    res = launch(2, 1, "--worker", "allreduce", "--repeats", args.repeats)
    print("\n1. allreduce over 2 processes (median of interleaved calls, slowest process)")
    print(f"  {'buffers':48s} {'raw MiB/s':>10s} {'fnad MiB/s':>10s} {'fnad/raw':>9s}")
    for r in res["allreduce"]:
        bw = lambda t: r["bytes"] / t / MiB
        print(f"  {r['what']:48s} {bw(r['raw']):10.0f} {bw(r['fnad']):10.0f} "
              f"{r['raw'] / r['fnad']:9.2f}")
    one_1 = launch(1, 1, "--worker", "step", "--repeats", args.repeats)["step"]
    one_2 = launch(1, 2, "--worker", "step", "--repeats", args.repeats)["step"]
    two = launch(2, 1, "--worker", "step", "--repeats", args.repeats)["step"]
    best = min(one_1["median_s"], one_2["median_s"])
    print("\n2. training step, GPT 4 x 128, global batch 32 x 128, jit")
    print(f"  1 process,   1 thread,  32 rows:     {one_1['median_s'] * 1e3:8.1f} ms")
    print(f"  1 process,   2 threads, 32 rows:     {one_2['median_s'] * 1e3:8.1f} ms")
    print(f"  2 processes, 1 thread each, 16 rows: {two['median_s'] * 1e3:8.1f} ms "
          f"({two['median_s'] / best:.2f}x the faster one-process step)")
    print("  Two processes share the same 2 cores: this measures the overhead of data "
          "parallelism\n  (averaging, two processes), not a speed-up; on a machine loaded "
          "by other jobs it also\n  measures how the scheduler shares the cores (two "
          "processes get a larger share than one).")
    mem = launch(2, 1, "--worker", "memory")["memory"]
    print("\n3. ZeRO stage 1, AdamW moments of the same GPT")
    print(f"  params {mem['params_bytes'] / MiB:.2f} MiB; optimizer state unsharded "
          f"{mem['unsharded_bytes'] / MiB:.2f} MiB per process, sharded over 2: "
          + ", ".join(f"{b / MiB:.2f}" for b in mem["sharded_bytes_per_process"])
          + f" MiB ({max(mem['sharded_bytes_per_process']) / mem['unsharded_bytes']:.3f} "
          "of unsharded)")
    if args.json is not None:
        args.json.write_text(json.dumps({"allreduce": res["allreduce"], "step_1x1": one_1,
                                         "step_1x2": one_2, "step_2x1": two, "memory": mem},
                                        indent=1) + "\n")


if __name__ == "__main__":
    main()
