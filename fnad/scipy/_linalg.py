"""fnad.scipy.linalg's functions that are compositions of fnad.numpy (so every derivative
order comes for free); sqrtm, a primitive, is in _sqrtm.

solve_triangular solves with the masked triangle (its gradient in `a` is that triangle's,
as PyTorch's); expm is Higham's degree-13 Pade approximant with scaling and squaring (the
scaling is chosen on the values and is constant); solve_sylvester solves the Kronecker
system (N M unknowns: meant for small matrices).
"""


import numpy as np

from .. import numpy as fnp
from .._core.backend import array_module
from .._core.devices import to_numpy
from .._core.tracer import getval
from ..numpy._linalg import as_array, check_matrix, check_square, eye_like, mT
from .._batching.families import stack_batch
from .._core.rules import defabstract_eval, defbatch
from ..numpy._util import const_of, refuse_staged, shape, wrap


def _name(fname):
    return f"fnad.scipy.linalg.{fname}"


def _as_float(x):
    x = as_array(x)
    return x if np.dtype(getval(x).dtype).kind in "fc" else fnp.asarray(x, dtype=np.float64)


def _check_rhs(a, b, fname):
    if (shape(b)[:1] != shape(a)[-1:] and shape(b)[-2:-1] != shape(a)[-1:]
            and shape(b)[-1:] != shape(a)[-1:]):
        raise ValueError(f"{_name(fname)}: a has shape {shape(a)} but b has shape {shape(b)}; "
                         "b must be (N,) or (N, K) with N = a.shape[-1].")


def _matrix_rhs(b, a):
    """b as (..., N, K) and whether it was a vector (scipy: b of ndim 1 is a vector)."""
    if len(shape(b)) == 1:
        return fnp.reshape(b, shape(b) + (1,)), True
    return b, False


# ----------------------------------------------------------------------------- solves


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    """Solve a x = b for triangular a, as `scipy.linalg.solve_triangular`.

    Only the triangle named by `lower` is read (and differentiated).

    Args:
      a: (..., N, N) array; b: (N,) or (..., N, K).
      trans: 0 ('N') solves a x = b, 1 ('T') a^T x = b, 2 ('C') a^H x = b.
      lower: use the lower triangle (default upper); unit_diagonal: take the diagonal as 1.

    Example:
      x = fnad.scipy.linalg.solve_triangular(l, b, lower=True)
    """
    a, b = check_square(_as_float(a), "solve_triangular"), _as_float(b)
    _check_rhs(a, b, "solve_triangular")
    t = fnp.tril(a) if lower else fnp.triu(a)
    if unit_diagonal:
        eye = eye_like(shape(a)[-1], a)
        t = t * (1 - eye) + eye
    if trans in (1, 2, "T", "C"):
        t = mT(t)
        if trans in (2, "C") and np.dtype(getval(t).dtype).kind == "c":
            t = fnp.conj(t)
    elif trans not in (0, "N"):
        raise ValueError(f"{_name('solve_triangular')}: trans must be 0, 1, 2, 'N', 'T' or "
                         f"'C', got {trans!r}.")
    bm, vec = _matrix_rhs(b, a)
    x = fnp.linalg.solve(t, bm)
    return x[..., 0] if vec else x


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of a symmetric positive definite matrix, as
    `scipy.linalg.cholesky`: upper U with a = U^T U by default, lower L (a = L L^T) with
    lower=True. Only that triangle of `a` is read (and receives the gradient), as SciPy.
    Batched.

    Example:
      u = fnad.scipy.linalg.cholesky(a)
    """
    a = check_square(_as_float(a), "cholesky")
    t = fnp.tril(a) if lower else fnp.triu(a)  # LAPACK reads that triangle only
    return fnp.linalg.cholesky(t + mT(t) - t * eye_like(shape(a)[-1], a), upper=not lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower) for cho_solve, as `scipy.linalg.cho_factor` (the unused triangle of c is
    zero here, not arbitrary).

    Example:
      x = fnad.scipy.linalg.cho_solve(fnad.scipy.linalg.cho_factor(a), b)
    """
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solve a x = b given cho_factor(a), as `scipy.linalg.cho_solve`.

    Example:
      x = fnad.scipy.linalg.cho_solve((c, False), b)
    """
    c, lower = c_and_lower
    c, b = _as_float(c), _as_float(b)
    if lower:  # a = L L^H
        return solve_triangular(c, solve_triangular(c, b, lower=True), trans=2, lower=True)
    return solve_triangular(c, solve_triangular(c, b, trans=2), lower=False)  # a = U^H U


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False):
    """Solve a x = b, as `scipy.linalg.solve` (b of ndim 1 is a vector).

    assume_a 'sym'/'her'/'pos' read one triangle (the lower one with lower=True, else the
    upper), as SciPy; 'diagonal', 'tridiagonal', 'banded' and 'gen' use the whole matrix.

    Example:
      x = fnad.scipy.linalg.solve(a, b)
    """
    a, b = check_square(_as_float(a), "solve"), _as_float(b)
    _check_rhs(a, b, "solve")
    if assume_a in ("sym", "her", "hermitian", "symmetric", "pos", "positive definite"):
        t = fnp.tril(a) if lower else fnp.triu(a)
        a = t + mT(t) - t * eye_like(shape(a)[-1], a)
    elif assume_a in ("upper triangular", "lower triangular"):
        return solve_triangular(a, b, lower=assume_a.startswith("lower"),
                                trans=1 if transposed else 0)
    if transposed:
        a = mT(a)
    bm, vec = _matrix_rhs(b, a)
    x = fnp.linalg.solve(a, bm)
    return x[..., 0] if vec else x


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of a square matrix, as `scipy.linalg.inv` (batched).

    Example:
      fnad.scipy.linalg.inv(a) @ a   # identity
    """
    return fnp.linalg.inv(_as_float(a))


