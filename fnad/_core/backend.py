"""The array backends: NumPy always; a device (GPU) backend when one is registered.

Only this module and the `fnad.numpy` wrapper touch `numpy`/`cupy` directly
(as `xp`). Every other module asks `array_module(...)` for the module that
owns its arrays.

A device backend is an array library with CuPy's interface. CuPy is registered on first
use (the first time a GPU is asked for or a CuPy array is met) when it imports and sees a
CUDA device; `register_device_backend` is the one way in, for CuPy and for a stand-in with
the same interface (the simulated device of tests/simdevice), so both take the same
dispatch. fnad uses a device backend only through CuPy's names: its module `xp` (the
functions, `asarray`, `cuda.Device`, `cuda.runtime.getDeviceCount()`), its arrays
(`.get()`, `.device.id`) and `xpx`, its `cupyx` (`scipy.special`).
"""

import types

import numpy as np

from .tracer import Tracer, getval

__all__ = ["Array", "array_module", "cupy_or_none", "is_array", "asarray_like",
           "gpu_unavailable_reason", "DeviceMismatchError", "mixed_device_error",
           "find_mixed_devices", "describe_array", "diagnose_impl_error", "DeviceBackend",
           "register_device_backend", "unregister_device_backend", "device_backend",
           "backend_of", "is_device_array"]

_cupy = False  # not looked up yet
_cupy_reason = None


class DeviceBackend:
    """An array library on a device, as fnad uses it (see the module docstring).

    Attributes:
      name: what errors call it ("CuPy").
      xp: its array module.
      array_type: the type of its arrays.
      xpx: its `cupyx` module (given as the module or as a function returning it, called
        on first use).
    """

    __slots__ = ("name", "xp", "array_type", "_xpx")

    def __init__(self, name, xp, array_type, xpx=None):
        self.name, self.xp, self.array_type, self._xpx = name, xp, array_type, xpx

    @property
    def xpx(self):
        if isinstance(self._xpx, types.FunctionType):
            self._xpx = self._xpx()
        return self._xpx

    def __repr__(self):
        return f"DeviceBackend({self.name!r})"


_BACKENDS = []  # registered, oldest first; "gpu" means the last one
_BY_TYPE = {}  # array type -> its DeviceBackend


def register_device_backend(xp, array_type, *, name="CuPy", xpx=None, fallback=False):
    """Make arrays of `array_type` device ("gpu") arrays whose module is `xp`, and make it
    the backend that "gpu" names until it is unregistered (with `fallback`, only once every
    backend registered before it is). Returns the `DeviceBackend`.

    Example (what fnad does for CuPy on first use):
      register_device_backend(cupy, cupy.ndarray, name="CuPy", xpx=lambda: cupyx,
                              fallback=True)
    """
    backend = DeviceBackend(name, xp, array_type, xpx)
    if fallback:
        _BACKENDS.insert(0, backend)
        _BY_TYPE.setdefault(array_type, backend)
    else:
        _BACKENDS.append(backend)
        _BY_TYPE[array_type] = backend
    return backend


def unregister_device_backend(backend):
    """Undo `register_device_backend`: its arrays are no longer device arrays, and "gpu"
    names the backend registered before it (CuPy, looked up again, if none)."""
    _BACKENDS.remove(backend)
    if _BY_TYPE.get(backend.array_type) is backend:
        del _BY_TYPE[backend.array_type]
        for b in _BACKENDS:  # an older registration of the same type comes back
            _BY_TYPE.setdefault(b.array_type, b)


def device_backend():
    """The `DeviceBackend` that "gpu" names: the last registered; CuPy, looked up (and
    registered) once, when none is; None when there is no usable device."""
    if not _BACKENDS and _cupy is False:
        _lookup_cupy()
    return _BACKENDS[-1] if _BACKENDS else None


def _lookup_cupy():
    """Register CuPy (behind any backend already registered) if it imports and sees a
    GPU; else remember why not."""
    global _cupy, _cupy_reason
    try:
        cupy = cupy_module()
    except Exception as e:  # ImportError, or a broken CUDA install
        _cupy, _cupy_reason = None, f"CuPy is not installed or does not import ({e})"
        return
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        _cupy, _cupy_reason = None, f"CuPy imports but finds no usable CUDA device ({e})"
        return
    if n < 1:
        _cupy, _cupy_reason = None, "CuPy imports but reports 0 CUDA devices"
        return
    _cupy = cupy
    register_device_backend(cupy, cupy.ndarray, name="CuPy", xpx=_import_cupyx, fallback=True)


