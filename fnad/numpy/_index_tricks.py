"""`r_` and `c_`: NumPy's index-expression concatenators, differentiable in traced items.

`fnp.r_[a, 0, 1:4, -1:1:5j]` joins arrays, scalars and ranges (a complex step is a count of
linspace points) along the first axis; `fnp.c_` along the last, making 1-D items columns.
A leading string 'axis[,ndmin[,trans1d]]' sets the axis, the minimum dimension and where
1-D items go, as in NumPy. Plain items give NumPy's own result; NumPy's matrix directives
'r' and 'c' are not supported.
"""

import numpy as np

from .. import numpy as fnp
from .._core.backend import array_module, is_device_array
from .._core.tracer import Tracer
from ._util import ndim

__all__ = ["r_", "c_"]


def _holds_value(key):
    """True when `key` holds a traced value or a device array (np.r_ takes neither)."""
    return any(isinstance(k, Tracer) or is_device_array(k) for k in key)


def _parse_directive(item, axis, ndmin, trans1d):
    if item in ("r", "c"):
        raise NotImplementedError(f"fnad.numpy.r_/c_: the matrix directive {item!r} is not "
                                  "supported (fnad has no matrix type); use '0,2' or similar.")
    try:
        vals = [int(v) for v in item.split(",")]
    except ValueError:
        raise ValueError(f"fnad.numpy.r_/c_: unknown directive {item!r}; give "
                         "'axis[,ndmin[,trans1d]]' as integers.") from None
    vals += [ndmin, trans1d][len(vals) - 1:]
    return vals[0], vals[1], vals[2]


def _range(s, ndmin, trans1d, xp):
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, (complex, np.complexfloating)):
        out = xp.linspace(start, s.stop, int(abs(step)))
    else:
        out = xp.arange(start, s.stop, step)
    if ndmin > 1:
        out = xp.array(out, ndmin=ndmin)
        if trans1d != -1:
            out = out.swapaxes(-1, trans1d)
    return out


def _item(item, ndmin, trans1d, xp):
    nd = ndim(item)
    # a Python scalar is made on the arrays' device (np.asarray would leave it on the host)
    out = xp.full((), item) if isinstance(item, (int, float, complex)) else fnp.asarray(item)
    if nd >= ndmin:
        return out
    out = fnp.reshape(out, (1,) * (ndmin - nd) + fnp.shape(out))
    if trans1d != -1:
        k2 = ndmin - nd
        k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
        axes = list(range(ndmin))
        out = fnp.transpose(out, axes[:k1] + axes[k2:] + axes[k1:k2])
    return out


class AxisConcatenator:
    """Translates slice objects to concatenation along an axis (see the module notes)."""

    def __init__(self, axis=0, ndmin=1, trans1d=-1, plain=None):
        self.axis, self.ndmin, self.trans1d, self._plain = axis, ndmin, trans1d, plain

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        if not _holds_value(key):
            return self._plain[key]
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        xp = array_module(*key)  # ranges and scalars go where the arrays are
        parts = []
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k != 0:
                    raise ValueError("fnad.numpy.r_/c_: a directive string must come first.")
                axis, ndmin, trans1d = _parse_directive(item, axis, ndmin, trans1d)
            elif isinstance(item, slice):
                parts.append(_range(item, ndmin, trans1d, xp))
            else:
                parts.append(_item(item, max(ndmin, 1), trans1d, xp))
        return fnp.concatenate(parts, axis=axis)

    def __len__(self):
        return 0


r_ = AxisConcatenator(0, plain=np.r_)
c_ = AxisConcatenator(-1, ndmin=2, trans1d=0, plain=np.c_)
