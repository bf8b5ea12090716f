"""Array methods and operators for tracers, so NumPy-style user code works under tracing.

They form the mixin class `ArrayTracerMethods`, which fnad/__init__.py registers on the
tracer base class with `fnad._core.tracer.register_array_methods`.
"""

import numpy as np

from .. import numpy as fnp
from .._core.tracer import PRIMITIVE_OF, Tracer, bind_traced, diagnose
from ._indexing import getitem, normalize_index


def _shape_args(shape):
    return shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d traced array")
    return (self[i] for i in range(self.shape[0]))


def _no_at(s):
    """JAX arrays have x.at[idx].set(v); fnad's arrays are NumPy's, which have none."""
    raise AttributeError(
        f"'{type(s).__name__}' object has no attribute 'at': fnad works on plain NumPy/CuPy "
        "arrays, which have no .at (JAX's x.at[idx].set(v)); use fnad.numpy.at(x)[idx].set(v) "
        "(also .add(v), .multiply(v)), which works on traced and plain arrays alike.")


def _index_text(idx):
    """`idx` as it would be written inside x[...], arrays shown as `idx`."""
    def one(i):
        if isinstance(i, slice):
            text = ":".join("" if b is None else str(b) for b in (i.start, i.stop))
            return text + ("" if i.step is None else f":{i.step}")
        if i is Ellipsis:
            return "..."
        if i is None or isinstance(i, (int, np.integer)):
            return repr(i if i is None else int(i))
        return "idx"
    return ", ".join(one(i) for i in (idx if isinstance(idx, tuple) else (idx,)))


def _setitem(s, idx, v):
    """In-place assignment would lose the derivative (and the trace): refused, naming the
    functional update that does it."""
    where = _index_text(idx)
    raise TypeError(
        f"'{type(s).__name__}' object does not support item assignment: a traced array is "
        f"immutable, so x[{where}] = v cannot be recorded. Write x = fnp.at(x)[{where}].set(v) "
        "instead (fnp is fnad.numpy; also .add(v), .multiply(v)): it returns the updated "
        "array and differentiates in x and v.")


_PROPERTIES = {
    "T": lambda s: fnp.transpose(s),
    "mT": lambda s: fnp.swapaxes(s, -1, -2),
    "real": lambda s: fnp.real(s),
    "imag": lambda s: fnp.imag(s),
    "at": _no_at,
}


_NO_KWARGS = {}


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NumPy's override protocol: a ufunc called on a tracer runs its fnad primitive."""
    prim = PRIMITIVE_OF.get(ufunc)
    if prim is None or method != "__call__":
        return NotImplemented
    if kwargs:
        return _ufunc_with_kwargs(prim, inputs, kwargs)
    return bind_traced(prim, inputs, _NO_KWARGS)


def _ufunc_with_kwargs(prim, inputs, kwargs):
    dtype = kwargs.pop("dtype", None)
    if (kwargs.get("out") is not None or kwargs.pop("where", True) is not True
            or any(k != "out" for k in kwargs)):
        raise TypeError(f"fnad.numpy.{prim.name}: {sorted(kwargs)} are not supported on traced "
                        "values (arrays are immutable under transforms); use the returned "
                        "array and fnad.numpy.where instead.")
    res = bind_traced(prim, inputs, _NO_KWARGS)
    return res if dtype is None else fnp.astype(res, dtype, copy=False)


def _operator(ufunc, reflected=False):
    """A tracer operator that binds the ufunc's primitive directly (no protocol detour)."""
    prim = PRIMITIVE_OF[ufunc]

    def op(s, o):
        args = (o, s) if reflected else (s, o)
        try:
            if isinstance(o, Tracer):  # bind_traced picks the innermost trace
                return bind_traced(prim, args, _NO_KWARGS)
            return s._trace.process(prim, args, _NO_KWARGS)
        except Exception as e:  # e.g. NumPy and CuPy arrays mixed: say so clearly
            diagnose(prim, args, _NO_KWARGS, e)
            raise
    return op


