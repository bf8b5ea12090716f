"""Vector and matrix norms (norm, vector_norm, matrix_norm, cond) and their rules.

The p-norms are one primitive whose gradient at a zero norm is 0 (PyTorch's subgradient)
rather than NaN. The other orders are compositions of fnp reductions and `svdvals`.
"""

import numpy as np

from .. import numpy as fnp
from .._core.abstract import reduction_rule
from .._batching.families import axis_batch
from .._core.rules import defabstract_eval, defbatch, defjvp, defvjp
from ._linalg import as_array, check_matrix, inv, numpy_only
from ._linalg_decomp import svdvals
from ._util import expand_reduced as _expand
from ._util import const_of, dtype_of, maybe_any, ndim, shape, wrap


def _pnorm_impl(x, p, axis=None, keepdims=False):
    if p == 2:
        sq = x * x if x.dtype.kind != "c" else (x * x.conj()).real
        return np.sqrt(np.sum(sq, axis=axis, keepdims=keepdims))
    return np.sum(np.abs(x) ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


_pnorm_p = wrap(_pnorm_impl, "norm")


def _pnorm_weight(ans, x, p, axis, keepdims):
    """d norm / dx, with 0 where the norm is 0 (masked, not x / 1: so the Hessian there is
    0 as for abs, not the identity). For complex x it is the weight w of the JVP
    Re(sum(conj(w) * t)), whose VJP is g * conj(w) (JAX's convention)."""
    a = _expand(ans, shape(x), axis, keepdims)
    zero = a == 0
    safe = fnp.where(zero, fnp.ones_like(a), a)
    if p == 2:
        w = x / safe
    else:
        ax = fnp.abs(x)
        if p < 1:  # |x|^(p-1) is infinite at a zero entry: its weight is 0 there (PyTorch)
            ax = fnp.where(ax == 0, fnp.ones_like(ax), ax)
        w = _unit(x, ax) * ax ** (p - 1) / safe ** (p - 1)
    return fnp.where(zero, fnp.zeros_like(w), w) if maybe_any(zero) else w


def _unit(x, ax):
    """sign(x) (no derivative) for real x; x / |x|, 0 at 0, for complex x."""
    if x.dtype.kind != "c":
        return fnp.sign(x)
    return fnp.where(ax == 0, fnp.zeros_like(x), x / fnp.where(ax == 0, fnp.ones_like(ax), ax))


def _conj_weight(ans, x, p, axis, keepdims):
    w = _pnorm_weight(ans, x, p, axis, keepdims)
    return fnp.conj(w) if x.dtype.kind == "c" else w


defvjp(_pnorm_p, lambda g, ans, x, p, axis=None, keepdims=False:
       _expand(g, shape(x), axis, keepdims) * _conj_weight(ans, x, p, axis, keepdims))
defjvp(_pnorm_p, lambda t, ans, x, p, axis=None, keepdims=False:
       fnp.sum(fnp.real(t * _conj_weight(ans, x, p, axis, keepdims)), axis=axis,
               keepdims=keepdims))


def _vector_norm(x, ord, axis, keepdims):
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return _pnorm_p(x, 2, axis, keepdims)
    if isinstance(ord, str):
        raise ValueError(f"fnad.numpy.linalg.norm: invalid norm order {ord!r} for vectors; use "
                         "a number, inf or -inf ('fro' and 'nuc' need a 2-D axis).")
    if ord == np.inf:
        return fnp.max(fnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return fnp.min(fnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:  # of x's real dtype (float64 for complex128), as NumPy
        count = fnp.sum(fnp.not_equal(const_of(x), 0), axis=axis, keepdims=keepdims)
        return fnp.asarray(count, dtype=np.zeros((), dtype_of(x)).real.dtype)
    if ord == 1:
        return fnp.sum(fnp.abs(x), axis=axis, keepdims=keepdims)
    return _pnorm_p(x, float(ord), axis, keepdims)


def _to_last(x, r, c):
    perm = [k for k in range(ndim(x)) if k not in (r, c)] + [r, c]
    return fnp.transpose(x, perm)


def _matrix_norm(x, ord, axes, keepdims):
    r, c = axes
    if r == c:
        raise ValueError(f"fnad.numpy.linalg.norm: duplicate axes given ({axes}).")
    if ord is None or ord == "fro":
        res = _pnorm_p(x, 2, (r, c), False)
    elif ord == "nuc":
        res = fnp.sum(svdvals(_to_last(x, r, c)), axis=-1)
    elif isinstance(ord, str):
        res = None
    elif ord in (2, -2):
        s = svdvals(_to_last(x, r, c))
        res = fnp.max(s, axis=-1) if ord == 2 else fnp.min(s, axis=-1)
    elif ord in (1, -1):
        red = fnp.max if ord == 1 else fnp.min
        res = red(fnp.sum(fnp.abs(x), axis=r), axis=c - 1 if c > r else c)
    elif ord in (np.inf, -np.inf):
        red = fnp.max if ord == np.inf else fnp.min
        res = red(fnp.sum(fnp.abs(x), axis=c), axis=r - 1 if r > c else r)
    else:
        res = None
    if res is None:
        raise ValueError(f"fnad.numpy.linalg.norm: invalid norm order {ord!r} for matrices; use "
                         "None, 'fro', 'nuc', 1, -1, 2, -2, inf or -inf.")
    return fnp.expand_dims(res, (r, c)) if keepdims else res


def _axes(axis, nd, fname):
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    for a in axes:
        if not -nd <= a < nd:
            raise ValueError(f"fnad.numpy.linalg.{fname}: axis {a} is out of bounds for an "
                             f"array of dimension {nd}.")
    return tuple(int(a) % nd for a in axes)


def _inexact(x):
    """Integers and booleans as float64, as NumPy's norms take them."""
    return x if np.dtype(dtype_of(x)).kind in "fc" else fnp.astype(x, np.float64)


# norm, vector_norm and matrix_norm run the same primitives eagerly as under jit (not
# NumPy's own functions, whose 2-norm of a whole array is a BLAS dot): so jit(f) gives f's
# bits, as docs/jit.md promises. The values are NumPy's to the last bits.


def norm(x, ord=None, axis=None, keepdims=False):
    """Matrix or vector norm, as `numpy.linalg.norm`.

    Args:
      x: array. With axis=None it must be 1-D or 2-D unless ord is None (then the 2-norm of
        the flattened array is returned).
      ord: for vectors None/2, any p, inf, -inf, 0 (count of nonzeros, no derivative); for
        matrices None/'fro', 'nuc', 1, -1, 2, -2, inf, -inf.
      axis: int (vector norms), pair of ints (matrix norms) or None.
      keepdims: keep the reduced axes with size 1.

    The gradient of a p-norm at 0 is 0 (a subgradient, as PyTorch), not NaN.

    Example:
      fnad.grad(fnp.linalg.norm)(np.zeros(3))   # array([0., 0., 0.])
    """
    x = _inexact(as_array(x))
    nd = ndim(x)
    if axis is None:
        if ord is None:
            return _pnorm_p(x, 2, None, keepdims)
        if nd not in (1, 2):
            raise ValueError(f"fnad.numpy.linalg.norm: with ord={ord!r} and axis=None the "
                             f"input must be 1-D or 2-D, got shape {shape(x)}; pass axis.")
        axis = tuple(range(nd))
    axes = _axes(axis, nd, "norm")
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(f"fnad.numpy.linalg.norm: axis must be an int or a pair of ints, got "
                     f"{axis!r}; use vector_norm for norms over more axes.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector norm over `axis` (all axes when None; a tuple reduces several), as NumPy 2.

    Example:
      fnp.linalg.vector_norm(x, axis=(0, 1))
    """
    x = _inexact(as_array(x))
    axes = None if axis is None else _axes(axis, ndim(x), "vector_norm")
    return _vector_norm(x, ord, axes, keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Matrix norm over the last two axes, as `numpy.linalg.matrix_norm`.

    Example:
      fnp.linalg.matrix_norm(a, ord="nuc")
    """
    x = _inexact(check_matrix(x, "matrix_norm"))
    return _matrix_norm(x, ord, (ndim(x) - 2, ndim(x) - 1), keepdims)


def cond(x, p=None):
    """Condition number of a (stack of) matrices, as `numpy.linalg.cond`.

    Example:
      fnp.linalg.cond(a)   # largest over smallest singular value
    """
    x = check_matrix(x, "cond")
    if numpy_only(x):
        return np.linalg.cond(x, p)
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = svdvals(x)
        ratio = s[..., 0] / s[..., -1]
        return 1 / ratio if p == -2 else ratio
    axes = (-2, -1)
    return norm(x, p, axis=axes) * norm(inv(x), p, axis=axes)

# ----------------------------------------------------------------------------- abstract evaluation

defabstract_eval(_pnorm_p, reduction_rule(_pnorm_impl))
defbatch(_pnorm_p, axis_batch(_pnorm_p))
