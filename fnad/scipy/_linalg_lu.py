"""LU factorisation for fnad.scipy.linalg: lu, lu_factor, lu_solve.

The row permutation is found on the plain values (it is piecewise constant: no derivative);
the factors are a primitive, the LU factorisation without pivoting of the already permuted
matrix, whose rules are (for A = L U square, F = L^{-1} dA U^{-1}):
  dL = L tril(F, -1),   dU = triu(F) U,
  gA = L^{-T} (tril(L^T gL, -1) + triu(gU U^T)) U^{-T}.
"""

import numpy as np

from .. import numpy as fnp
from .._core.backend import array_module
from .._core.tracer import Tracer
from .._core.rules import defjvp, defvjp
from ..numpy._linalg import check_matrix, check_square, mT
from ._linalg import _as_float, solve_triangular
from .._batching.families import stack_batch
from .._core.rules import defabstract_eval, defbatch
from ..numpy._util import const_of, dtype_of, shape, wrap


def _lu_kernel(a, pivot):
    """(swaps, L, U) of a stack of (m, n) matrices: swaps[..., k] is the row exchanged with
    row k at step k (LAPACK's piv), L is (m, k) unit lower, U (k, n) upper, k = min(m, n)."""
    xp = array_module(a)
    a = a.astype(np.result_type(a.dtype, np.float64), copy=True)
    m, n = a.shape[-2:]
    k = min(m, n)
    swaps = xp.zeros(a.shape[:-2] + (k,), dtype=np.int64)
    for j in range(k):
        if pivot:
            col = a[..., j:, j]  # LAPACK's i?amax: |Re| + |Im| for complex (cabs1)
            size = xp.abs(col.real) + xp.abs(col.imag) if col.dtype.kind == "c" else xp.abs(col)
            p = j + xp.argmax(size, axis=-1)
            swaps[..., j] = p
            rows_j = a[..., j, :].copy()
            rows_p = xp.take_along_axis(a, p[..., None, None], axis=-2)[..., 0, :]
            a[..., j, :] = rows_p
            xp.put_along_axis(a, p[..., None, None], rows_j[..., None, :], axis=-2)
        else:
            swaps[..., j] = j
        piv = a[..., j, j][..., None]
        with np.errstate(divide="ignore", invalid="ignore"):
            a[..., j + 1:, j] = a[..., j + 1:, j] / piv
        a[..., j + 1:, j + 1:] -= a[..., j + 1:, j, None] * a[..., j, None, j + 1:]
    low = xp.tril(a[..., :, :k], -1) + xp.eye(m, k, dtype=a.dtype)
    return swaps, low, xp.triu(a[..., :k, :])


def swaps_to_perm(swaps, m):
    """The row order perm (P^T A = A[perm]) from LAPACK-style swaps (on the host: device
    swaps are copied there and the order copied back)."""
    if array_module(swaps) is not np:
        return array_module(swaps).asarray(swaps_to_perm(swaps.get(), m))
    perm = np.broadcast_to(np.arange(m), swaps.shape[:-1] + (m,)).copy()
    for j in range(swaps.shape[-1]):
        p = swaps[..., j:j + 1]
        pj = perm[..., j:j + 1].copy()
        perm[..., j:j + 1] = np.take_along_axis(perm, p, axis=-1)
        np.put_along_axis(perm, p, pj, axis=-1)
    return perm


_lu_p = wrap(lambda a: tuple(_lu_kernel(a, False)[1:]), "lu_nopivot", multiple_results=True)


def _pivots(a):
    """The row swaps of partial pivoting and the permutation they make, found on the host
    (a device array is copied there and the pivots copied back: the search reads values)."""
    xp = array_module(a)
    swaps = _lu_kernel(a if xp is np else a.get(), True)[0]
    perm = swaps_to_perm(swaps, a.shape[-2])
    return (perm, swaps) if xp is np else (xp.asarray(perm), xp.asarray(swaps))


