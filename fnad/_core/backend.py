"""The array backends: NumPy always, CuPy when it is installed and a GPU is present.

Only this module and the `fnad.numpy` wrapper touch `numpy`/`cupy` directly
(as `xp`). Every other module asks `array_module(...)` for the module that
owns its arrays.
"""

import numpy as np

from .tracer import Tracer, getval

__all__ = ["array_module", "cupy_or_none", "is_cupy_array", "is_array", "asarray_like",
           "gpu_unavailable_reason", "DeviceMismatchError", "mixed_device_error",
           "find_mixed_devices", "describe_array", "diagnose_impl_error"]

_cupy = False  # not looked up yet
_cupy_reason = None


def cupy_or_none():
    """The `cupy` module if it imports and sees a GPU, else None."""
    global _cupy, _cupy_reason
    if _cupy is False:
        try:
            cupy = cupy_module()
        except Exception as e:  # ImportError, or a broken CUDA install
            _cupy, _cupy_reason = None, f"CuPy is not installed or does not import ({e})"
            return None
        try:
            n = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:
            _cupy, _cupy_reason = None, f"CuPy imports but finds no usable CUDA device ({e})"
            return None
        if n < 1:
            _cupy, _cupy_reason = None, "CuPy imports but reports 0 CUDA devices"
            return None
        _cupy = cupy
    return _cupy


def gpu_unavailable_reason():
    """None when a GPU can be used, else a sentence saying why not."""
    return None if cupy_or_none() is not None else _cupy_reason


def is_cupy_array(x):
    t = type(x)
    return t.__module__.startswith("cupy") and t.__name__ == "ndarray"


class DeviceMismatchError(ValueError):
    """An operation received arrays that live on different devices (NumPy and CuPy)."""


def describe_array(x):
    """'a NumPy (cpu) float32 array of shape (3, 4)' style description of a backend array."""
    if is_cupy_array(x):
        dev = getattr(getattr(x, "device", None), "id", 0)
        where = f"a CuPy (gpu:{dev})"
    else:
        where = "a NumPy (cpu)"
    return f"{where} {x.dtype} array of shape {tuple(x.shape)}"


def mixed_device_error(np_arr, cp_arr, op=None):
    """The DeviceMismatchError for an operation `op` given a NumPy and a CuPy array."""
    where = f"{op}: " if op else ""
    return DeviceMismatchError(
        f"{where}the operation mixes {describe_array(np_arr)} and {describe_array(cp_arr)}; "
        "arrays must live on one device. Move them first with fnad.device_put(x, 'gpu') "
        "(or fnad.device_put(x, 'cpu'), or fnad.to_numpy(x)).")


def find_mixed_devices(args, kwargs=None):
    """`(numpy_array, cupy_array)` if `args`/`kwargs` (one level of lists looked into) hold
    both a NumPy array and a CuPy array, else None. NumPy scalars do not count."""
    np_arr = cp_arr = None
    vals = list(args) + (list(kwargs.values()) if kwargs else [])
    for a in vals:
        items = a if isinstance(a, (list, tuple)) else (a,)
        for x in items:
            x = getval(x)
            if isinstance(x, np.ndarray):
                np_arr = x if np_arr is None else np_arr
            elif is_cupy_array(x):
                cp_arr = x if cp_arr is None else cp_arr
    if np_arr is not None and cp_arr is not None:
        return np_arr, cp_arr
    return None


def array_module(*args):
    """`numpy` or `cupy`, by the arrays among `args` (tracers are looked through).

    Mixing NumPy and CuPy arrays raises a DeviceMismatchError (a ValueError) that names
    both devices and says how to move the arrays.
    """
    np_arr = cp_arr = None
    for a in args:
        a = getval(a)
        if isinstance(a, Tracer):  # staged: only its abstract value knows the device
            if a.aval.xp is not np:
                return a.aval.xp
            continue
        if is_cupy_array(a):
            if np_arr is not None:
                raise mixed_device_error(np_arr, a)
            cp_arr = a
        elif isinstance(a, np.ndarray):
            if cp_arr is not None:
                raise mixed_device_error(a, cp_arr)
            np_arr = a
    if cp_arr is not None:
        return cupy_or_none() or cupy_module()
    return np


def cupy_module():
    """The `cupy` module, imported on first use (CuPy is an optional dependency)."""
    import cupy  # noqa: PLC0415 - optional dependency
    return cupy


def is_array(x):
    return isinstance(x, (np.ndarray, np.generic)) or is_cupy_array(x)


def asarray_like(x):
    """`x` as an array of its own backend (Python scalars become NumPy arrays)."""
    if is_array(x):
        return x
    return np.asarray(x)


def diagnose_impl_error(prim, args, kwargs, exc):
    """Turn a backend's failure on mixed NumPy/CuPy inputs into a DeviceMismatchError, and on
    complex inputs into an error naming the dtype (the tracer's implementation-error hook;
    fnad/__init__.py installs it)."""
    if isinstance(exc, DeviceMismatchError):
        return
    mixed = find_mixed_devices(args, kwargs)
    if mixed is not None:
        raise mixed_device_error(*mixed, op=prim.name) from exc
    _refuse_complex(prim, args, exc)


def _refuse_complex(prim, args, exc):
    """NumPy's "ufunc not supported for the input types" for a complex input, said with
    the function's name and the dtypes (as JAX refuses complex inputs it cannot take)."""
    if not (isinstance(exc, TypeError) and "not supported for the input types" in str(exc)):
        return
    dtypes = [getattr(getval(a), "dtype", None) for a in args]
    if not any(d is not None and d.kind == "c" for d in dtypes):
        return
    names = ", ".join(str(d) for d in dtypes if d is not None)
    raise TypeError(f"fnad.numpy.{prim.name}: complex inputs are not supported (NumPy has no "
                    f"{prim.name} for input dtypes {names}); apply it to fnp.real(z), "
                    "fnp.imag(z) or fnp.abs(z) instead.") from exc

