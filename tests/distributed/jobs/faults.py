"""Run under `mpiexec -n 2` by tests/distributed/test_mpi.py, one fault per run (argv[1]):

- raise: process 1 raises while process 0 waits in a psum: the job must end within
  seconds, printing the process index and the error (MPI's default is to hang);
- exit: process 1 leaves (sys.exit) while process 0 waits in a psum: process 0 must stop;
- kill_mid_save: process 0 writes a first checkpoint, then is killed (SIGKILL) in the middle
  of writing a second one: the first must stay intact (argv[2] is the checkpoint path).
"""

import os
import signal
import sys

import numpy as np

import fnad._io.checkpoint as checkpoint
import fnad.distributed as dist

mode = sys.argv[1]
w = dist.initialize()
dist.psum(np.ones(2))  # both processes are up and talking

if mode == "raise":
    if w.index == 1:
        raise ValueError("boom on process 1, on purpose")
    dist.psum(np.ones(2))

elif mode == "exit":
    if w.index == 1:
        sys.exit(3)
    dist.psum(np.ones(2))

elif mode == "kill_mid_save":
    path = sys.argv[2]
    dist.save(path, {"step": 1, "w": np.arange(4.0)})
    written = []
    write = checkpoint._write_array

    def write_then_die(member, host):  # killed after the first array of the second save
        write(member, host)
        written.append(1)
        if len(written) == 2:
            os.kill(os.getpid(), signal.SIGKILL)

    checkpoint._write_array = write_then_die
    dist.save(path, {"step": 2, "w": np.zeros(4), "more": np.ones(100)})

print(f"process {w.index} reached the end of mode {mode}", flush=True)