# The pivoting as primitives without derivative, so that jit stages them like any other op.
_pivots_p = wrap(_pivots, "lu_pivots", nondiff=True, multiple_results=True)
_perm_p = wrap(swaps_to_perm, "lu_swaps_to_perm", nondiff=True)
defbatch(_pivots_p, stack_batch(_pivots_p))
defbatch(_perm_p, stack_batch(_perm_p, core=(1, 0)))


def _square(a):
    m, n = shape(a)[-2:]
    if m != n:
        raise NotImplementedError(
            f"fnad.scipy.linalg.lu: derivatives are implemented for square matrices only, got "
            f"shape {shape(a)}; pad the matrix to square or differentiate a QR-based solve.")


def _vjp_lu(g, ans, a):
    _square(a)
    gl, gu = g
    low, up = ans
    mid = fnp.tril(fnp.matmul(mT(low), gl), -1) + fnp.triu(fnp.matmul(gu, mT(up)))
    y = fnp.linalg.solve(mT(low), mid)             # L^{-T} mid
    return mT(fnp.linalg.solve(up, mT(y)))          # (...) U^{-T}


def _jvp_lu(t, ans, a):
    _square(a)
    low, up = ans
    f = mT(fnp.linalg.solve(mT(up), mT(fnp.linalg.solve(low, t))))   # L^{-1} dA U^{-1}
    return fnp.matmul(low, fnp.tril(f, -1)), fnp.matmul(fnp.triu(f), up)


defvjp(_lu_p, _vjp_lu)
defjvp(_lu_p, _jvp_lu)
defbatch(_lu_p, stack_batch(_lu_p))


def _permuted(a):
    """(perm, swaps, A[perm]): the rows of `a` in partial-pivoting order."""
    perm, swaps = _pivots_p(const_of(a))
    idx = fnp.broadcast_to(fnp.expand_dims(perm, -1), shape(perm) + shape(a)[-1:])
    return perm, swaps, fnp.take_along_axis(a, idx, axis=-2)


def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """LU decomposition with partial pivoting, as `scipy.linalg.lu`: a = p @ l @ u.

    Args:
      a: (..., M, N) array (batched over leading axes).
      permute_l: return (p @ l, u) instead.
      p_indices: return the permutation as row indices (a = l[p] @ u) instead of a matrix.

    Returns:
      (p, l, u), or (pl, u) with permute_l. Differentiable in `a` for square matrices (the
      permutation is piecewise constant).

    Example:
      p, l, u = fnad.scipy.linalg.lu(a)
    """
    a = check_matrix(a, "lu")
    perm, _, pa = _permuted(a)
    low, up = _lu_p(pa)
    m = shape(a)[-2]
    inv = fnp.argsort(perm, axis=-1)  # A = L[inv] U
    if permute_l:
        idx = fnp.broadcast_to(fnp.expand_dims(inv, -1), shape(inv) + shape(low)[-1:])
        return fnp.take_along_axis(low, idx, axis=-2), up
    if p_indices:
        return inv, low, up
    rows = array_module(perm).arange(m)[:, None]  # on perm's device
    p = perm[..., None, :] == rows  # p[r, c] = 1 where A's row r is LU's c
    return fnp.astype(p, dtype_of(low), copy=False), low, up


def lu_factor(a, overwrite_a=False, check_finite=True):
    """The packed LU factorisation of an (..., M, N) matrix, as `scipy.linalg.lu_factor`.

    Returns:
      (lu, piv): lu (..., M, N) holds U and L's strictly lower part; row i was interchanged
      with row piv[i] (min(M, N) pivots). Differentiable in `a` (through lu) for square `a`.

    Example:
      lu_piv = fnad.scipy.linalg.lu_factor(a); x = fnad.scipy.linalg.lu_solve(lu_piv, b)
    """
    a = check_matrix(a, "lu_factor")
    _, swaps, pa = _permuted(a)
    low, up = _lu_p(pa)  # (M, K) and (K, N), K = min(M, N): packed into one (M, N)
    (m, n), lead = shape(a)[-2:], ((0, 0),) * (len(shape(a)) - 2)
    low, up = fnp.tril(low, -1), up
    if m > n:
        up = fnp.pad(up, lead + ((0, m - n), (0, 0)))
    elif n > m:
        low = fnp.pad(low, lead + ((0, 0), (0, n - m)))
    return low + up, swaps