def det(a, overwrite_a=False, check_finite=True):
    """The determinant, as `scipy.linalg.det` (batched).

    Example:
      fnad.scipy.linalg.det(np.eye(3))   # 1.0
    """
    return fnp.linalg.det(_as_float(a))


def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """Solve a x = b for the banded a stored as `ab`, as `scipy.linalg.solve_banded`:
    a[i, j] = ab[u + i - j, j] for the (l, u) band. Differentiable in ab and b.

    Example:
      x = fnad.scipy.linalg.solve_banded((1, 1), ab, b)   # a tridiagonal system
    """
    n_low, n_up = (int(v) for v in l_and_u)
    ab, b = _as_float(ab), _as_float(b)
    if len(shape(ab)) != 2 or shape(ab)[0] != n_low + n_up + 1:
        raise ValueError(f"{_name('solve_banded')}: ab must have shape (l + u + 1, N) = "
                         f"({n_low + n_up + 1}, N) for (l, u) = {(n_low, n_up)}, got "
                         f"{shape(ab)}.")
    n = shape(ab)[1]
    xp = array_module(ab)  # the index arrays on ab's device
    i, j = xp.meshgrid(xp.arange(n), xp.arange(n), indexing="ij")
    k = n_up + i - j
    inside = (k >= 0) & (k <= n_low + n_up)
    dense = fnp.where(inside, ab[xp.clip(k, 0, n_low + n_up), j], 0.0)
    return solve(dense, b)


def block_diag(*arrs):
    """A block-diagonal matrix of the given blocks, as `scipy.linalg.block_diag`
    (0-d and 1-d inputs are 1 x 1 and 1 x N blocks).

    Example:
      fnad.scipy.linalg.block_diag(a, b)
    """
    if not arrs:
        return np.empty((1, 0))
    blocks = []
    for x in arrs:
        x = as_array(x)
        if len(shape(x)) > 2:
            raise ValueError(f"{_name('block_diag')}: arguments must have at most 2 dimensions, "
                             f"got shape {shape(x)}.")
        blocks.append(fnp.reshape(x, (1,) * (2 - len(shape(x))) + shape(x)))
    total = sum(shape(x)[1] for x in blocks)
    rows, col = [], 0
    for x in blocks:
        w = shape(x)[1]
        rows.append(fnp.pad(x, ((0, 0), (col, total - col - w))))
        col += w
    return fnp.concatenate(rows, axis=0)


