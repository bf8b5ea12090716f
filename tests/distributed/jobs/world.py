"""Run under `mpiexec -n N`: each process prints its world; a key folded per process differs
on every process; a one-process MPI world still runs its collectives through MPI."""

import numpy as np

import fnad
import fnad.distributed as dist

w = dist.initialize()
assert not w.local and dist.initialize() is w
keys = dist.all_gather(dist.process_key(fnad.random.PRNGKey(0)))
assert len({tuple(k) for k in keys}) == w.count  # one dropout key per process
np.testing.assert_array_equal(dist.psum(np.arange(3)), np.arange(3) * w.count)
print(w, flush=True)
