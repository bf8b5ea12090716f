"""The few names autograd.numpy has that NumPy has not, or that behave differently there:
`make_diagonal`, and `where`, which keeps Python values Python (autograd's `where` of
Python scalars or lists returns Python scalars or lists)."""

import numpy as onp

import fnad.numpy as fnp

from ..._core.tracer import Tracer

__all__ = ["make_diagonal", "where"]


def make_diagonal(D, offset=0, axis1=0, axis2=1):
    """The arrays whose diagonals (over `axis1`, `axis2`) are the last axis of D: the inverse
    of `diagonal`, e.g. `make_diagonal(D, axis1=-1, axis2=-2)` for a stack of vectors."""
    if offset != 0:
        raise NotImplementedError("make_diagonal: only offset=0 is supported (as autograd).")
    D = fnp.asarray(D)
    n = D.shape[-1]
    out = fnp.expand_dims(D, -1) * fnp.eye(n, dtype=D.dtype)
    return fnp.moveaxis(out, (-2, -1), (axis1 % out.ndim, axis2 % out.ndim))


def _is_array(x):
    if isinstance(x, (Tracer, onp.ndarray, onp.generic)):
        return True
    return isinstance(x, (list, tuple)) and any(_is_array(v) for v in x)


def where(condition, *args, **kwargs):
    """NumPy's `where`; of Python values only (no array among them) the result is a Python
    value (`.tolist()`), as autograd's."""
    if not args and not kwargs:
        return fnp.where(condition)
    if len(args) + len(kwargs) != 2:
        raise ValueError("where: either both or neither of x and y should be given")
    x = args[0] if args else kwargs.get("x")
    y = args[1] if len(args) > 1 else kwargs.get("y")
    res = fnp.where(condition, x, y)
    if _is_array(condition) or _is_array(x) or _is_array(y):
        return res
    return res.tolist() if isinstance(res, onp.ndarray) else res
