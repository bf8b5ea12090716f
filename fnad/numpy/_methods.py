"""Array methods and operators for tracers, so NumPy-style user code works under tracing."""

from .. import numpy as fnp
from .._tracer import Tracer
from ._indexing import getitem, normalize_index


def _shape_args(shape):
    return shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d traced array")
    return (self[i] for i in range(self.shape[0]))


_METHODS = {
    "__add__": lambda s, o: fnp.add(s, o),
    "__radd__": lambda s, o: fnp.add(o, s),
    "__sub__": lambda s, o: fnp.subtract(s, o),
    "__rsub__": lambda s, o: fnp.subtract(o, s),
    "__mul__": lambda s, o: fnp.multiply(s, o),
    "__rmul__": lambda s, o: fnp.multiply(o, s),
    "__truediv__": lambda s, o: fnp.divide(s, o),
    "__rtruediv__": lambda s, o: fnp.divide(o, s),
    "__floordiv__": lambda s, o: fnp.floor_divide(s, o),
    "__rfloordiv__": lambda s, o: fnp.floor_divide(o, s),
    "__mod__": lambda s, o: fnp.mod(s, o),
    "__rmod__": lambda s, o: fnp.mod(o, s),
    "__pow__": lambda s, o: fnp.power(s, o),
    "__rpow__": lambda s, o: fnp.power(o, s),
    "__matmul__": lambda s, o: fnp.matmul(s, o),
    "__rmatmul__": lambda s, o: fnp.matmul(o, s),
    "__neg__": lambda s: fnp.negative(s),
    "__pos__": lambda s: s,
    "__abs__": lambda s: fnp.absolute(s),
    "__invert__": lambda s: fnp.invert(s),
    "__and__": lambda s, o: fnp.bitwise_and(s, o),
    "__rand__": lambda s, o: fnp.bitwise_and(o, s),
    "__or__": lambda s, o: fnp.bitwise_or(s, o),
    "__ror__": lambda s, o: fnp.bitwise_or(o, s),
    "__xor__": lambda s, o: fnp.bitwise_xor(s, o),
    "__eq__": lambda s, o: fnp.equal(s, o),
    "__ne__": lambda s, o: fnp.not_equal(s, o),
    "__lt__": lambda s, o: fnp.less(s, o),
    "__le__": lambda s, o: fnp.less_equal(s, o),
    "__gt__": lambda s, o: fnp.greater(s, o),
    "__ge__": lambda s, o: fnp.greater_equal(s, o),
    "__getitem__": lambda s, idx: getitem(s, normalize_index(idx)),
    "__iter__": _iter,
    "reshape": lambda s, *shape, order="C": fnp.reshape(s, _shape_args(shape), order),
    "transpose": lambda s, *axes: fnp.transpose(s, _shape_args(axes) if axes else None),
    "swapaxes": lambda s, a1, a2: fnp.swapaxes(s, a1, a2),
    "astype": lambda s, dtype, **k: fnp.astype(s, dtype),
    "ravel": lambda s, order="C": fnp.ravel(s, order),
    "flatten": lambda s, order="C": fnp.ravel(s, order),
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
    "copy": lambda s: s,
    "item": lambda s, *a: s.value.item(*a),
    "tolist": lambda s: s.value.tolist(),
    "trace": lambda s, offset=0, axis1=0, axis2=1: fnp.trace(s, offset, axis1, axis2),
    "diagonal": lambda s, offset=0, axis1=0, axis2=1: fnp.diagonal(s, offset, axis1, axis2),
    "any": lambda s, axis=None, keepdims=False: fnp.any(s, axis=axis, keepdims=keepdims),
    "all": lambda s, axis=None, keepdims=False: fnp.all(s, axis=axis, keepdims=keepdims),
}

_PROPERTIES = {
    "T": lambda s: fnp.transpose(s),
    "mT": lambda s: fnp.swapaxes(s, -1, -2),
    "real": lambda s: fnp.real(s),
    "imag": lambda s: fnp.imag(s),
}


def install():
    for name, f in _METHODS.items():
        setattr(Tracer, name, f)
    for name, f in _PROPERTIES.items():
        setattr(Tracer, name, property(f))
    Tracer.__hash__ = lambda s: id(s)
