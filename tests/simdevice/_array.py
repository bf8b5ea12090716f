"""The simulated device's array: NumPy data behind CuPy's rules.

`ndarray` holds a NumPy array (`_data`, never shared with a host array) and a device id. It
behaves as `cupy.ndarray` does where CuPy and NumPy differ (cupy/_core/core.pyx):

- no implicit conversion to NumPy: `np.asarray(x)` raises TypeError (`__array__`);
- NumPy's functions and ufuncs dispatch to the simulated module through
  `__array_function__` / `__array_ufunc__` exactly as CuPy's do (a name the module lacks
  makes NumPy raise TypeError), and a NumPy array among the operands is refused;
- every result is a device array: reductions and `x[i]` give 0-d arrays, never NumPy
  scalars;
- reading values on the host (`float(x)`, `bool(x)`, `x.item()`, `repr(x)`, `.get()`) and
  host data coming in (a NumPy index array) are transfers, counted by `_transfers`.
"""

import functools
import warnings

import numpy as np

from ._transfers import TO_DEVICE, TO_HOST, record

_STATE = {"xp": None, "special": None, "device": 0}  # the module, set when it is built
_SCALARS = (int, float, bool, complex, np.generic)
_COMPARISONS = {"greater", "greater_equal", "less", "less_equal", "equal", "not_equal"}


def unsupported(x):
    return TypeError(f"Unsupported type {type(x)}")


def unwrap(obj):
    """`obj` with every device array replaced by its data, in lists, tuples and dicts too; a
    NumPy array raises TypeError, as CuPy's kernels refuse host memory."""
    t = type(obj)
    if t is ndarray:
        return obj._data
    if t is np.ndarray:
        raise unsupported(obj)
    if t is tuple or t is list:
        return t(unwrap(o) for o in obj)
    if t is dict:
        return {k: unwrap(v) for k, v in obj.items()}
    return obj


def wrap(out):
    """A NumPy result as device arrays (NumPy scalars become 0-d arrays; tuples, named ones
    included, become plain tuples, as CuPy returns them)."""
    if type(out) is np.ndarray:
        return ndarray._new(out)
    if isinstance(out, np.generic):
        return ndarray._new(np.asarray(out))
    if isinstance(out, tuple):
        return tuple(wrap(o) for o in out)
    if type(out) is list:
        return [wrap(o) for o in out]
    return out


def _index(idx, getting):
    """An index with device arrays unwrapped; host index arrays are copied in (counted)."""
    if type(idx) is tuple:
        return tuple(_index(i, getting) for i in idx)
    if type(idx) is ndarray:
        if getting and idx.dtype == bool:
            record(TO_HOST, "boolean mask index (the result's size is read back)")
        return idx._data
    if type(idx) is np.ndarray or type(idx) is list:
        record(TO_DEVICE, f"a host index ({type(idx).__name__})")
        return np.asarray(idx)
    return idx


def _should_use_rop(x, y):
    y_ufunc = getattr(y, "__array_ufunc__", _should_use_rop)
    if y_ufunc is not _should_use_rop:
        return y_ufunc is None
    return getattr(x, "__array_priority__", 0) < getattr(y, "__array_priority__", 0)


def _binary(name):
    def op(x, y):
        if isinstance(y, ndarray):
            return getattr(_STATE["xp"], name)(x, y)
        if _should_use_rop(x, y):
            return NotImplemented
        return getattr(np, name)(x, y)

    def rop(y, x):
        if _should_use_rop(y, x):
            return NotImplemented
        return getattr(np, name)(x, y)

    def iop(x, y):
        return getattr(_STATE["xp"], name)(x, y, out=x)
    return op, rop, iop


