"""linspace, logspace and geomspace, differentiable in their endpoints (and logspace in its
base): on plain NumPy values NumPy's own functions; with a traced or device start, stop or
base (CuPy has no geomspace) the same formulas written in fnad.numpy (NumPy 2's), so the
samples are linear in start and stop: y_k = start + k (stop - start) / div, with the last
sample exactly `stop` when endpoint. Numbers among them are made on the device of the others."""

import numpy as np

from .. import numpy as fnp
from ._creation import _holds_value, asarrays
from .._core.backend import array_module
from .._core.tracer import getval
from ._util import const_of, dtype_of, ndim, values_hidden

__all__ = ["linspace", "logspace", "geomspace"]


def _count(num, fname):
    num = int(num)  # NumPy: an integer number of samples
    if num < 0:
        raise ValueError(f"fnad.numpy.{fname}: number of samples, {num}, must be "
                         "non-negative.")
    return num


def _float_dtype(*xs):
    return np.result_type(*(dtype_of(x) for x in xs), np.float16)


def _row(v, y):
    """`v` as one more row of `y` (broadcast to y's other axes)."""
    return fnp.broadcast_to(fnp.expand_dims(v, 0), (1,) + fnp.shape(y)[1:])


def _finish(y, dtype, axis):
    if axis != 0:
        y = fnp.moveaxis(y, 0, axis)
    if dtype is None:
        return y
    if np.issubdtype(np.dtype(dtype), np.integer):
        y = fnp.floor(y)
    return fnp.astype(y, dtype, copy=False)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """`num` evenly spaced samples from `start` to `stop` (the last excluded without
    `endpoint`), as `numpy.linspace`; array endpoints give one sequence per entry along
    `axis`. Differentiable in start and stop (linear in both).

    Example:
      fnad.grad(lambda a: fnp.sum(fnp.linspace(a, 2.0, 5)))(1.0)   # 2.5
    """
    if not (_holds_value(start) or _holds_value(stop)):  # NumPy's own on plain values
        kw = {} if device is None else {"device": device}
        return np.linspace(start, stop, num, endpoint, retstep, dtype, axis, **kw)
    num = _count(num, "linspace")
    start, stop = asarrays(start, stop)  # a number endpoint made on the other's device
    dt = _float_dtype(start, stop)
    start, stop = fnp.astype(start, dt, copy=False), fnp.astype(stop, dt, copy=False)
    div = (num - 1) if endpoint else num
    delta = stop - start
    k = array_module(delta).arange(num, dtype=dt).reshape((-1,) + (1,) * ndim(delta))
    if div > 0:
        step = delta / div
        y = k * step + start
    else:  # no step: 0 samples, or 1 with endpoint
        step = np.nan
        y = k * delta + start
    if endpoint and num > 1:
        y = fnp.concatenate([y[:-1], _row(stop, y)], axis=0)
    y = _finish(y, dtype, axis)
    return (y, step) if retstep else y


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop, num, endpoint), as `numpy.logspace`; differentiable in
    start, stop and base.

    Example:
      fnp.logspace(0.0, 2.0, 3)   # [1., 10., 100.]
    """
    if not (_holds_value(start) or _holds_value(stop) or _holds_value(base)):
        return np.logspace(start, stop, num, endpoint, base, dtype, axis)
    start, stop, base = asarrays(start, stop, base)
    nd = max(ndim(start), ndim(stop), ndim(base))
    start, stop, base = (fnp.reshape(a, (1,) * (nd - ndim(a)) + fnp.shape(a))
                         for a in (start, stop, base))
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    y = fnp.power(fnp.expand_dims(base, axis), y)
    return y if dtype is None else fnp.astype(y, dtype, copy=False)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Samples spaced evenly on a log scale from `start` to `stop` (same sign, or complex),
    as `numpy.geomspace`; differentiable in start and stop. A zero endpoint raises a
    ValueError, except on a device or under jit, where values are not read (the result then
    holds NaN or infinities).

    Example:
      fnp.geomspace(1.0, 1000.0, 4)   # [1., 10., 100., 1000.]
    """
    if not (_holds_value(start) or _holds_value(stop)):  # CuPy has no geomspace
        return np.geomspace(start, stop, num, endpoint, dtype, axis)
    num = _count(num, "geomspace")
    start, stop = asarrays(start, stop)
    if not values_hidden(start) and not values_hidden(stop) and (  # jit, device: not read
            np.any(getval(start) == 0) or np.any(getval(stop) == 0)):
        raise ValueError("fnad.numpy.geomspace: a geometric sequence cannot include zero.")
    dt = _float_dtype(start, stop)
    start, stop = fnp.astype(start, dt, copy=False), fnp.astype(stop, dt, copy=False)
    # Turn start onto the positive real axis and back (NumPy's way with negative or complex
    # endpoints); the turn is a constant, which the result does not depend on.
    sign = fnp.sign(const_of(start))
    start, stop = start / sign, stop / sign
    y = logspace(fnp.log10(start), fnp.log10(stop), num=num, endpoint=endpoint, base=10.0)
    if num > 0:  # the endpoints exactly (exp(log(x)) need not be x)
        parts = [_row(start, y), y[1:]]
        if num > 1 and endpoint:
            parts = [parts[0], y[1:-1], _row(stop, y)]
        y = fnp.concatenate(parts, axis=0)
    y = y * sign
    if axis != 0:
        y = fnp.moveaxis(y, 0, axis)
    return fnp.astype(y, dt if dtype is None else dtype, copy=False)
