"""A simulated device: CuPy's rules on the host, so the CuPy path runs in every test run.

`simcupy` stands in for `cupy` and `simcupyx` for `cupyx`: CuPy's namespace (read from
CuPy's own sources, `cupy_api.py`) computed by NumPy, on a device array type of its own
(`simcupy.ndarray`) that keeps CuPy's rules where they differ from NumPy's: no implicit
conversion to NumPy, 0-d device arrays where NumPy returns scalars, NumPy arrays refused
as operands, only CuPy's functions and parameters, ufunc methods as CuPy has them, no
numba, no CUDA source. Every host-device transfer is counted (`transfers()`,
`no_transfers()`, `TOTALS`).

`installed()` registers it with fnad through `fnad._core.backend.register_device_backend`,
the registration CuPy itself goes through, so "gpu" then means the simulated device and
fnad dispatches on its arrays exactly as on CuPy's. The tests in this folder run on it
(marked `sim_device`: `python -m pytest -m sim_device`).
"""

import contextlib

from fnad._core.backend import register_device_backend, unregister_device_backend

from . import simcupy, simcupyx
from ._transfers import TOTALS, HostTransferError, no_transfers, transfers

__all__ = ["simcupy", "simcupyx", "installed", "transfers", "no_transfers", "TOTALS",
           "HostTransferError", "NAME"]

NAME = "simulated CuPy"


@contextlib.contextmanager
def installed():
    """The simulated device as fnad's "gpu" inside the block."""
    backend = register_device_backend(simcupy, simcupy.ndarray, name=NAME, xpx=simcupyx)
    try:
        yield backend
    finally:
        unregister_device_backend(backend)
