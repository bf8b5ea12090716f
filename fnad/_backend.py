"""The array backends: NumPy always, CuPy when it is installed and a GPU is present.

Only this module and the `fnad.numpy` wrapper touch `numpy`/`cupy` directly
(as `xp`). Every other module asks `array_module(...)` for the module that
owns its arrays.
"""

import numpy as np

from ._tracer import getval

__all__ = ["array_module", "cupy_or_none", "is_cupy_array", "is_array", "asarray_like"]

_cupy = False  # not looked up yet


def cupy_or_none():
    """The `cupy` module if it imports and sees a GPU, else None."""
    global _cupy
    if _cupy is False:
        try:
            import cupy
            cupy.cuda.runtime.getDeviceCount()
            _cupy = cupy
        except Exception:
            _cupy = None
    return _cupy


def is_cupy_array(x):
    t = type(x)
    return t.__module__.startswith("cupy") and t.__name__ == "ndarray"


def array_module(*args):
    """`numpy` or `cupy`, by the arrays among `args` (tracers are looked through).

    Mixing NumPy and CuPy arrays raises a ValueError that names both devices.
    """
    xp = None
    for a in args:
        a = getval(a)
        if is_cupy_array(a):
            if xp is np:
                raise _mixed_error()
            xp = cupy_or_none()
        elif isinstance(a, (np.ndarray, np.generic)):
            if xp is not None and xp is not np:
                raise _mixed_error()
            xp = np
    return np if xp is None else xp


def _mixed_error():
    return ValueError("an operation mixes a NumPy (cpu) array and a CuPy (gpu) array; move "
                      "them to one device first with fnad.device_put(x, 'gpu') or "
                      "fnad.device_put(x, 'cpu').")


def is_array(x):
    return isinstance(x, (np.ndarray, np.generic)) or is_cupy_array(x)


def asarray_like(x):
    """`x` as an array of its own backend (Python scalars become NumPy arrays)."""
    if is_array(x):
        return x
    return np.asarray(x)
