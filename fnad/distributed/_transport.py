"""Moving buffers between processes: MPI (mpi4py) for NumPy arrays; for CuPy arrays NCCL
(cupyx.distributed), else MPI through host memory, or MPI on device memory where the MPI
library is CUDA-aware and the user opted in.

Every transport is a `Transport`: the same four operations on contiguous arrays of one
array module, their outputs allocated by the caller. Gathers and broadcasts move raw bytes,
so every dtype (bool included) travels unchanged.
"""

from typing import Protocol

import numpy as np

from .._core.backend import cupy_module, is_device_array

__all__ = ["Transport", "MPITransport", "HostStagingTransport", "NCCLTransport",
           "transport_for", "choose_gpu_transport", "nccl_available", "GPU_TRANSPORTS"]

GPU_TRANSPORTS = ("nccl", "cuda-aware-mpi", "host")


def _bytes(x):
    """A flat uint8 view of the contiguous array `x` (NumPy or CuPy)."""
    return x.reshape(-1).view(np.uint8)


class Transport(Protocol):
    """What moves a collective's buffers between the processes (`name` says which)."""

    name: str

    def allreduce(self, send, recv) -> None:
        """`recv` = the sum of every process's `send`; `send is recv` reduces in place."""

    def allgather(self, send, recv) -> None:
        """`recv` = every process's `send`, in process order (`count` times its size)."""

    def bcast(self, buf, root) -> None:
        """`buf` = process `root`'s `buf`, in place."""

    def reduce_scatter(self, send, recv) -> None:
        """`send` holds `count` blocks of `recv`'s size; process p's `recv` = the sum of
        every process's p-th block."""


class MPITransport:
    """Collectives through mpi4py on the world's communicator. `device=True` hands CuPy
    buffers to MPI directly (a CUDA-aware MPI), after the current stream has finished the
    work that writes them."""

    name = "mpi"

    def __init__(self, world, device=False):
        self.world = world
        self.comm = world.comm
        self.MPI = world.mpi
        self.device = device
        if device:
            self.name = "cuda-aware-mpi"

    def _ready(self, *arrays):
        if self.device:
            for a in arrays:
                if is_device_array(a):
                    cupy_module().cuda.get_current_stream().synchronize()
                    return

    def allreduce(self, send, recv):
        self._ready(send)
        src = self.MPI.IN_PLACE if send is recv else send
        self.world.wait(self.comm.Iallreduce(src, recv, op=self.MPI.SUM), "psum")

    def allgather(self, send, recv):
        self._ready(send)
        self.world.wait(self.comm.Iallgather(_bytes(send), _bytes(recv)), "all_gather")

    def bcast(self, buf, root):
        self._ready(buf)
        self.world.wait(self.comm.Ibcast(_bytes(buf), root=root), "broadcast")

    def reduce_scatter(self, send, recv):
        self._ready(send)
        self.world.wait(self.comm.Ireduce_scatter_block(send, recv, op=self.MPI.SUM),
                        "psum_scatter")


class HostStagingTransport:
    """Another transport (MPI on NumPy buffers) run on host copies of device arrays: each
    operation copies its input to the host with `to_host(x) -> numpy array` and writes the
    result back with `store(dst, host)`. This is the fallback for CuPy arrays without NCCL;
    with NumPy copies for the two functions it runs (and is tested) without a GPU."""

    name = "host"

    def __init__(self, inner: Transport, to_host, store):
        self.inner = inner
        self.to_host = to_host
        self.store = store

    def allreduce(self, send, recv):
        h = self.to_host(send)
        self.inner.allreduce(h, h)  # the host copy is ours: reduce it in place
        self.store(recv, h)

    def allgather(self, send, recv):
        h_recv = np.empty(recv.shape, recv.dtype)
        self.inner.allgather(self.to_host(send), h_recv)
        self.store(recv, h_recv)

    def bcast(self, buf, root):
        h = self.to_host(buf)
        self.inner.bcast(h, root)
        self.store(buf, h)

    def reduce_scatter(self, send, recv):
        h_recv = np.empty(recv.shape, recv.dtype)
        self.inner.reduce_scatter(self.to_host(send), h_recv)
        self.store(recv, h_recv)


# NCCL's element types (cupyx.distributed's table): no bool, int16 or uint16 for reductions.
_NCCL_DTYPE_CHARS = frozenset("bBiIlLqQefdFD")


class NCCLTransport:
    """Collectives through NCCL (`cupyx.distributed.NCCLBackend`, set up over MPI) on the
    current CUDA stream; a reduction of a dtype NCCL lacks goes through `fallback`."""

    name = "nccl"

    def __init__(self, world, fallback: Transport):
        from cupyx.distributed import NCCLBackend  # noqa: PLC0415 - optional dependency
        self.world = world
        self.fallback = fallback
        self.comm = NCCLBackend(world.count, world.index, use_mpi=True)

    def allreduce(self, send, recv):
        if send.dtype.char not in _NCCL_DTYPE_CHARS:
            return self.fallback.allreduce(send, recv)
        self.comm.all_reduce(send, recv, "sum")

    def allgather(self, send, recv):
        self.comm.all_gather(_bytes(send), _bytes(recv), send.nbytes)

    def bcast(self, buf, root):
        self.comm.broadcast(_bytes(buf), root)

    def reduce_scatter(self, send, recv):
        if send.dtype.char not in _NCCL_DTYPE_CHARS:
            return self.fallback.reduce_scatter(send, recv)
        self.comm.reduce_scatter(send, recv, recv.size, "sum")


def _to_host(x):
    return x.get()


def _store_device(dst, host):
    dst.set(host)


def nccl_available():
    """Whether cupyx.distributed and an NCCL library can be used."""
    try:
        from cupy.cuda import nccl  # noqa: PLC0415 - optional dependency
        import cupyx.distributed  # noqa: F401, PLC0415 - optional dependency
    except Exception:  # not installed, or CUDA/NCCL libraries missing
        return False
    return bool(getattr(nccl, "available", False))


def choose_gpu_transport(nccl_option, nccl_ok, cuda_aware_mpi):
    """Which transport CuPy arrays use: "nccl", "cuda-aware-mpi" or "host".

    `nccl_option` is the world's choice (None: NCCL where available; False: never; True:
    required), `nccl_ok` whether NCCL can be used, `cuda_aware_mpi` the user's opt-in.
    """
    if nccl_option is not False and nccl_ok:
        return "nccl"
    if nccl_option is True:
        raise RuntimeError("fnad.distributed: initialize(nccl=True) asks for NCCL, but "
                           "cupyx.distributed or the NCCL library is not available; install "
                           "CuPy with NCCL (pip install cupy-cuda12x; NCCL comes with it), or "
                           "leave nccl unset to go through MPI.")
    return "cuda-aware-mpi" if cuda_aware_mpi else "host"


def transport_for(world, x) -> Transport:
    """The transport for arrays like `x` (NumPy or CuPy), made once per world."""
    key = "gpu" if is_device_array(x) else "cpu"
    t = world.transports.get(key)
    if t is None:
        t = world.transports[key] = _make(world, key)
    return t


def _make(world, key) -> Transport:
    mpi = MPITransport(world)
    if key == "cpu":
        return mpi
    kind = choose_gpu_transport(world.nccl, world.nccl is not False and nccl_available(),
                                world.cuda_aware_mpi)
    host = HostStagingTransport(mpi, _to_host, _store_device)
    if kind == "nccl":
        return NCCLTransport(world, host)
    if kind == "cuda-aware-mpi":
        return MPITransport(world, device=True)
    return host
