"""Linear algebra primitives and their rules: inv, det, slogdet, solve, cholesky, pinv, and
the compositions built on them (matrix_power, multi_dot, tensorsolve, tensorinv).

Everything is batched over leading axes as in NumPy. Rules are written with `fnp` (and the
primitives of this module), so they are differentiable again. Rules for symmetric inputs
(cholesky, and eigh in `_linalg_decomp`) return the symmetric gradient, as PyTorch and JAX;
the public functions first build the Hermitian matrix NumPy reads from one triangle
(`from_triangle`), so their derivatives are those of NumPy's forward: zero in the other
triangle.
"""

from collections import namedtuple

import numpy as np

from .. import numpy as fnp
from .._core.backend import array_module, asarray_like, is_device_array
from .._core.tracer import Tracer, getval
from .._core.abstract import ShapedArray
from .._batching.families import logical_ndim, stack_batch, to_front
from .._core.rules import as_primitive, defabstract_eval, defbatch, defjvp, defvjp
from ._util import (as_input, const_of, dtype_of, linalg_rule, ndim, shape, unbroadcast,
                    values_hidden, wrap)

SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])

# ----------------------------------------------------------------------------- helpers


def any_traced(*args):
    """True when any of `args` is a tracer (the wrappers then take the primitive path)."""
    return any(isinstance(a, Tracer) for a in args)


def numpy_only(*args):
    """True when no argument is traced or a CuPy array: NumPy's own function can run (CuPy
    lacks some of NumPy 2's linalg functions and keywords, so it takes the composite path)."""
    return not any(isinstance(a, Tracer) or is_device_array(a) for a in args)


def mT(x):
    """Swap the last two axes (matrix transpose of a stack)."""
    return fnp.swapaxes(x, -1, -2)


def sym(x):
    """The symmetric part `(x + x^T) / 2` of a stack of square matrices."""
    return (x + mT(x)) * 0.5


def cj(x):
    """conj(x) for complex x; x itself (no op recorded) for real x."""
    return fnp.conj(x) if dtype_of(x).kind == "c" else x


def mH(x):
    """The conjugate transpose of a stack of matrices (`mT` if real: no conj recorded)."""
    return cj(mT(x))


def herm(x):
    """The Hermitian part `(x + x^H) / 2` (the symmetric part of a real stack)."""
    return (x + mH(x)) * 0.5


def eye_like(n, x):
    """A plain `n x n` identity on the backend and with the float dtype of `x`."""
    return array_module(x).eye(n, dtype=float_dtype(x))


def float_dtype(x):
    """The dtype of `x`, promoted to float64 when it is not a float type (as NumPy linalg)."""
    dt = np.dtype(dtype_of(x))
    return dt if dt.kind in "fc" else np.dtype(np.float64)


def diag_part(x):
    """The diagonals `x[..., i, i]` of a stack of square matrices."""
    return fnp.sum(x * eye_like(shape(x)[-1], x), axis=-1)


def diag_embed(v):
    """Square matrices with `v[..., i]` on their diagonals."""
    return fnp.expand_dims(v, -1) * eye_like(shape(v)[-1], v)


def from_triangle(a, lower=True):
    """The Hermitian matrix that NumPy's eigh, eigvalsh and cholesky read from `a`: its lower
    (upper) triangle mirrored, with the real part of its diagonal. Differentiating through it
    gives the derivative of what NumPy computes: zero for the triangle it never reads (and
    for the imaginary part of the diagonal), the read off-diagonal entries counted twice
    (autograd's convention), which finite differences of the forward agree with."""
    part = fnp.tril(a, -1) if lower else fnp.triu(a, 1)
    d = diag_part(a)
    return part + cj(mT(part)) + diag_embed(fnp.real(d) if dtype_of(d).kind == "c" else d)


def is_zero(g):
    """True when `g` is a plain NumPy array of zeros (an unused output of a multiple-result
    op; on a device the values are not read back)."""
    return not isinstance(g, Tracer) and not values_hidden(g) and not bool(g.any())


def as_array(x):
    """`x` unchanged if traced or an array; lists and scalars become NumPy arrays."""
    if isinstance(x, (list, tuple)):
        x = as_input(x)
    return x if isinstance(x, Tracer) else asarray_like(x)


