"""fnad.distributed: data parallel across processes and machines.

One process per device, launched by MPI (`mpiexec -n 4 python train.py`); each process
runs the same program on its own part of the data, and collectives combine what the
processes computed. NumPy arrays travel through MPI (mpi4py); CuPy arrays through NCCL
(cupyx.distributed), else through MPI via host memory (CUDA-aware MPI on request). The same
script runs unchanged in one process, where every collective is the identity
(`all_gather` stacks an axis of size 1).

- `initialize()`, `process_index()`, `process_count()`, `barrier()`;
- collectives over arrays or pytrees, dtypes kept: `psum`, `pmean`,
  `all_gather(x, axis=0, tiled=False)`, `psum_scatter`, `broadcast(tree, root=0)`. They
  are primitives: differentiable in JAX's SPMD sense (the VJP of psum is psum), batchable
  by vmap and staged by jit as one equation each. Before any data moves the processes
  check that they make the same call (structure, shapes, dtypes), else every process
  raises a `CollectiveMismatchError` naming both sides;
- `process_key(key)`: a key folded with the process index (dropout per process);
- `save(path, tree)`: a checkpoint written once, by process 0, after the processes
  compared a checksum of `tree` (`check_replicas`: replicas that drifted apart raise a
  `ReplicasDivergedError` naming the leaf).

mpi4py is optional and imported only under an MPI launcher. An uncaught exception on any
process ends the whole job within seconds, and so does a process that fails before its first
fnad.distributed call (on another machine: after $FNAD_DIST_JOIN_TIMEOUT; docs/distributed.md).

Example:
  import fnad.distributed as dist
  dist.initialize()
  grads = dist.pmean(fnad.grad(loss)(params, *my_part_of_the_batch))
"""

from ._agree import CollectiveMismatchError as CollectiveMismatchError
from ._buckets import BUCKET_BYTES as BUCKET_BYTES
from ._collectives import all_gather as all_gather
from ._collectives import broadcast as broadcast
from ._collectives import pmean as pmean
from ._collectives import process_key as process_key
from ._collectives import psum as psum
from ._collectives import psum_scatter as psum_scatter
from ._collectives import save as save
from ._replicas import ReplicasDivergedError as ReplicasDivergedError
from ._replicas import check_replicas as check_replicas
from ._world import DistributedError as DistributedError
from ._world import World as World
from ._world import barrier as barrier
from ._world import initialize as initialize
from ._world import process_count as process_count
from ._world import process_index as process_index
