"""The world of processes: who this process is, how many there are, and what happens when
one of them fails.

Under `mpiexec` (the launcher's environment says so) `initialize()` joins the MPI world
through mpi4py; otherwise it sets up a one-process world in which every collective is the
identity, so that the same script runs anywhere. mpi4py is imported only here, and only
when a launcher started this process (or `initialize(mpi=True)` asks for it).

Faults. MPI's default, when one process dies of an exception, is that the others wait in
their next collective forever. Joining the world is watched (`_join_mpi` and _watchdog.py:
a process that exited before it joined ends the job instead of leaving MPI_Init waiting),
and an MPI world installs two things:

- `sys.excepthook`: an uncaught exception prints the process index and the traceback, then
  calls `MPI_Abort`, which ends every process of the job at once;
- an exit notice: a process that ends (normally or by `sys.exit`) tells the others how many
  collectives it made, and a process waiting in a later collective, which that process
  will never join, stops with a `DistributedError` (and so aborts the job) instead of
  waiting forever. Collectives wait for their request and for a notice at once
  (`MPI_Waitany`), so they read these notices at no cost to the transfer.
"""

import atexit
import os
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np

from .._core.backend import cupy_or_none
from .._core.settings import LAUNCHER_VARS, environ_get, launcher_env, setting
from ._agree import agree

__all__ = ["World", "initialize", "world", "process_index", "process_count", "barrier",
           "DistributedError", "launched_by_mpi", "LAUNCHER_VARS"]

_EXIT_TAG = 23  # tag of the exit notices, on a communicator of their own
_WATCHDOG = Path(__file__).with_name("_watchdog.py")  # run as a script while joining


class DistributedError(RuntimeError):
    """A collective cannot complete: another process has exited or the world is broken."""


def launched_by_mpi(environ=None):
    """Whether an MPI launcher (mpiexec, mpirun, srun with PMI) started this process."""
    env = launcher_env() if environ is None else environ
    return any(v in env for v in LAUNCHER_VARS)


def _launcher_size(environ=None):
    env = launcher_env() if environ is None else environ
    for v in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE"):
        if env.get(v, "").isdigit():
            return int(env[v])
    return None


class World:
    """One process's view of the job: `index` and `count`; `comm` is the MPI communicator
    (None in a one-process world without MPI)."""

    def __init__(self, index=0, count=1, comm=None, mpi=None, cuda_aware_mpi=False,
                 nccl=None):
        self.index = index
        self.count = count
        self.comm = comm
        self.mpi = mpi  # the mpi4py.MPI module, or None
        self.cuda_aware_mpi = cuda_aware_mpi
        self.nccl = nccl  # None: use NCCL for CuPy arrays when available; False: never
        self.watch = comm.Dup() if comm is not None else None
        self.local_index = 0  # index among the processes of this machine
        self.calls = 0  # collectives called so far (named in error messages)
        self.replica_checks = {}  # (what, layout, every) -> calls of check_replicas
        self.broken = None  # why no further collective can run, once one has failed
        self.exited = {}  # process -> the number of collectives it made before it exited
        self._notice_req = None  # the pending receive of an exit notice
        self._notice_buf = np.zeros(1, np.int64)
        self.transports = {}  # filled by fnad.distributed._transport

    @property
    def local(self):
        """True for the one-process world without MPI, where collectives are identities."""
        return self.comm is None

    def __repr__(self):
        kind = "one process, no MPI" if self.local else "MPI"
        return f"World(process {self.index} of {self.count}, {kind})"

    # ------------------------------------------------------------------ waiting
    def wait(self, request, what):
        """Wait for an MPI request of the current collective (number `self.calls`), or for
        an exit notice: a process that exited before making this collective will never
        join it, so waiting for it stops with a DistributedError. Both are waited for in
        one `MPI_Waitany`, so MPI drives the transfer at full speed meanwhile."""
        if request.Test():
            return
        while True:
            gone = self.exited_peer()
            if gone is not None:
                self._give_up(what, gone)
            status = self.mpi.Status()
            if self.mpi.Request.Waitany([request, self._notice()], status) == 0:
                return
            self.exited[status.Get_source()] = int(self._notice_buf[0])
            self._notice_req = None  # that notice is read: listen for the next

    def _notice(self):
        """The pending receive of the next exit notice (posted once, kept across waits)."""
        if self._notice_req is None:
            self._notice_req = self.watch.Irecv(self._notice_buf, source=self.mpi.ANY_SOURCE,
                                                tag=_EXIT_TAG)
        return self._notice_req

    def exited_peer(self):
        """A process that has exited without making the current collective, or None (exit
        notices carry how many collectives their process made)."""
        for q, made in sorted(self.exited.items()):
            if made < self.calls:
                return q
        return None

    def stop_listening(self):
        """Cancel the pending receive of exit notices (before this process exits)."""
        if self._notice_req is not None:
            self._notice_req.Cancel()
            self._notice_req.Wait()
            self._notice_req = None

    def _give_up(self, what, gone):
        made = self.exited[gone]
        after = f"after its collective #{made}" if made else "before any collective"
        self.broken = (f"process {gone} exited ({after}) while process {self.index} was "
                       f"waiting for it in {what}")
        raise DistributedError(
            f"fnad.distributed: {self.broken}. The processes did not call the same "
            "collectives: one stopped early (sys.exit, the end of its loop) or took a branch "
            "the others did not. Make every process run the same sequence of collectives "
            "(same number of steps, same data sizes).")

    def check_usable(self, what):
        if self.broken is not None:
            raise DistributedError(f"fnad.distributed: {what} cannot run: {self.broken}.")