def check_square(a, fname):
    """`a` as an array, checked to be a stack of square matrices."""
    a = as_array(a)
    s = shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"fnad.numpy.linalg.{fname}: expected a stack of square matrices "
                         f"(shape (..., M, M)), got shape {s}; {fname} is only defined for "
                         "square matrices (use pinv or lstsq-style solves for rectangular ones).")
    return a


def check_matrix(a, fname):
    """`a` as an array, checked to have at least two dimensions."""
    a = as_array(a)
    if ndim(a) < 2:
        raise ValueError(f"fnad.numpy.linalg.{fname}: expected an array of at least two "
                         f"dimensions (shape (..., M, N)), got shape {shape(a)}.")
    return a


# ----------------------------------------------------------------------------- primitives

def _inv_impl(a):
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        msg = (f"fnad.numpy.linalg.inv: a matrix of the stack (shape {a.shape}) is singular, "
               "so it has no inverse; use pinv, or solve a regularised system (a + eps * I).")
        raise np.linalg.LinAlgError(msg) from None


_inv_p = wrap(_inv_impl, "inv")
_det_p = wrap(np.linalg.det, "det")
_slogdet_p = wrap(lambda a: tuple(np.linalg.slogdet(a)), "slogdet", multiple_results=True)
_solve_p = wrap(np.linalg.solve, "solve")


def _cholesky_impl(a, upper=False):
    if not upper:
        return np.linalg.cholesky(a)
    if array_module(a) is np:  # LAPACK's upper factorisation: what NumPy's eager call gives
        return np.linalg.cholesky(a, upper=True)
    return np.conj(np.swapaxes(np.linalg.cholesky(a), -1, -2))  # CuPy has no upper=


_cholesky_p = wrap(_cholesky_impl, "cholesky")


def _pinv_impl(a, rcond=None, hermitian=False, rtol=None):
    kw = {}
    if rcond is not None:
        kw["rcond"] = rcond
    if hermitian:
        kw["hermitian"] = True
    if rtol is not None:
        kw["rtol"] = rtol
    return np.linalg.pinv(a, **kw)


_pinv_p = wrap(_pinv_impl, "pinv")

# ----------------------------------------------------------------------------- inv, det, slogdet

defvjp(_inv_p, lambda g, ans, a: -fnp.matmul(mT(ans), fnp.matmul(g, mT(ans))))
defjvp(_inv_p, lambda t, ans, a: -fnp.matmul(ans, fnp.matmul(t, ans)))
defbatch(_inv_p, stack_batch(_inv_p, core=(2,) * 4))

_MINORS_MAX_N = 8  # singular matrices up to this size take exact cofactors, larger ones SVD


def _cofactors_by_minors(a):
    """C[..., i, j] = (-1)^(i+j) det(a without row i and column j): exact at any rank and,
    through det's own rule on the minors, to every order."""
    n = shape(a)[-1]
    if n == 1:
        return fnp.ones_like(a)
    xp = array_module(a)  # index arrays and signs on a's device
    k, i = xp.arange(n - 1)[None, :], xp.arange(n)[:, None]
    keep = k + (k >= i)  # row i: every index but i
    minors = a[..., keep[:, None, :, None], keep[None, :, None, :]]
    sign = 1.0 - 2.0 * ((i + xp.arange(n)[None, :]) % 2)
    return _det_p(minors) * sign


def _cofactors_by_svd(a):
    """The cofactor matrix det(U) det(V) U adj(S) V^T from a = U S V^T, with adj(S) the
    products of the other singular values (exact at zeros; higher orders go through the
    SVD's rules, which assume distinct singular values)."""
    u, s, vh = fnp.linalg.svd(a)
    n = shape(s)[-1]
    others = fnp.prod(fnp.where(~array_module(s).eye(n, dtype=bool), fnp.expand_dims(s, -2),
                                fnp.ones_like(s, shape=())), axis=-1)
    sign = _det_p(const_of(u)) * _det_p(const_of(vh))  # +-1, locally constant
    return fnp.matmul(u * fnp.expand_dims(others * sign[..., None], -2), vh)


def _near_singular(ans, a):
    """True where some matrix's determinant is zero to rounding: |det| at most 8 n eps times
    Hadamard's bound prod |row| (LU gives 1e-16, not 0, for many singular matrices, and
    det inv(a)^T is then garbage)."""
    d, m = np.asarray(_host_value(getval(ans))), np.asarray(_host_value(getval(a)))
    n = m.shape[-1]
    bound = np.prod(np.linalg.norm(m, axis=-1), axis=-1)
    return bool(np.any(np.abs(d) <= 8 * n * np.finfo(m.dtype).eps * bound))


