"""Run under `mpiexec -n 2` by tests/distributed/test_mpi.py (argv[1] is a folder): replicas
that drift apart are caught (issue 31: without data_parallel the processes' params diverged
and dist.save wrote process 0's copy). Prints `ok <check>` lines."""

import sys
from pathlib import Path

import numpy as np

import fnad
import fnad.distributed as dist
import fnad_optim as optim

w = dist.initialize()
i, n = w.index, w.count
assert n == 2, n
folder = Path(sys.argv[1])


def ok(name):
    print(f"ok {name} (process {i})", flush=True)


def raises(call, *needles):
    try:
        call()
    except dist.ReplicasDivergedError as e:
        for s in needles:
            assert s in str(e), (s, str(e))
        return
    raise AssertionError(f"no ReplicasDivergedError for {needles}")


params = {"b": np.zeros(3), "w": np.ones((2, 3))}
rng = np.random.default_rng(i)  # each process's own data


def grads():
    return {"b": rng.normal(size=3), "w": rng.normal(size=(2, 3))}


# the optimizer without data_parallel: each process steps on its own gradient
opt = optim.adam(0.1)
p, st = params, opt.init(params)
for _ in range(3):
    u, st = opt.update(grads(), st, p)
    p = optim.apply_updates(p, u)
raises(lambda: dist.save(folder / "bad.npz", {"params": p, "step": 3, "note": "x"}),
       "different values of the tree passed to save, first at the leaf ['params']['b']",
       "fnad_optim.data_parallel", "nothing was written")
dist.barrier()
assert not (folder / "bad.npz").exists()
raises(lambda: dist.check_replicas(p, what="params"), "different values of params")
dist.save(folder / "mine.npz", {"params": p}, check=False)  # process 0's copy, on request
ok("save and check_replicas refuse replicas that drifted apart")

# with data_parallel the replicas stay equal, and the periodic check passes
for jit in (False, True):
    w.replica_checks.clear()  # count this optimizer's updates from 1
    opt = optim.data_parallel(optim.adam(0.1), check_every=2)

    def step(p, st, g):
        u, st = opt.update(g, st, p)
        return optim.apply_updates(p, u), st

    step = fnad.jit(step) if jit else step
    p, st = params, opt.init(params)
    for _ in range(4):
        p, st = step(p, st, grads())
    dist.save(folder / "good.npz", {"params": p, "opt_state": st, "step": 4, "note": "x"})
    assert fnad.load(folder / "good.npz")["step"] == 4
    # a copy that drifts on one process is caught at the next checked update (#5)
    p = fnad.tree_map(lambda x: x + (1e-12 if i == 1 else 0.0), p)
    raises(lambda: step(p, st, grads()), "different values of params, first at the leaf "
           "['b'] (process 0 and process 1 differ)")
    ok(f"data_parallel checks the replicas every check_every updates (jit={jit})")
print(f"done (process {i})", flush=True)
