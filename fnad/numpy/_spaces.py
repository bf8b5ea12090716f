"""geomspace, differentiable in its endpoints: on plain values NumPy's own function; with a
traced start or stop NumPy 2's formula written with fnad.numpy over `logspace`, whose
primitive (fnad/numpy/_creation.py, with `linspace`) differentiates in the end points."""

import numpy as np

from .. import numpy as fnp
from .._core.tracer import getval
from ._creation import _holds_tracer, asarray, linspace, logspace
from ._util import const_of, dtype_of, is_staged

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


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Samples spaced evenly on a log scale from `start` to `stop` (same sign, or complex),
    as `numpy.geomspace`; differentiable in start and stop.

    Example:
      fnp.geomspace(1.0, 1000.0, 4)   # [1., 10., 100., 1000.]
    """
    if not (_holds_tracer(start) or _holds_tracer(stop)):
        return np.geomspace(start, stop, num, endpoint, dtype, axis)
    num = _count(num, "geomspace")
    start, stop = asarray(start), asarray(stop)
    if not is_staged(start) and not is_staged(stop) and (
            np.any(getval(start) == 0) or np.any(getval(stop) == 0)):  # staged: no values
        raise ValueError("fnad.numpy.geomspace: a geometric sequence cannot include zero.")
    dt = _float_dtype(start, stop)
    start, stop = fnp.astype(start, dt), fnp.astype(stop, dt)
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
    return fnp.astype(y, dt if dtype is None else dtype)