def _host_value(v):
    return v.get() if hasattr(v, "get") else v


def _cofactors(ans, a):
    """d det(a) / da = det(a) inv(a)^T, or adj(a)^T where some matrix is singular to
    rounding (as PyTorch, whose det gradient at singular matrices is the adjugate). Staged
    (jit) or on a device, where no value is read, the adjugate, exact at every rank."""
    if not values_hidden(ans) and not values_hidden(a) and not _near_singular(ans, a):
        return fnp.expand_dims(ans, (-1, -2)) * mT(inv(a))
    if shape(a)[-1] <= _MINORS_MAX_N:
        return _cofactors_by_minors(a)
    return _cofactors_by_svd(a)


defvjp(_det_p, lambda g, ans, a: fnp.expand_dims(g, (-1, -2)) * _cofactors(ans, a))
defjvp(_det_p, lambda t, ans, a: fnp.sum(_cofactors(ans, a) * t, axis=(-1, -2)))
defbatch(_det_p, stack_batch(_det_p, core=(2,) * 4))


def _inv_for_logdet(ans, a):
    """inv(a)^T, the derivative of logabsdet; refused where it is -inf (a singular matrix)."""
    if not values_hidden(ans[0]) and bool(np.any(getval(ans[0]) == 0)):
        raise np.linalg.LinAlgError(
            f"fnad.numpy.linalg.slogdet: the derivative of logabsdet is undefined at a "
            f"singular matrix (a stack of shape {shape(a)} holds one, where logabsdet is "
            "-inf); differentiate det instead, or regularise (a + eps * I).")
    return mT(inv(a))


# A real sign is piecewise constant; only logabsdet carries a derivative. For complex a,
# with x = tr(a^{-1} da): d logabsdet = Re x and d sign = i sign Im x (JAX's rules).
def _vjp_slogdet(g, ans, a):
    c = g[1]
    if dtype_of(a).kind == "c":
        c = c + 1j * fnp.imag(g[0] * ans[0])
    return fnp.expand_dims(c, (-1, -2)) * _inv_for_logdet(ans, a)


def _jvp_slogdet(t, ans, a):
    x = fnp.sum(_inv_for_logdet(ans, a) * t, axis=(-1, -2))
    if dtype_of(a).kind != "c":
        return None, x
    return ans[0] * (1j * fnp.imag(x)), fnp.real(x)


defvjp(_slogdet_p, _vjp_slogdet)
defjvp(_slogdet_p, _jvp_slogdet)
defbatch(_slogdet_p, stack_batch(_slogdet_p, core=(2,) * 4))

# ----------------------------------------------------------------------------- solve
# NumPy 2: b is a vector only when b.ndim == 1; otherwise a stack of (M, K) matrices.


def _as_col(x, b):
    return fnp.expand_dims(x, -1) if ndim(b) == 1 else x


def _vjp_solve_a(g, ans, a, b):
    gb = _solve_p(mT(a), _as_col(g, b))
    return unbroadcast(-fnp.matmul(gb, mT(_as_col(ans, b))), shape(a))


def _vjp_solve_b(g, ans, a, b):
    gb = _solve_p(mT(a), _as_col(g, b))
    return unbroadcast(gb[..., 0] if ndim(b) == 1 else gb, shape(b))


def _jvp_solve_a(t, ans, a, b):
    r = -_solve_p(a, fnp.matmul(t, _as_col(ans, b)))
    return r[..., 0] if ndim(b) == 1 else r


def _jvp_solve_b(t, ans, a, b):
    r = _solve_p(a, t)
    return r if shape(r) == shape(ans) else fnp.broadcast_to(r, shape(ans))


def _batch_solve(args, dims, **kw):
    (a, b), (da, db) = args, dims
    if db is not None and logical_ndim(b, db) == 1:  # a batch of vectors: solve as columns
        out, _ = _stack_solve([a, fnp.expand_dims(to_front(b, db), -1)], [da, 0])
        return fnp.squeeze(out, -1), 0
    return _stack_solve(args, dims, **kw)


_stack_solve = stack_batch(_solve_p)
defvjp(_solve_p, _vjp_solve_a, _vjp_solve_b)
defjvp(_solve_p, _jvp_solve_a, _jvp_solve_b)
defbatch(_solve_p, _batch_solve)