_METHODS = {
    "__add__": _operator(np.add),
    "__radd__": _operator(np.add, reflected=True),
    "__sub__": _operator(np.subtract),
    "__rsub__": _operator(np.subtract, reflected=True),
    "__mul__": _operator(np.multiply),
    "__rmul__": _operator(np.multiply, reflected=True),
    "__truediv__": _operator(np.divide),
    "__rtruediv__": _operator(np.divide, reflected=True),
    "__floordiv__": _operator(np.floor_divide),
    "__rfloordiv__": _operator(np.floor_divide, reflected=True),
    "__mod__": _operator(np.remainder),
    "__rmod__": _operator(np.remainder, reflected=True),
    "__pow__": _operator(np.power),
    "__rpow__": _operator(np.power, reflected=True),
    "__matmul__": _operator(np.matmul),
    "__rmatmul__": _operator(np.matmul, reflected=True),
    "__neg__": lambda s: s._trace.process(PRIMITIVE_OF[np.negative], (s,), _NO_KWARGS),
    "__pos__": lambda s: fnp.positive(s),  # a new array, as NumPy's
    "__abs__": lambda s: fnp.absolute(s),
    "__invert__": lambda s: fnp.invert(s),
    "__and__": lambda s, o: fnp.bitwise_and(s, o),
    "__rand__": lambda s, o: fnp.bitwise_and(o, s),
    "__or__": lambda s, o: fnp.bitwise_or(s, o),
    "__ror__": lambda s, o: fnp.bitwise_or(o, s),
    "__xor__": lambda s, o: fnp.bitwise_xor(s, o),
    "__eq__": _operator(np.equal),
    "__ne__": _operator(np.not_equal),
    "__lt__": _operator(np.less),
    "__le__": _operator(np.less_equal),
    "__gt__": _operator(np.greater),
    "__ge__": _operator(np.greater_equal),
    "__getitem__": lambda s, idx: getitem(s, normalize_index(idx)),
    "__setitem__": _setitem,
    "__iter__": _iter,
    "reshape": lambda s, *shape, order="C": fnp.reshape(s, _shape_args(shape), order),
    "transpose": lambda s, *axes: fnp.transpose(s, _shape_args(axes) if axes else None),
    "swapaxes": lambda s, a1, a2: fnp.swapaxes(s, a1, a2),
    "astype": lambda s, dtype, order="K", casting="unsafe", subok=True, copy=True: fnp.astype(
        s, dtype, copy=copy),
    "ravel": lambda s, order="C": fnp.ravel(s, order),
    "flatten": lambda s, order="C": fnp.copy(fnp.ravel(s, order)),  # always a copy, as NumPy's
    "squeeze": lambda s, axis=None: fnp.squeeze(s, axis),
    "sum": lambda s, axis=None, dtype=None, out=None, keepdims=False: fnp.sum(
        s, axis=axis, dtype=dtype, keepdims=keepdims),
    "mean": lambda s, axis=None, dtype=None, out=None, keepdims=False: fnp.mean(
        s, axis=axis, dtype=dtype, keepdims=keepdims),
    "max": lambda s, axis=None, out=None, keepdims=False: fnp.max(s, axis=axis,
                                                                  keepdims=keepdims),
    "min": lambda s, axis=None, out=None, keepdims=False: fnp.min(s, axis=axis,
                                                                  keepdims=keepdims),
    "prod": lambda s, axis=None, dtype=None, out=None, keepdims=False: fnp.prod(
        s, axis=axis, dtype=dtype, keepdims=keepdims),
    "var": lambda s, axis=None, dtype=None, out=None, ddof=0, keepdims=False: fnp.var(
        s, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims),
    "std": lambda s, axis=None, dtype=None, out=None, ddof=0, keepdims=False: fnp.std(
        s, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims),
    "cumsum": lambda s, axis=None, dtype=None: fnp.cumsum(s, axis=axis, dtype=dtype),
    "cumprod": lambda s, axis=None, dtype=None: fnp.cumprod(s, axis=axis, dtype=dtype),
    "clip": lambda s, min=None, max=None: fnp.clip(s, min, max),
    "dot": lambda s, o: fnp.dot(s, o),
    "argmax": lambda s, axis=None, keepdims=False: fnp.argmax(s, axis=axis, keepdims=keepdims),
    "argmin": lambda s, axis=None, keepdims=False: fnp.argmin(s, axis=axis, keepdims=keepdims),
    "argsort": lambda s, axis=-1: fnp.argsort(s, axis=axis),
    "round": lambda s, decimals=0: fnp.round(s, decimals),
    "conj": lambda s: fnp.conj(s),
    "conjugate": lambda s: fnp.conj(s),
    "copy": lambda s, order="C": fnp.copy(s),
    "item": lambda s, *a: s.value.item(*a),
    "tolist": lambda s: s.value.tolist(),
    "trace": lambda s, offset=0, axis1=0, axis2=1: fnp.trace(s, offset, axis1, axis2),
    "diagonal": lambda s, offset=0, axis1=0, axis2=1: fnp.diagonal(s, offset, axis1, axis2),
    "any": lambda s, axis=None, keepdims=False: fnp.any(s, axis=axis, keepdims=keepdims),
    "all": lambda s, axis=None, keepdims=False: fnp.all(s, axis=axis, keepdims=keepdims),
}


def _array_namespace(self, api_version=None):
    """The array API's namespace protocol: code below fnad.numpy (e.g. fnad.jacrev) finds
    the differentiable namespace of a traced value here."""
    return fnp


ArrayTracerMethods = type("ArrayTracerMethods", (), {
    "__doc__": "The array methods, operators and NumPy protocols of every tracer.",
    "__slots__": (),
    **_METHODS,
    **{name: property(f) for name, f in _PROPERTIES.items()},
    "__hash__": lambda s: id(s),  # __eq__ is elementwise; tracers still hash by identity
    "__array_ufunc__": _array_ufunc,
    "__array_namespace__": _array_namespace,
})