class ndarray:
    """A device array of the simulated device (see the module docstring)."""

    __slots__ = ("_data", "_device")
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, shape, dtype=float):
        self._data = np.empty(shape, dtype)
        self._device = _STATE["device"]

    @classmethod
    def _new(cls, data, device=None):
        x = object.__new__(cls)
        x._data = data
        x._device = _STATE["device"] if device is None else device
        return x

    # ------------------------------------------------------------------ attributes
    shape = property(lambda self: self._data.shape)
    dtype = property(lambda self: self._data.dtype)
    ndim = property(lambda self: self._data.ndim)
    size = property(lambda self: self._data.size)
    itemsize = property(lambda self: self._data.itemsize)
    nbytes = property(lambda self: self._data.nbytes)
    strides = property(lambda self: self._data.strides)
    flags = property(lambda self: self._data.flags)
    T = property(lambda self: ndarray._new(self._data.T, self._device))
    mT = property(lambda self: ndarray._new(self._data.mT, self._device))
    base = None

    @property
    def real(self):
        return ndarray._new(self._data.real, self._device)

    @real.setter
    def real(self, value):
        self._data.real = unwrap(value)

    @property
    def imag(self):
        return ndarray._new(self._data.imag, self._device)

    @imag.setter
    def imag(self, value):
        self._data.imag = unwrap(value)

    @property
    def device(self):
        return _STATE["xp"].cuda.Device(self._device)

    @property
    def data(self):
        """The memory pointer (`.ptr`), as CuPy's MemoryPointer has it."""
        return type("MemoryPointer", (), {"ptr": self._data.ctypes.data})()

    # ------------------------------------------------------------------ transfers
    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def get(self, stream=None, order="C", out=None, blocking=True):
        record(TO_HOST, f"get() of {self._describe()}")
        if out is not None:
            out[...] = self._data
            return out
        return np.array(self._data, order=order, copy=True)

    def item(self):
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        record(TO_HOST, f"item() of {self._describe()}")
        return self._data.item()

    def tolist(self):
        record(TO_HOST, f"tolist() of {self._describe()}")
        return self._data.tolist()

    def tobytes(self, order="C"):
        record(TO_HOST, f"tobytes() of {self._describe()}")
        return self._data.tobytes(order)

    def _scalar(self, kind):
        record(TO_HOST, f"{kind}() of {self._describe()}")
        return _CONVERSIONS[kind](self._data)

    def __int__(self):
        return self._scalar("int")

    def __float__(self):
        return self._scalar("float")

    def __complex__(self):
        return self._scalar("complex")

    def __bool__(self):
        if self.size == 0:
            warnings.warn("The truth value of an empty array is ambiguous. Returning False, "
                          "but in future this will result in an error. Use `array.size > 0` "
                          "to check that an array is not empty.", DeprecationWarning)
            return False
        if self.size == 1:
            return self._scalar("bool")
        raise ValueError("The truth value of an array with more than one element is "
                         "ambiguous. Use a.any() or a.all()")

    def __repr__(self):
        record(TO_HOST, f"repr() of {self._describe()}")
        return repr(self._data)

    def __str__(self):
        record(TO_HOST, f"str() of {self._describe()}")
        return str(self._data)

    def __format__(self, spec):
        record(TO_HOST, f"format() of {self._describe()}")
        return format(self._data, spec)

    def __reduce__(self):
        return _STATE["xp"].array, (self.get(),)

    def _describe(self):
        return f"a {self.dtype} array of shape {self.shape}"

    # ------------------------------------------------------------------ containers
    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, slices):
        return wrap(self._data[_index(slices, True)])

    def __setitem__(self, slices, value):
        if type(value) is np.ndarray or type(value) is list:
            record(TO_DEVICE, f"a host value ({type(value).__name__}) assigned into the device")
            value = np.asarray(value)
        elif type(value) is ndarray:
            value = value._data
        self._data[_index(slices, False)] = value

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    # ------------------------------------------------------------------ dispatch
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inout = inputs
        if "out" in kwargs:
            out = kwargs["out"]
            if len(out) != 1:
                raise ValueError("The 'out' parameter must have exactly one array value")
            inout += out
            kwargs["out"] = out[0]
        if method not in ("__call__", "outer", "at", "reduce", "accumulate", "reduceat"):
            return NotImplemented
        name = ufunc.__name__
        func = getattr(_STATE["xp"], name, None) or getattr(_STATE["special"], name, None)
        if func is None:
            return NotImplemented
        if method != "__call__":
            func = getattr(func, method, None)
            if func is None:
                return NotImplemented
        for x in inout:
            if not (isinstance(x, _SCALARS) or isinstance(x, (ndarray, np.ndarray))):
                return NotImplemented
        if name in _COMPARISONS:
            inputs = tuple(x.item() if type(x) is np.ndarray and x.ndim == 0 else x
                           for x in inputs)
        return func(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        try:
            module = functools.reduce(getattr, func.__module__.split(".")[1:], _STATE["xp"])
            fn = getattr(module, func.__name__)
        except AttributeError:
            return NotImplemented
        if fn is func:
            return NotImplemented
        for t in types:
            if not issubclass(t, (ndarray, np.ndarray)):
                return NotImplemented
        return fn(*args, **kwargs)

    # ------------------------------------------------------------------ comparisons
    def _compare(self, other, name):
        if isinstance(other, ndarray):
            return getattr(_STATE["xp"], name)(self, other)
        if _should_use_rop(self, other):
            return NotImplemented
        if type(other) is np.ndarray and other.ndim == 0:
            other = other.item()
        if name in ("equal", "not_equal") and (other is None or (
                type(other).__eq__ is object.__eq__)):
            fill = _STATE["xp"].ones if name == "not_equal" else _STATE["xp"].zeros
            return fill(self.shape, dtype=bool)
        return getattr(np, name)(self, other)

    def __eq__(self, other):
        return self._compare(other, "equal")

    def __ne__(self, other):
        return self._compare(other, "not_equal")

    def __lt__(self, other):
        return self._compare(other, "less")

    def __le__(self, other):
        return self._compare(other, "less_equal")

    def __gt__(self, other):
        return self._compare(other, "greater")

    def __ge__(self, other):
        return self._compare(other, "greater_equal")

    # ------------------------------------------------------------------ arithmetic
    def __neg__(self):
        return _STATE["xp"].negative(self)

    def __pos__(self):
        return _STATE["xp"].positive(self)

    def __abs__(self):
        return _STATE["xp"].absolute(self)

    def __invert__(self):
        return _STATE["xp"].invert(self)

    __add__, __radd__, __iadd__ = _binary("add")
    __sub__, __rsub__, __isub__ = _binary("subtract")
    __mul__, __rmul__, __imul__ = _binary("multiply")
    __truediv__, __rtruediv__, __itruediv__ = _binary("true_divide")
    __floordiv__, __rfloordiv__, __ifloordiv__ = _binary("floor_divide")
    __mod__, __rmod__, __imod__ = _binary("remainder")
    __pow__, __rpow__, __ipow__ = _binary("power")
    __matmul__, __rmatmul__, _imatmul = _binary("matmul")
    __lshift__, __rlshift__, __ilshift__ = _binary("left_shift")
    __rshift__, __rrshift__, __irshift__ = _binary("right_shift")
    __and__, __rand__, __iand__ = _binary("bitwise_and")
    __or__, __ror__, __ior__ = _binary("bitwise_or")
    __xor__, __rxor__, __ixor__ = _binary("bitwise_xor")
    __divmod__, __rdivmod__, _idivmod = _binary("divmod")


_CONVERSIONS = {"int": int, "float": float, "complex": complex, "bool": bool}


def method(name, signature):
    """A method of `ndarray` running NumPy's method of the same name on the data, with
    CuPy's parameters (`signature`, None when unknown)."""
    def m(self, *args, **kwargs):
        if signature is not None:
            try:
                signature.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"cupy.ndarray.{name}(): {e} (CuPy's parameters are "
                                f"{', '.join(signature.parameters)})") from None
        out = getattr(self._data, name)(*unwrap(args), **unwrap(kwargs))
        if out is self._data:
            return self
        return wrap(out)
    m.__name__ = name
    return m