# ----------------------------------------------------------------------------- cholesky
# A = L L^H. With phi(X) = tril(X) with its diagonal halved:
#   dL = L phi(L^{-1} herm(dA) L^{-H}),   gA = herm(L^{-T} phi(L^T gL) conj(L)^{-1})
# (JAX's convention for complex A; for real A the symmetric gradient).


def _phi(x):
    return fnp.tril(x, -1) + 0.5 * x * eye_like(shape(x)[-1], x)


def _vjp_cholesky(g, ans, a, upper=False):
    if upper:  # U = L^H
        g, ans = mH(g), mH(ans)
    y = _solve_p(mT(ans), _phi(fnp.matmul(mT(ans), g)))  # L^{-T} phi(L^T gL)
    return herm(mT(_solve_p(mH(ans), mT(y))))            # (...) conj(L)^{-1}, Hermitian


def _jvp_cholesky(t, ans, a, upper=False):
    low = mH(ans) if upper else ans
    x = _solve_p(low, mH(_solve_p(low, herm(t))))        # L^{-1} S L^{-H}
    dl = fnp.matmul(low, _phi(x))
    return mH(dl) if upper else dl


defvjp(_cholesky_p, _vjp_cholesky)
defjvp(_cholesky_p, _jvp_cholesky)
defbatch(_cholesky_p, stack_batch(_cholesky_p, core=(2,) * 4))

# ----------------------------------------------------------------------------- pinv
# Golub & Pereyra: for A of locally constant rank, with P = pinv(A),
#   dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P   (^H = ^T if real).


def _vjp_pinv(g, ans, a, *args, **kw):
    p, m, n = ans, shape(a)[-2], shape(a)[-1]
    q = eye_like(m, a) - fnp.matmul(a, p)        # I - A P   (m x m)
    r = eye_like(n, a) - fnp.matmul(p, a)        # I - P A   (n x n)
    gt = mH(g)  # the dA^H terms transpose to conjugates (JAX's rule)
    return (-fnp.matmul(mT(p), fnp.matmul(g, mT(p)))
            + fnp.matmul(cj(q), fnp.matmul(gt, cj(fnp.matmul(p, mH(p)))))
            + fnp.matmul(cj(fnp.matmul(mH(p), p)), fnp.matmul(gt, cj(r))))


def _jvp_pinv(t, ans, a, *args, **kw):
    p, m, n = ans, shape(a)[-2], shape(a)[-1]
    q = eye_like(m, a) - fnp.matmul(a, p)
    r = eye_like(n, a) - fnp.matmul(p, a)
    tt = mH(t)
    return (-fnp.matmul(p, fnp.matmul(t, p))
            + fnp.matmul(fnp.matmul(p, mH(p)), fnp.matmul(tt, q))
            + fnp.matmul(r, fnp.matmul(tt, fnp.matmul(mH(p), p))))


defvjp(_pinv_p, _vjp_pinv)
defjvp(_pinv_p, _jvp_pinv)
defbatch(_pinv_p, stack_batch(_pinv_p, core=(2,) * 4))

# ----------------------------------------------------------------------------- public functions


def inv(a):
    """Inverse of a (stack of) square matrices, as `numpy.linalg.inv`.

    Args:
      a: array of shape (..., M, M).
    Returns:
      the inverses, shape (..., M, M).

    Example:
      fnad.grad(lambda a: fnp.sum(fnp.linalg.inv(a)))(a)
    """
    a = check_square(a, "inv")
    return _inv_p(a)


def det(a):
    """Determinant of a (stack of) square matrices, as `numpy.linalg.det`.

    The derivative is the cofactor matrix adj(a)^T: `det(a) inv(a)^T` for invertible `a`,
    and at exactly singular matrices the adjugate itself (cofactors from the minors up to
    8 x 8, from the SVD above), as PyTorch.

    Example:
      fnad.grad(fnp.linalg.det)(np.eye(3))   # the identity
    """
    a = check_square(a, "det")
    return _det_p(a)


def slogdet(a):
    """Sign and log of the absolute determinant, as `numpy.linalg.slogdet`.

    Returns:
      SlogdetResult(sign, logabsdet); only logabsdet carries a derivative (inv(a)^T),
      which is undefined at a singular matrix: there it raises LinAlgError.

    Example:
      sign, logdet = fnp.linalg.slogdet(a)
    """
    a = check_square(a, "slogdet")
    return SlogdetResult(*_slogdet_p(a))


