"""Run under `mpiexec -n 2` by tests/distributed/test_mpi.py: process 1 fails before its first
fnad.distributed call (argv[1]: raise, exit or slow), while process 0 goes on to a psum. The
job must end within seconds (issue 31: process 0 waited in MPI_Init forever)."""

import os
import sys
import time

if os.environ.get("PMI_RANK") == "1":  # before anything of fnad is imported
    if sys.argv[1] == "raise":
        raise ValueError("boom on process 1 before fnad, on purpose")
    if sys.argv[1] == "exit":
        sys.exit(0)
    time.sleep(60)  # slow: still alive, but later than FNAD_DIST_JOIN_TIMEOUT

import numpy as np

import fnad.distributed as dist

print("process 0 calls psum", flush=True)
dist.psum(np.ones(2))
print(f"process {dist.process_index()} reached the end", flush=True)
