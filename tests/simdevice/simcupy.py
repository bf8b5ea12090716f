"""The simulated device's array module: CuPy's namespace, computed by NumPy on the host.

Each name CuPy has (tests/simdevice/cupy_api.py, read from CuPy's sources) is NumPy's
function of that name behind CuPy's rules: it takes device arrays, Python and NumPy scalars
(a NumPy array raises TypeError, as CuPy's kernels refuse host memory), takes only the
parameters CuPy's function has (a keyword CuPy lacks raises TypeError), and returns device
arrays (0-d ones where NumPy returns a scalar). A name CuPy lacks is missing here too, so
NumPy's dispatch raises TypeError for it as it would on a GPU. Ufuncs take CuPy's keywords
(`out`, `dtype`, `casting`; no `where`) and methods (`at` only for add and subtract,
`reduce`/`accumulate` only for add and multiply). Data moves only by `asarray`/`array` of
host data and `asnumpy`/`.get()`, and every move is counted (`_transfers`).
"""

import builtins
import inspect
import sys
import types

import numpy as np

from . import _array
from ._array import ndarray, unsupported, unwrap, wrap
from ._transfers import TO_DEVICE, TO_HOST, record
from .cupy_api import API

try:  # cupyx.scipy.special's functions are SciPy's (a test dependency) on the host
    import scipy.special as _scipy_special
except ImportError:  # pragma: no cover
    _scipy_special = None

__all__ = ["ndarray", "asarray", "array", "asnumpy", "get_array_module", "cuda", "linalg", "fft",
           "ufunc", "DEVICE_COUNT"]

DEVICE_COUNT = 1
_UFUNC_KEYWORDS = {"out", "dtype", "casting"}
_SCATTER = {"add", "subtract", "bitwise_and", "bitwise_or", "bitwise_xor"}  # ufunc.at
# Functions that read no values, only dtypes and shapes: host arrays are fine there.
_METADATA = {"result_type", "can_cast", "shape", "ndim", "size", "iscomplexobj", "isrealobj",
             "isscalar", "common_type", "may_share_memory", "shares_memory"}
# Functions whose result's size depends on values: CuPy reads it back (a synchronisation).
_SIZE_FROM_VALUES = {"nonzero", "argwhere", "flatnonzero", "unique", "extract", "compress",
                     "trim_zeros", "bincount", "setdiff1d", "intersect1d", "union1d"}
# NumPy returns a Python bool, CuPy a 0-d device array.
_ARRAY_RESULT = {"allclose", "array_equal", "array_equiv"}


def _signature(params):
    ns = {"_": None}
    exec(f"def f{params}: pass", ns)
    return inspect.signature(ns["f"])


def _check_call(qualname, signature, args, kwargs):
    if signature is not None:
        try:
            signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{qualname}(): {e} (CuPy's parameters are "
                            f"{', '.join(signature.parameters)})") from None


def _lenient(obj):
    """`unwrap` that lets host arrays through (functions reading dtypes and shapes only)."""
    t = type(obj)
    if t is ndarray:
        return obj._data
    if t is tuple or t is list:
        return t(_lenient(o) for o in obj)
    return obj