def solve(a, b):
    """Solve `a @ x = b` for x, as `numpy.linalg.solve` (NumPy 2 shapes).

    Args:
      a: shape (..., M, M).
      b: shape (M,) (a vector) or (..., M, K); batch axes broadcast.
    Returns:
      x with the shape of the broadcast solution.

    Example:
      x = fnp.linalg.solve(a, b)
    """
    a, b = check_square(a, "solve"), as_array(b)
    m = shape(a)[-1]
    sb = shape(b)
    if ndim(b) == 0 or (ndim(b) == 1 and sb[0] != m) or (ndim(b) > 1 and sb[-2] != m):
        raise ValueError(f"fnad.numpy.linalg.solve: b of shape {sb} does not match a of shape "
                         f"{shape(a)}; b must have shape ({m},) or (..., {m}, K).")
    return _solve_p(a, b)


def cholesky(a, /, *, upper=False):
    """Cholesky factor of a (stack of) symmetric positive-definite matrices.

    As `numpy.linalg.cholesky`: the lower factor L with `a = L @ L.T` (the upper factor
    `L.T` with upper=True). Only the lower (upper) triangle of `a` is read, and the
    derivative is that of what is read: zero for the other triangle, the read off-diagonal
    entries counted twice (autograd's convention; for a symmetric `a` built from other
    values, e.g. `x @ x.T`, the gradient of those values is PyTorch's and JAX's).

    Example:
      L = fnp.linalg.cholesky(x @ x.T + np.eye(3))
    """
    a = check_square(a, "cholesky")
    if numpy_only(a):
        return np.linalg.cholesky(a, upper=True) if upper else np.linalg.cholesky(a)
    return _cholesky_p(from_triangle(a, lower=not upper), upper=upper)


def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    """Moore-Penrose pseudo-inverse, as `numpy.linalg.pinv`.

    The derivative (Golub & Pereyra) holds where the rank of `a` is locally constant, i.e.
    away from singular values at the cut-off.

    Example:
      p = fnp.linalg.pinv(a)   # a of shape (..., M, N) -> (..., N, M)
    """
    a = check_matrix(a, "pinv")
    return _pinv_p(a, rcond, hermitian, rtol)


def matrix_power(a, n):
    """`a` raised to the integer power `n` by repeated squaring, as `numpy.linalg.matrix_power`.

    Negative `n` inverts `a` first; `n == 0` gives identities (with no derivative).

    Example:
      fnp.linalg.matrix_power(a, 3)   # a @ a @ a
    """
    a = check_square(a, "matrix_power")
    if not isinstance(n, (int, np.integer)):
        raise TypeError(f"fnad.numpy.linalg.matrix_power: exponent must be an integer, got "
                        f"{type(n).__name__}.")
    if not any_traced(a):
        return np.linalg.matrix_power(a, int(n))
    n = int(n)
    if n == 0:
        return fnp.broadcast_to(eye_like(shape(a)[-1], a), shape(a))
    if n < 0:
        a, n = inv(a), -n
    if n == 3:  # NumPy's own association, so traced and plain results agree bit for bit
        return fnp.matmul(fnp.matmul(a, a), a)
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else fnp.matmul(result, base)
        n >>= 1
        if n:
            base = fnp.matmul(base, base)
    return result


