"""`gradient`: NumPy's second-order central differences, with one-sided differences of
order 1 or 2 at the edges, for uniform spacings or coordinate arrays.

It is a composition of slicing, products and concatenation, so it is differentiable in `f`
and in the spacings (coordinate arrays included).
"""

import numpy as np

from .. import numpy as fnp
from ._util import as_input, dtype_of, ndim, shape


def _along(x, ax, sl):
    return x[(slice(None),) * ax + (sl,)]


def _column(v, ax, nd):
    """A 1-D array of coefficients shaped to broadcast along axis `ax` of an nd array."""
    return fnp.reshape(v, (-1,) + (1,) * (nd - ax - 1)) if ndim(v) else v


def _spacings(varargs, axes, f):
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and ndim(varargs[0]) == 0:
        return list(varargs) * len(axes)
    if len(varargs) != len(axes):
        raise TypeError(f"fnad.numpy.gradient: give no spacing, one scalar, or one spacing per "
                        f"axis ({len(axes)}); got {len(varargs)}.")
    out = []
    for ax, h in zip(axes, varargs):
        if ndim(h) not in (0, 1):
            raise ValueError("fnad.numpy.gradient: a spacing must be a scalar or a 1-D array "
                             "of coordinates.")
        if ndim(h) == 1 and shape(h)[0] != shape(f)[ax]:
            raise ValueError(f"fnad.numpy.gradient: coordinates of length {shape(h)[0]} along "
                             f"axis {ax} of length {shape(f)[ax]}; they must match.")
        out.append(as_input(h))
    return out


def _uniform(f, ax, h, edge_order):
    inner = (_along(f, ax, slice(2, None)) - _along(f, ax, slice(None, -2))) / (2.0 * h)
    if edge_order == 1:
        first = (_along(f, ax, slice(1, 2)) - _along(f, ax, slice(0, 1))) / h
        last = (_along(f, ax, slice(-1, None)) - _along(f, ax, slice(-2, -1))) / h
    else:
        f0, f1, f2 = (_along(f, ax, slice(i, i + 1)) for i in range(3))
        e0, e1, e2 = (_along(f, ax, slice(i, i + 1 or None)) for i in (-3, -2, -1))
        first = (-1.5 * f0 + 2.0 * f1 - 0.5 * f2) / h
        last = (0.5 * e0 - 2.0 * e1 + 1.5 * e2) / h
    return fnp.concatenate([first, inner, last], axis=ax)


def _coords(f, ax, x, edge_order):
    nd = ndim(f)
    dx = x[1:] - x[:-1]
    d1, d2 = dx[:-1], dx[1:]
    a = -d2 / (d1 * (d1 + d2))
    b = (d2 - d1) / (d1 * d2)
    c = d1 / (d2 * (d1 + d2))
    inner = (_column(a, ax, nd) * _along(f, ax, slice(None, -2))
             + _column(b, ax, nd) * _along(f, ax, slice(1, -1))
             + _column(c, ax, nd) * _along(f, ax, slice(2, None)))
    f0, f1, f2 = (_along(f, ax, slice(i, i + 1)) for i in range(3))
    e0, e1, e2 = (_along(f, ax, slice(i, i + 1 or None)) for i in (-3, -2, -1))
    if edge_order == 1:
        first = (f1 - f0) / dx[0]
        last = (e2 - e1) / dx[-1]
    else:
        p, q = dx[0], dx[1]
        first = (-(2.0 * p + q) / (p * (p + q)) * f0 + (p + q) / (p * q) * f1
                 - p / (q * (p + q)) * f2)
        p, q = dx[-2], dx[-1]
        last = (q / (p * (p + q)) * e0 - (p + q) / (p * q) * e1
                + (2.0 * q + p) / (q * (p + q)) * e2)
    return fnp.concatenate([first, inner, last], axis=ax)


def gradient(f, *varargs, axis=None, edge_order=1):
    """The gradient of a sampled function, as `numpy.gradient`.

    Central differences inside, one-sided differences of order `edge_order` (1 or 2) at the
    edges; each spacing in `varargs` is a scalar step or a 1-D array of coordinates.

    Returns:
      One array per axis of `axis` (a tuple), or one array when a single axis is asked for.

    Example:
      dy = fnp.gradient(y, x)   # dy/dx for samples y at coordinates x
    """
    f = as_input(f)
    if dtype_of(f).kind not in "fc":
        f = fnp.astype(f, np.float64, copy=False)
    nd = ndim(f)
    axes = (tuple(range(nd)) if axis is None
            else tuple(a % nd for a in (axis if isinstance(axis, (tuple, list)) else (axis,))))
    if edge_order not in (1, 2):
        raise ValueError("fnad.numpy.gradient: edge_order must be 1 or 2.")
    outs = []
    for ax, h in zip(axes, _spacings(varargs, axes, f)):
        if shape(f)[ax] < edge_order + 1:
            raise ValueError(f"fnad.numpy.gradient: axis {ax} has {shape(f)[ax]} samples; "
                             f"edge_order={edge_order} needs at least {edge_order + 1}.")
        if ndim(h) == 1:
            h = fnp.astype(h, np.float64) if dtype_of(h).kind not in "fc" else h
            outs.append(_coords(f, ax, h, edge_order))
        else:
            outs.append(_uniform(f, ax, h, edge_order))
    return outs[0] if len(outs) == 1 else tuple(outs)