class ufunc:
    """A CuPy ufunc: NumPy's, with CuPy's keywords and methods."""

    def __init__(self, np_ufunc, name):
        self._np = np_ufunc
        self.__name__ = name
        self.nin, self.nout, self.nargs = np_ufunc.nin, np_ufunc.nout, np_ufunc.nargs
        self.types, self.ntypes, self.identity = np_ufunc.types, np_ufunc.ntypes, \
            np_ufunc.identity

    def __repr__(self):
        return f"<ufunc 'cupy_{self.__name__}'>"

    def __call__(self, *args, **kwargs):
        if set(kwargs) - _UFUNC_KEYWORDS:
            raise TypeError(f"Wrong arguments {kwargs}")
        for a in args:
            if not isinstance(a, (ndarray, int, float, complex, np.generic)):
                raise unsupported(a)
        out = kwargs.get("out")
        if out is not None:
            if type(out) is not ndarray:
                raise TypeError(f"Output arrays must be cupy.ndarray, got {type(out)}")
            kwargs = dict(kwargs, out=out._data)
        res = self._np(*unwrap(args), **kwargs)
        return out if out is not None else wrap(res)

    def at(self, a, indices, b=None):
        if self.__name__ not in _SCATTER:
            raise NotImplementedError(f"`cupy_{self.__name__}.at` is not supported yet")
        if type(a) is not ndarray:
            raise unsupported(a)
        if b is not None and not isinstance(b, (ndarray, int, float, complex, np.generic)):
            raise unsupported(b)
        args = () if b is None else (unwrap(b),)
        self._np.at(a._data, _array._index(indices, False), *args)

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False):
        name = {"add": "sum", "multiply": "prod"}.get(self.__name__)
        if name is None:
            raise NotImplementedError(f"`cupy_{self.__name__}.reduce` is not supported yet")
        return getattr(array, name)(axis, dtype, out, keepdims)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        name = {"add": "cumsum", "multiply": "cumprod"}.get(self.__name__)
        if name is None:
            raise NotImplementedError(f"`cupy_{self.__name__}.accumulate` is not supported yet")
        return getattr(array, name)(axis, dtype, out)

    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        if self.__name__ != "add":
            raise NotImplementedError(f"`cupy_{self.__name__}.reduceat` is not supported yet")
        return wrap(np.add.reduceat(unwrap(array), unwrap(indices), axis, dtype))

    def outer(self, A, B, **kwargs):
        return self(A.reshape(A.shape + (1,) * B.ndim), B.reshape((1,) * A.ndim + B.shape),
                    **kwargs)


def function(qualname, np_fn, params):
    """CuPy's function `qualname`: NumPy's `np_fn` under CuPy's rules (module docstring)."""
    signature = None if params is None else _signature(params)
    name = qualname.rpartition(".")[2]
    lenient = name in _METADATA
    size_from_values = name in _SIZE_FROM_VALUES
    array_result = name in _ARRAY_RESULT

    def f(*args, **kwargs):
        _check_call(qualname, signature, args, kwargs)
        if lenient:
            out = np_fn(*_lenient(args), **_lenient(kwargs))
            return out
        out = np_fn(*unwrap(args), **unwrap(kwargs))
        if size_from_values or (name in ("where", "repeat") and _sizes_from_values(name, args)):
            record(TO_HOST, f"{qualname}: the size of its result is read back")
        if array_result:
            out = np.asarray(out)
        return wrap(out)
    f.__name__ = name
    f.__qualname__ = qualname
    f.__doc__ = f"cupy.{name} as the simulated device runs it: numpy.{name} on device arrays."
    return f


def _sizes_from_values(name, args):
    if name == "where":
        return len(args) == 1
    return len(args) > 1 and isinstance(args[1], ndarray) and args[1].ndim > 0


# ----------------------------------------------------------------------------- transfers


def asarray(a, dtype=None, order=None, *, blocking=False):
    """`a` on the device: device arrays as they are (cast if `dtype` differs); host data is
    copied in (one counted transfer)."""
    if type(a) is ndarray:
        return a if dtype is None or np.dtype(dtype) == a.dtype else a.astype(dtype)
    return _from_host(a, dtype, order or "K", 0)


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    """A new device array from `obj` (a device array is copied on the device)."""
    if type(obj) is ndarray:
        data = np.array(obj._data, dtype=dtype, copy=copy, order=order, ndmin=ndmin)
        return obj if data is obj._data else ndarray._new(data)
    return _from_host(obj, dtype, order, ndmin)


def _from_host(a, dtype, order, ndmin):
    if isinstance(a, (list, tuple)) and _holds_device(a):  # stacked on the device
        return wrap(np.array(unwrap(a), dtype=dtype, order=order, ndmin=ndmin))
    record(TO_DEVICE, f"asarray of host data ({type(a).__name__})")
    return ndarray._new(np.array(a, dtype=dtype, order=order, ndmin=ndmin, copy=True))


def _holds_device(a):
    # (the builtin: this module's globals hold CuPy's `any`, `all`, `sum`, ...)
    return builtins.any(type(x) is ndarray or (isinstance(x, (list, tuple)) and
                                              _holds_device(x)) for x in a)