def solve_sylvester(a, b, q):
    """Solve a x + x b = q, as `scipy.linalg.solve_sylvester` (a: (M, M), b: (N, N),
    q: (M, N); batched over leading axes). Forms the M N x M N Kronecker system, so it is
    meant for small matrices; differentiable in a, b and q.

    Example:
      x = fnad.scipy.linalg.solve_sylvester(a, b, q)
    """
    a = check_square(_as_float(a), "solve_sylvester")
    b = check_square(_as_float(b), "solve_sylvester")
    q = check_matrix(_as_float(q), "solve_sylvester")
    m, n = shape(a)[-1], shape(b)[-1]
    if shape(q)[-2:] != (m, n):
        raise ValueError(f"{_name('solve_sylvester')}: q must be ({m}, {n}) for a {shape(a)} "
                         f"and b {shape(b)}, got {shape(q)}.")
    eye_m, eye_n = eye_like(m, a), eye_like(n, a)
    # row-major vec: vec(a x) = (a kron I_n) vec(x), vec(x b) = (I_m kron b^T) vec(x)
    k = (a[..., :, None, :, None] * eye_n[:, None, :]
         + eye_m[:, None, :, None] * mT(b)[..., None, :, None, :])
    batch = np.broadcast_shapes(shape(k)[:-4], shape(q)[:-2])
    k = fnp.broadcast_to(fnp.reshape(k, shape(k)[:-4] + (m * n, m * n)), batch + (m * n, m * n))
    rhs = fnp.broadcast_to(fnp.reshape(q, shape(q)[:-2] + (m * n, 1)), batch + (m * n, 1))
    return fnp.reshape(fnp.linalg.solve(k, rhs), batch + (m, n))


# ----------------------------------------------------------------------------- expm
# Higham (2005), "The scaling and squaring method for the matrix exponential revisited".
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _squarings(a):
    """Per matrix of a stack, the s squarings with ||a / 2^s||_1 <= theta_13 (found on the
    host: the number of squarings depends on the values; a constant, without derivative)."""
    norm1 = np.max(np.sum(np.abs(to_numpy(a)), axis=-2), axis=-1, initial=0.0)
    with np.errstate(divide="ignore"):
        s = np.where(norm1 > _THETA13, np.ceil(np.log2(norm1 / _THETA13)), 0.0)
    return array_module(a).asarray(np.where(np.isfinite(s), s, 0.0))


_squarings_p = wrap(_squarings, "expm_squarings", nondiff=True)
defbatch(_squarings_p, stack_batch(_squarings_p))
defabstract_eval(_squarings_p, lambda a: a.update(shape=a.shape[:-2], dtype=np.float64,
                                                  weak_type=False))


def expm(a):
    """The matrix exponential, as `scipy.linalg.expm` (batched over leading axes).

    Degree-13 Pade with scaling and squaring, written with fnad.numpy, so it is
    differentiable to any order.

    Example:
      fnad.scipy.linalg.expm(np.zeros((2, 2)))   # identity
    """
    a = check_square(_as_float(a), "expm")
    n = shape(a)[-1]
    refuse_staged(a, "fnad.scipy.linalg.expm", "choose its number of squarings", "call it "
                  "outside jit, or close over the matrix (a constant) instead of passing it")
    s = _squarings_p(const_of(a))  # per matrix: batched under vmap like the matrices
    a = a / fnp.expand_dims(2.0 ** s, (-2, -1))
    b, eye = _PADE13, eye_like(n, a)
    a2 = fnp.matmul(a, a)
    a4 = fnp.matmul(a2, a2)
    a6 = fnp.matmul(a4, a2)
    u = fnp.matmul(a, fnp.matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
                   + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = (fnp.matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2)
         + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye)
    r = fnp.linalg.solve(v - u, v + u)
    s_all = to_numpy(getval(s))  # every matrix's count (under vmap, the whole batch's)
    for k in range(int(s_all.max(initial=0.0))):
        r = (fnp.where(fnp.expand_dims(k < s, (-2, -1)), fnp.matmul(r, r), r)
             if not (k < s_all).all() else fnp.matmul(r, r))
    return r
