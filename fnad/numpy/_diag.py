"""Diagonals: diagonal, diag, diagflat, trace.

`diagonal` and its transpose `_diag_embed` (zeros with `g` written on a diagonal) are two
linear primitives, each the other's VJP, so derivatives of any order stay cheap.
"""

import numpy as np

from .. import numpy as fnp
from .._core.abstract import standin_rule
from .._core.backend import array_module
from .._batching.families import logical_ndim, to_front
from .._core.rules import defabstract_eval, defbatch, defjvp_linear, defvjp
from ._util import dtype_of, ndim, shape, wrap


def _diagonal(a, offset, axis1, axis2):
    return np.diagonal(a, offset, axis1, axis2)


def _diag_embed(g, out_shape, offset, axis1, axis2):
    """Zeros of `out_shape` with `g` (diagonal axis last) written on the diagonal."""
    z = np.zeros_like(g, shape=out_shape)  # dispatches to CuPy for CuPy arrays
    zt = np.moveaxis(z, (axis1, axis2), (-2, -1))
    k = g.shape[-1]
    i = array_module(g).arange(k)  # on g's device
    zt[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return z


_diagonal_p = wrap(_diagonal, "diagonal")
_diag_embed_p = wrap(_diag_embed, "diag_embed")



def _batch_diagonal(args, dims, **kw):
    a, offset, a1, a2 = args
    nd = logical_ndim(a, dims[0])
    return _diagonal_p(to_front(a, dims[0]), offset, a1 % nd + 1, a2 % nd + 1), 0


def _batch_diag_embed(args, dims, **kw):
    g, out_shape, offset, a1, a2 = args
    g = to_front(g, dims[0])
    nd = len(out_shape)
    return _diag_embed_p(g, (shape(g)[0],) + tuple(out_shape), offset, a1 % nd + 1,
                         a2 % nd + 1), 0


defvjp(_diagonal_p, lambda g, ans, a, offset, axis1, axis2:
       _diag_embed_p(g, shape(a), offset, axis1, axis2))
defjvp_linear(_diagonal_p)
defbatch(_diagonal_p, _batch_diagonal)
defvjp(_diag_embed_p, lambda g, ans, x, out_shape, offset, axis1, axis2:
       _diagonal_p(g, offset, axis1, axis2))
defjvp_linear(_diag_embed_p)
defbatch(_diag_embed_p, _batch_diag_embed)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal of `a` in the plane of (axis1, axis2), as the last axis of the result."""
    nd = ndim(a)
    if nd < 2:
        raise ValueError(f"diagonal: array must be at least 2-d, got shape {shape(a)}.")
    a1, a2 = axis1 % nd, axis2 % nd
    if a1 == a2:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same.")
    return _diagonal_p(a, int(offset), a1, a2)


def diag(v, k=0):
    """The k-th diagonal of a 2-D array, or a 2-D array with 1-D `v` on its k-th diagonal."""
    if ndim(v) == 1:
        n = shape(v)[0] + abs(k)
        return _diag_embed_p(v, (n, n), int(k), 0, 1)
    if ndim(v) == 2:
        return diagonal(v, k)
    raise ValueError(f"diag: input must be 1-d or 2-d, got shape {shape(v)}.")


def diagflat(v, k=0):
    """A 2-D array with the flattened input on its k-th diagonal."""
    return diag(fnp.ravel(v), k)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along a diagonal."""
    if out is not None:
        raise TypeError("fnad.numpy.trace: out= is not supported; use the returned array.")
    d = diagonal(a, offset, axis1, axis2)
    res = fnp.sum(d, axis=-1)
    return res if dtype is None or dtype_of(res) == np.dtype(dtype) else fnp.astype(res, dtype)

# ----------------------------------------------------------------------------- abstract evaluation

defabstract_eval(_diagonal_p, standin_rule(_diagonal))  # a view
defabstract_eval(_diag_embed_p, lambda g, out_shape, *args: g.update(shape=out_shape))