def _import_cupyx():
    import cupyx  # noqa: PLC0415 - optional dependency
    import cupyx.scipy.special  # noqa: PLC0415 - optional dependency
    return cupyx


def cupy_or_none():
    """The device array module ("gpu": CuPy, or a registered stand-in) if one can be used,
    else None."""
    backend = device_backend()
    return None if backend is None else backend.xp


def gpu_unavailable_reason():
    """None when a GPU can be used, else a sentence saying why not."""
    return None if device_backend() is not None else _cupy_reason


def backend_of(x):
    """The `DeviceBackend` owning array `x`, or None (NumPy arrays, scalars, tracers)."""
    t = type(x)
    if t is np.ndarray:
        return None
    backend = _BY_TYPE.get(t)
    if (backend is None and _cupy is False and t.__name__ == "ndarray"
            and t.__module__.startswith("cupy")):
        _lookup_cupy()  # a CuPy array met before any GPU was asked for
        backend = _BY_TYPE.get(t)
    return backend


def is_device_array(x):
    """True for an array of a device backend (a CuPy array)."""
    return backend_of(x) is not None




class DeviceMismatchError(ValueError):
    """An operation received arrays that live on different devices (NumPy and a device)."""


def describe_array(x):
    """'a NumPy (cpu) float32 array of shape (3, 4)' style description of a backend array."""
    backend = backend_of(x)
    if backend is not None:
        dev = getattr(getattr(x, "device", None), "id", 0)
        where = f"a {backend.name} (gpu:{dev})"
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
            elif is_device_array(x):
                cp_arr = x if cp_arr is None else cp_arr
    if np_arr is not None and cp_arr is not None:
        return np_arr, cp_arr
    return None


def array_module(*args):
    """`numpy` or the device module (`cupy`), by the arrays among `args` (tracers are looked
    through).

    Mixing NumPy and device arrays raises a DeviceMismatchError (a ValueError) that names
    both devices and says how to move the arrays.
    """
    np_arr = dev_arr = None
    for a in args:
        a = getval(a)
        if isinstance(a, np.ndarray):
            if dev_arr is not None:
                raise mixed_device_error(a, dev_arr)
            np_arr = a
            continue
        if isinstance(a, Tracer):  # staged: only its abstract value knows the device
            if a.aval.xp is not np:
                return a.aval.xp
            continue
        backend = backend_of(a)
        if backend is not None:
            if np_arr is not None:
                raise mixed_device_error(np_arr, a)
            dev_arr, xp = a, backend.xp
    return np if dev_arr is None else xp


def cupy_module():
    """The `cupy` module, imported on first use (CuPy is an optional dependency)."""
    import cupy  # noqa: PLC0415 - optional dependency
    return cupy


def is_array(x):
    return isinstance(x, (np.ndarray, np.generic)) or is_device_array(x)


class _ArrayMeta(type):
    def __instancecheck__(cls, x):
        return isinstance(x, Tracer) or is_array(x)


class Array(metaclass=_ArrayMeta):
    """What JAX calls `jax.Array`, for `isinstance` checks and annotations: a NumPy array or
    scalar (fnad's reductions return NumPy scalars where JAX returns 0-d arrays), a device
    (CuPy) array, or a traced value inside a transform. fnad has no array type of its own;
    nothing is ever an instance made from this class.

    Example:
      isinstance(fnad.numpy.arange(5), fnad.Array)     # True
    """

    def __new__(cls, *args, **kwargs):
        raise TypeError("fnad.Array is not constructed: fnad's arrays are NumPy's or CuPy's; "
                        "make one with fnad.numpy.asarray(x).")


def asarray_like(x):
    """`x` as an array of its own backend (Python scalars become NumPy arrays)."""
    if is_array(x):
        return x
    return np.asarray(x)


def diagnose_impl_error(prim, args, kwargs, exc):
    """Turn a backend's failure on mixed NumPy/device inputs into a DeviceMismatchError, and on
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