_WORLD = None


def world():
    """The current world, initialised (as by `initialize()`) on first use."""
    return _WORLD if _WORLD is not None else initialize()


def initialize(mpi=None, *, cuda_aware_mpi=None, nccl=None):
    """Join the job's processes; idempotent. Returns the `World`.

    Under an MPI launcher (`mpiexec -n 4 python train.py`) it joins the MPI world through
    mpi4py, installs the fault handling (an uncaught exception on any process ends the whole
    job within seconds, naming the process) and, where CuPy sees GPUs, gives each process
    of a machine its own GPU. Without a launcher it sets up a one-process world where every
    collective is the identity, so the same script runs anywhere. Collectives and
    `process_index()` call it on first use, so calling it yourself is optional.

    Joining waits for every process of the job (MPI_Init). A process that fails before it
    joins would leave the others waiting forever; while this process joins, a watchdog
    (`_watchdog.py`) ends the job where a process on this machine has already exited, or
    after `$FNAD_DIST_JOIN_TIMEOUT` seconds (300; 0: never) without the others
    (docs/distributed.md, "Faults").

    Args:
      mpi: None (default) joins MPI when a launcher started this process; True requires
        MPI (an error if mpi4py is missing); False forces the one-process world.
      cuda_aware_mpi: pass CuPy buffers straight to MPI (only for an MPI built with CUDA
        support) when NCCL is not used; default from `$FNAD_CUDA_AWARE_MPI`, else off
        (CuPy arrays go through host memory).
      nccl: None (default) uses NCCL (cupyx.distributed) for CuPy arrays when it is
        available; False never does; default from `$FNAD_NCCL`.

    Example:
      import fnad.distributed as dist
      dist.initialize()
      print(dist.process_index(), "of", dist.process_count())
    """
    global _WORLD
    if _WORLD is not None:
        _check_same_options(_WORLD, mpi, cuda_aware_mpi, nccl)
        return _WORLD
    if cuda_aware_mpi is None:
        cuda_aware_mpi = setting("FNAD_CUDA_AWARE_MPI")
    if nccl is None:
        nccl = setting("FNAD_NCCL")
    if mpi is None:
        mpi = launched_by_mpi()
        if not mpi:
            _WORLD = World(cuda_aware_mpi=cuda_aware_mpi, nccl=nccl)
            return _WORLD
        try:
            MPI = _join_mpi()
        except ImportError as e:
            size = _launcher_size()
            if size is None or size > 1:
                raise ImportError(
                    f"fnad.distributed: this process was started by an MPI launcher (with "
                    f"{size or 'several'} processes) but mpi4py does not import ({e}); "
                    "without it every process would train alone on the same data. Install "
                    "it with `pip install mpi4py mpich` (or the `dev` extra), or run the "
                    "script without mpiexec.") from e
            _WORLD = World(cuda_aware_mpi=cuda_aware_mpi, nccl=nccl)
            return _WORLD
    elif mpi is False:
        _WORLD = World(cuda_aware_mpi=cuda_aware_mpi, nccl=nccl)
        return _WORLD
    else:
        MPI = _join_mpi() if launched_by_mpi() else _import_mpi()
    comm = MPI.COMM_WORLD
    w = World(comm.Get_rank(), comm.Get_size(), comm, MPI, cuda_aware_mpi, nccl)
    _install_fault_handling(w)
    _pick_gpu(w)
    _WORLD = w
    return w