def ascontiguousarray(a, dtype=None):
    if type(a) is ndarray:
        return ndarray._new(np.ascontiguousarray(a._data, dtype=dtype))
    return _from_host(np.ascontiguousarray(a, dtype=dtype), None, "C", 0)


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
    """`a` on the host: a device array is copied out (one counted transfer)."""
    if type(a) is ndarray:
        return a.get(order=order, out=out)
    return np.asarray(a, order=order)


def get_array_module(*args):
    return sys.modules[__name__] if builtins.any(type(a) is ndarray for a in args) else np


class _NoCUDA:
    """CUDA source cannot run on the simulated device."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"the simulated device runs no CUDA source "
                                  f"({type(self).__name__}); test the kernel on a GPU "
                                  "(benchmarks/gpu_check.sh) or with its CPU emulation "
                                  "(tests/backend/test_kernel_emulation.py).")


class RawKernel(_NoCUDA):
    pass


class RawModule(_NoCUDA):
    pass


class ElementwiseKernel(_NoCUDA):
    pass


# ----------------------------------------------------------------------------- cuda


class Device:
    """A simulated CUDA device: `with Device(i):` makes new arrays live on device i."""

    def __init__(self, device=None):
        self.id = _array._STATE["device"] if device is None else int(device)
        if not 0 <= self.id < DEVICE_COUNT:
            raise ValueError(f"invalid device ordinal {self.id} (the simulated machine has "
                             f"{DEVICE_COUNT})")
        self._prev = []

    def __enter__(self):
        self._prev.append(_array._STATE["device"])
        _array._STATE["device"] = self.id
        return self

    def __exit__(self, *exc):
        _array._STATE["device"] = self._prev.pop()

    def use(self):
        _array._STATE["device"] = self.id

    def synchronize(self):
        pass

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


class _Stream:
    def synchronize(self):
        pass


cuda = types.ModuleType(__name__ + ".cuda", "The simulated CUDA runtime: device count, Device.")
cuda.Device = Device
cuda.is_available = lambda: True
cuda.get_current_stream = lambda: _Stream()
cuda.runtime = types.SimpleNamespace(getDeviceCount=lambda: DEVICE_COUNT,
                                     runtimeGetVersion=lambda: 13000,
                                     driverGetVersion=lambda: 13000)


def is_available():
    return True


# ----------------------------------------------------------------------------- the namespace


def _namespace(modname, np_module):
    """The functions and ufuncs of CuPy module `modname` with a counterpart in `np_module`."""
    out = {}
    for name, entry in API[modname].items():
        kind = entry[0]
        if kind == "numpy":
            out[name] = getattr(np, entry[1])
            continue
        np_obj = getattr(np_module, name, None) if np_module is not None else None
        if np_obj is None or isinstance(np_obj, (type, types.ModuleType)):
            continue
        if kind == "ufunc" or isinstance(np_obj, np.ufunc):
            out[name] = ufunc(np_obj, name) if isinstance(np_obj, np.ufunc) else \
                function(f"{modname}.{name}", np_obj, None)
        elif callable(np_obj):
            out[name] = function(f"{modname}.{name}", np_obj,
                                 entry[1] if kind == "function" else None)
    return out


def _module(name, doc, members):
    m = types.ModuleType(f"{__name__}.{name}", doc)
    m.__dict__.update(members)
    return m


globals().update({k: v for k, v in _namespace("cupy", np).items() if k not in globals()})
linalg = _module("linalg", "cupy.linalg on the simulated device.",
                 _namespace("cupy.linalg", np.linalg))
fft = _module("fft", "cupy.fft on the simulated device.", _namespace("cupy.fft", np.fft))
special = _module("special", "cupyx.scipy.special on the simulated device.",
                  _namespace("cupyx.scipy.special", _scipy_special))

for _name, _entry in API["ndarray"].items():
    if _entry[0] == "function" and _name not in vars(ndarray) and hasattr(np.ndarray, _name):
        setattr(ndarray, _name, _array.method(
            _name, None if _entry[1] is None else _signature(_entry[1])))
_array._STATE["xp"] = sys.modules[__name__]
_array._STATE["special"] = special
del _name, _entry