def _solve_tri(a, b, lower, unit):
    return solve_triangular(a, b, lower=lower, unit_diagonal=unit)


_TRANS = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}


def _lu_solve_shapes(lu_, perm, bb):
    """The broadcast batch shape of lu, piv and b (scipy >= 1.15 batches lu_solve)."""
    n = shape(lu_)[-1]
    try:
        if shape(bb)[-2] != n or shape(perm)[-1] != n:
            raise ValueError
        return np.broadcast_shapes(shape(lu_)[:-2], shape(perm)[:-1], shape(bb)[:-2])
    except ValueError:
        raise ValueError(
            f"fnad.scipy.linalg.lu_solve: lu of shape {shape(lu_)}, piv of shape "
            f"{shape(perm)} and b of shape {shape(bb)} do not fit; lu is (..., N, N), piv "
            "(..., N) and b (N,) or (..., N, K), with broadcastable leading axes.") from None


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solve a x = b from lu_factor's output, as `scipy.linalg.lu_solve` (batched as
    SciPy >= 1.15: lu (..., N, N), piv (..., N), b (N,) or (..., N, K)).

    Args:
      lu_and_piv: (lu, piv) from lu_factor.
      b: (N,) or (..., N, K) right-hand side.
      trans: 0 ('N') solves a x = b, 1 ('T') a^T x = b, 2 ('C') a^H x = b.

    Example:
      x = fnad.scipy.linalg.lu_solve(fnad.scipy.linalg.lu_factor(a), b)
    """
    lu_, piv = lu_and_piv
    if trans not in _TRANS:
        raise ValueError(f"fnad.scipy.linalg.lu_solve: trans must be 0, 1, 2, 'N', 'T' or "
                         f"'C', got {trans!r}.")
    lu_, b = check_square(_as_float(lu_), "lu_solve"), _as_float(b)
    piv = (const_of(piv) if isinstance(piv, Tracer) or array_module(piv) is not np
           else np.asarray(piv))
    perm = _perm_p(piv, shape(lu_)[-1])
    vec = len(shape(b)) == 1
    bb = fnp.reshape(b, shape(b) + (1,)) if vec else b
    full = _lu_solve_shapes(lu_, perm, bb) + shape(bb)[-2:]
    bb, perm = fnp.broadcast_to(bb, full), fnp.broadcast_to(perm, full[:-1])

    def rows(x, order):  # x[..., order, :] per matrix of the stack
        return fnp.take_along_axis(x, fnp.broadcast_to(fnp.expand_dims(order, -1), full), -2)

    if _TRANS[trans] == 0:  # P L U x = b
        x = _solve_tri(lu_, _solve_tri(lu_, rows(bb, perm), True, True), False, False)
    else:  # U^T L^T P^T x = b (conjugated for trans=2)
        t = mT(lu_)
        if _TRANS[trans] == 2 and np.dtype(dtype_of(t)).kind == "c":
            t = fnp.conj(t)
        z = _solve_tri(t, _solve_tri(t, bb, True, False), False, True)
        x = rows(z, fnp.argsort(perm, axis=-1))
    return x[..., 0] if vec else x


__all__ = ["lu", "lu_factor", "lu_solve"]

# ----------------------------------------------------------------------------- abstract evaluation


def _lu_aval(a):
    m, n = a.shape[-2:]
    k, lead = min(m, n), a.shape[:-2]
    return (a.update(shape=lead + (m, k), weak_type=False),
            a.update(shape=lead + (k, n), weak_type=False))


defabstract_eval(_lu_p, _lu_aval)
defabstract_eval(_pivots_p, lambda a: (a.update(shape=a.shape[:-1], dtype=np.intp, weak_type=False),
                                       a.update(shape=a.shape[:-2] + (min(a.shape[-2:]),),
                                                dtype=np.int64, weak_type=False)))
defabstract_eval(_perm_p, lambda swaps, m: swaps.update(shape=swaps.shape[:-1] + (m,),
                                                        dtype=np.intp))