def _import_mpi():
    from mpi4py import MPI  # noqa: PLC0415 - optional dependency
    return MPI


def _env_int(*names):
    for name in names:
        text = launcher_env().get(name) if name in LAUNCHER_VARS else environ_get(name)
        if text and text.strip().isdigit():
            return int(text)
    return None


def _join_mpi():
    """`_import_mpi()`, which joins the MPI world (MPI_Init waits for every process), with
    a watchdog beside it (_watchdog.py) that ends the job where a process exited before it
    joined, instead of waiting for it forever."""
    if "mpi4py.MPI" in sys.modules:  # joined already (the user imported mpi4py)
        return _import_mpi()
    args = [os.getpid(), _env_int("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK") or 0,
            _launcher_size() or 0, _env_int("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE")
            or 0, setting("FNAD_DIST_JOIN_TIMEOUT")]
    watchdog = subprocess.Popen([sys.executable, "-I", "-S", str(_WATCHDOG), *map(str, args)],
                                stdin=subprocess.PIPE)
    try:
        return _import_mpi()
    finally:
        watchdog.stdin.close()  # joined (or failed to): the watchdog exits
        watchdog.wait()


def _check_same_options(w, mpi, cuda_aware_mpi, nccl):
    asked = {"mpi": (mpi, not w.local), "cuda_aware_mpi": (cuda_aware_mpi, w.cuda_aware_mpi),
             "nccl": (nccl, w.nccl)}
    for name, (want, have) in asked.items():
        if want is not None and bool(want) != bool(have):
            raise RuntimeError(f"fnad.distributed.initialize: already initialised as {w} with "
                               f"{name}={have!r}; it cannot change to {name}={want!r} in a "
                               "running process. Call initialize once, before any collective.")


# ----------------------------------------------------------------------------- faults

def _install_fault_handling(w):
    previous = sys.excepthook

    def abort_job(etype, value, tb):
        text = "".join(traceback.format_exception(etype, value, tb))
        try:
            sys.stderr.write(
                f"fnad.distributed: process {w.index} of {w.count} failed with an uncaught "
                f"exception; ending the whole job (MPI_Abort) so that the other processes "
                f"do not wait for it:\n{text}[process {w.index}] {etype.__name__}: {value}\n")
            sys.stderr.flush()
        finally:
            w.comm.Abort(1)

    if previous is not sys.__excepthook__:  # keep a hook someone else installed, then abort
        def hook(etype, value, tb):
            try:
                previous(etype, value, tb)
            finally:
                abort_job(etype, value, tb)
    else:
        hook = abort_job
    sys.excepthook = hook
    atexit.register(_announce_exit, w)


def _announce_exit(w):
    """Tell the other processes that this one is ending (run at interpreter exit, before
    MPI_Finalize), so that one waiting for it in a collective stops instead of hanging."""
    note = np.array([w.calls], np.int64)  # how many collectives this process made
    try:
        w.stop_listening()
        requests = [w.watch.Isend(note, dest=q, tag=_EXIT_TAG)
                    for q in range(w.count) if q != w.index]
        w.mpi.Request.Waitall(requests)
    except Exception:  # the job is ending anyway; never turn an exit into a crash
        pass


def _pick_gpu(w):
    """One GPU per process of a machine (its index among the machine's processes, modulo
    the GPUs there), where CuPy sees any."""
    cupy = cupy_or_none()
    if cupy is None:
        return
    local = w.comm.Split_type(w.mpi.COMM_TYPE_SHARED)
    w.local_index = local.Get_rank()
    local.Free()
    cupy.cuda.Device(w.local_index % cupy.cuda.runtime.getDeviceCount()).use()


# ----------------------------------------------------------------------------- queries

def process_index():
    """This process's index in the job, 0 to `process_count() - 1` (0 outside mpiexec).

    Example:
      if dist.process_index() == 0:
          print("loss", loss)
    """
    return world().index


def process_count():
    """The number of processes in the job (1 outside mpiexec).

    Example:
      per_process = global_batch // dist.process_count()
    """
    return world().count


def barrier():
    """Wait until every process has reached this call (nothing in a one-process world).

    Example:
      dist.barrier()   # e.g. before reading a file process 0 has just written
    """
    w = world()
    if not w.local:
        agree(w, "barrier")  # the agreement is itself a barrier: an allgather of a digest