def _chain_order(p):
    """NumPy's multi_dot association (a dynamic program on the shapes p[k] x p[k + 1]):
    split[i][j] is where the product of arrays i..j splits. Eager and jitted calls both take
    it, so they multiply in the same order and agree bit for bit."""
    n = len(p) - 1
    cost = [[0.0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            cost[i][j] = np.inf
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain(arrays, split, i, j):
    if i == j:
        return arrays[i]
    k = split[i][j]
    return fnp.matmul(_chain(arrays, split, i, k), _chain(arrays, split, k + 1, j))


def multi_dot(arrays, *, out=None):
    """Chained matrix product of two or more arrays, as `numpy.linalg.multi_dot`.

    The first array may be 1-D (a row vector) and the last 1-D (a column vector); the
    others are 2-D. The products are associated as NumPy's (the cheapest order).

    Example:
      fnp.linalg.multi_dot([a, b, c])
    """
    if out is not None:
        raise TypeError("fnad.numpy.linalg.multi_dot: out= is not supported; use the returned "
                        "array.")
    arrays = [as_array(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError("fnad.numpy.linalg.multi_dot: expecting at least two arrays.")
    first_1d, last_1d = ndim(arrays[0]) == 1, ndim(arrays[-1]) == 1
    if first_1d:
        arrays[0] = fnp.expand_dims(arrays[0], 0)
    if last_1d:
        arrays[-1] = fnp.expand_dims(arrays[-1], -1)
    for k, x in enumerate(arrays):
        if ndim(x) != 2:
            raise ValueError(f"fnad.numpy.linalg.multi_dot: array {k} has shape {shape(x)}; "
                             "only the first and last arrays may be 1-D, the others must be "
                             "2-D.")
    res = _chain(arrays, _chain_order([shape(x)[0] for x in arrays] + [shape(arrays[-1])[1]]),
                 0, len(arrays) - 1)
    if first_1d:
        res = res[0]
    if last_1d:
        res = res[..., 0]
    return res


def _prod(s):
    return int(np.prod(s, dtype=np.int64))


def tensorsolve(a, b, axes=None):
    """Solve the tensor equation `tensordot(a, x, axes=x.ndim) == b` for x, as NumPy.

    Example:
      x = fnp.linalg.tensorsolve(a, b)   # a (2, 3, 6), b (2, 3) -> x (6,)
    """
    a, b = as_array(a), as_array(b)
    an = ndim(a)
    if axes is not None:
        perm = [k for k in range(an) if k not in [ax % an for ax in axes]]
        perm += [ax % an for ax in axes]
        a = fnp.transpose(a, perm)
    x_shape = shape(a)[ndim(b):]
    n = _prod(x_shape)
    if _prod(shape(a)[:ndim(b)]) != n or _prod(shape(b)) != n:  # NumPy ravels b
        raise ValueError(f"fnad.numpy.linalg.tensorsolve: a of shape {shape(a)} and b of shape "
                         f"{shape(b)} do not make a square system; a's first b.ndim axes "
                         "(after moving `axes` to the end) must have as many elements as b and "
                         "as its trailing axes.")
    x = solve(fnp.reshape(a, (n, n)), fnp.reshape(b, (n,)))
    return fnp.reshape(x, x_shape)


def tensorinv(a, ind=2):
    """The inverse of `a` for `tensordot(., ., ind)`, as `numpy.linalg.tensorinv`.

    Example:
      ainv = fnp.linalg.tensorinv(a, ind=2)   # a (4, 6, 8, 3) -> (8, 3, 4, 6)
    """
    if ind <= 0:
        raise ValueError(f"fnad.numpy.linalg.tensorinv: ind must be a positive integer, "
                         f"got {ind}.")
    a = as_array(a)
    old = shape(a)
    n_out, n_in = _prod(old[:ind]), _prod(old[ind:])
    if n_out != n_in:
        raise ValueError(f"fnad.numpy.linalg.tensorinv: a of shape {old} with ind={ind} is not "
                         f"square ({n_out} vs {n_in} elements).")
    return fnp.reshape(inv(fnp.reshape(a, (n_out, n_in))), old[ind:] + old[:ind])

# ----------------------------------------------------------------------------- abstract evaluation


def _solve_aval(a, b):
    dtype = np.linalg.solve(np.eye(2, dtype=a.dtype), np.ones(2, b.dtype)).dtype
    if b.ndim == 1:
        return ShapedArray(a.shape[:-1], dtype, xp=a.xp)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return ShapedArray(batch + b.shape[-2:], dtype, xp=a.xp)


defabstract_eval(_inv_p, linalg_rule(np.linalg.inv, lambda a: a.shape))
defabstract_eval(_det_p, linalg_rule(np.linalg.det, lambda a: a.shape[:-2]))
defabstract_eval(_slogdet_p, linalg_rule(as_primitive(_slogdet_p).impl,
                                         lambda a: (a.shape[:-2], a.shape[:-2])))
defabstract_eval(_solve_p, _solve_aval)
defabstract_eval(_cholesky_p, linalg_rule(_cholesky_impl, lambda a, upper=False: a.shape))
defabstract_eval(_pinv_p, linalg_rule(
    _pinv_impl, lambda a, *args, **kw: a.shape[:-2] + a.shape[-2:][::-1]))
