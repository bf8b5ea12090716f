"""Matrix decompositions and their rules: eigh, eigvalsh, svd, svdvals, qr.

eigh, eigvalsh (and cholesky, in _linalg), svd and svdvals differentiate complex inputs in
JAX's convention (the VJP is the transpose of the JVP under Re(sum(u * v))): the formulas
below with conjugate transposes. The rules of qr are for real inputs and refuse complex ones
by name.

The eigenvector and singular-vector rules use the standard formulas, which assume
distinct eigenvalues (eigh) and distinct, nonzero singular values (svd): with repeated
values the vectors are not unique and their derivatives are infinite. Functions of the
values alone (eigvalsh, svdvals, norm(.., 'nuc')) need no such assumption, and neither do
eigh/svd when only their values are used.
"""

from collections import namedtuple

import numpy as np

from .. import numpy as fnp
from .._batching.families import stack_batch
from .._core.rules import as_primitive, defabstract_eval, defbatch, defjvp, defvjp
from ._linalg import any_traced, check_matrix, check_square, diag_embed, diag_part, eye_like
from ._linalg import cj, from_triangle, herm, is_zero, mH, mT, solve, sym
from ._util import dtype_of, linalg_rule, shape, wrap

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
QRResult = namedtuple("QRResult", ["Q", "R"])

_eigh_p = wrap(lambda a, UPLO="L": tuple(np.linalg.eigh(a, UPLO)), "eigh",
               multiple_results=True)
_eigvalsh_p = wrap(lambda a, UPLO="L": np.linalg.eigvalsh(a, UPLO), "eigvalsh")
_svd_p = wrap(lambda a, full_matrices=False: tuple(np.linalg.svd(a, full_matrices=full_matrices)),
              "svd", multiple_results=True)
_svdvals_p = wrap(lambda a: np.linalg.svd(a, compute_uv=False), "svdvals")
_qr_p = wrap(lambda a: tuple(np.linalg.qr(a)), "qr", multiple_results=True)


def _cplx(x):
    return dtype_of(x).kind == "c"


def _re(x):
    return fnp.real(x) if _cplx(x) else x


def _real_only(fname, a):
    if _cplx(a):
        raise NotImplementedError(
            f"fnad.numpy.linalg.{fname}: derivatives for complex inputs (dtype {dtype_of(a)}) "
            "are not implemented; the forward value works. eigh, eigvalsh, cholesky, svd and "
            "svdvals support complex inputs; or split the matrix into real and imaginary "
            "parts.")


def _gap_inverse(v):
    """F[..., i, j] = 1 / (v[j] - v[i]) off the diagonal and 0 on it."""
    e = fnp.expand_dims(v, -2) - fnp.expand_dims(v, -1)
    one = eye_like(shape(v)[-1], v)
    return (1 - one) / (e + one)


def _scale_cols(x, v):
    """x @ diag(v)."""
    return x * fnp.expand_dims(v, -2)


def _scale_rows(x, v):
    """diag(v) @ x."""
    return x * fnp.expand_dims(v, -1)


# ----------------------------------------------------------------------------- eigh
# A = V diag(w) V^H. With X = V^H herm(dA) V and F = _gap_inverse(w):
#   dw = Re diag(X),  dV = V (F o X);
#   gA = conj(V) (diag(gw) + F o (Y - Y^H) / 2) V^T,  Y = V^T gV
# (for real A: V (diag(gw) + F o skew(V^T gV)) V^T, the symmetric gradient).


def _vjp_eigh(g, ans, a, UPLO="L"):
    gw, gv = g
    w, v = ans
    inner = diag_embed(gw)
    if not is_zero(gv):
        x = fnp.matmul(mT(v), gv)
        inner = inner + _gap_inverse(w) * ((x - mH(x)) * 0.5)
    return fnp.matmul(cj(v), fnp.matmul(inner, mT(v)))


def _jvp_eigh(t, ans, a, UPLO="L"):
    w, v = ans
    if not _cplx(v):
        x = fnp.matmul(mT(v), fnp.matmul(sym(t), v))
        return diag_part(x), fnp.matmul(v, _gap_inverse(w) * x)
    x = fnp.matmul(mH(v), fnp.matmul(herm(t), v))
    return fnp.real(diag_part(x)), fnp.matmul(v, _gap_inverse(w) * x)


defvjp(_eigh_p, _vjp_eigh)
defjvp(_eigh_p, _jvp_eigh)
defbatch(_eigh_p, stack_batch(_eigh_p, core=(2,) * 4))


def _vjp_eigvalsh(g, ans, a, UPLO="L"):
    v = _eigh_p(a, UPLO)[1]
    return fnp.matmul(_scale_cols(cj(v), g), mT(v))


def _jvp_eigvalsh(t, ans, a, UPLO="L"):
    v = _eigh_p(a, UPLO)[1]
    return _re(fnp.sum(cj(v) * fnp.matmul(herm(t), v), axis=-2))


defvjp(_eigvalsh_p, _vjp_eigvalsh)
defjvp(_eigvalsh_p, _jvp_eigvalsh)
defbatch(_eigvalsh_p, stack_batch(_eigvalsh_p, core=(2,) * 4))

# ----------------------------------------------------------------------------- svd
# Reduced SVD A = U diag(s) V^H, A of shape (m, n), k = min(m, n), Vh = V^H,
# F[i, j] = 1 / (s_j^2 - s_i^2), P = U^H dA V:
#   ds = Re diag(P)
#   dU = U (F o (P S + S P^H) + i Im diag(P) / S) + (I - U U^H) dA V S^{-1}  (last: m > k)
#   dV = V (F o (S P + P^H S)) + (I - V V^H) dA^H U S^{-1}                   (last: n > k)
# and the transpose of that map for the VJP (JAX's convention for complex A). The phase of
# each pair of singular vectors (u_i, v_i) is not unique: the gauge term i Im diag(P) / S
# turns U with V held fixed, as JAX does; functions that do not depend on those phases
# (|U|, U diag(s) Vh, projectors) get their true derivative.


def _reduced_only(a, full_matrices):
    """Differentiation of the full SVD of a non-square matrix refuses (its forward works)."""
    if full_matrices and shape(a)[-2] != shape(a)[-1]:
        raise ValueError(f"fnad.numpy.linalg.svd: differentiating svd of a non-square matrix "
                         f"(shape {shape(a)}) needs full_matrices=False; the extra columns of "
                         "U or V in the full decomposition are not unique.")


def _vjp_svd(g, ans, a, full_matrices=False):
    _reduced_only(a, full_matrices)
    gu, gs, gvh = g
    u, s, vh = ans
    m, n = shape(a)[-2:]
    k = min(m, n)
    inner = diag_embed(gs)
    use_u, use_v = not is_zero(gu), not is_zero(gvh)
    if use_u or use_v:
        f = _gap_inverse(s * s)
    if use_u:
        j = fnp.matmul(mT(u), gu)
        inner = inner + _scale_cols(f * (j - mH(j)), s)
        if _cplx(a):
            inner = inner + diag_embed(1j * fnp.imag(diag_part(j)) / s)
    if use_v:
        kk = fnp.matmul(cj(vh), mH(gvh))
        inner = inner + _scale_rows(f * (kk - mH(kk)), s)
    ga = fnp.matmul(cj(u), fnp.matmul(inner, cj(vh)))
    if use_u and m > k:
        proj = gu - fnp.matmul(cj(u), fnp.matmul(mT(u), gu))
        ga = ga + fnp.matmul(_scale_cols(proj, 1 / s), cj(vh))
    if use_v and n > k:
        proj = gvh - fnp.matmul(fnp.matmul(gvh, mT(vh)), cj(vh))
        ga = ga + fnp.matmul(cj(u), _scale_rows(proj, 1 / s))
    return ga


def _jvp_svd(t, ans, a, full_matrices=False):
    _reduced_only(a, full_matrices)
    u, s, vh = ans
    m, n = shape(a)[-2:]
    k = min(m, n)
    v = mH(vh)
    p = fnp.matmul(mH(u), fnp.matmul(t, v))
    f = _gap_inverse(s * s)
    du = fnp.matmul(u, f * (_scale_cols(p, s) + _scale_rows(mH(p), s)))
    dv = fnp.matmul(v, f * (_scale_rows(p, s) + _scale_cols(mH(p), s)))
    if _cplx(a):
        du = du + _scale_cols(u, 1j * fnp.imag(diag_part(p)) / s)
    if m > k:
        tv = fnp.matmul(t, v)
        du = du + _scale_cols(tv - fnp.matmul(u, fnp.matmul(mH(u), tv)), 1 / s)
    if n > k:
        tu = fnp.matmul(mH(t), u)
        dv = dv + _scale_cols(tu - fnp.matmul(v, fnp.matmul(vh, tu)), 1 / s)
    return du, _re(diag_part(p)), mH(dv)


defvjp(_svd_p, _vjp_svd)
defjvp(_svd_p, _jvp_svd)
defbatch(_svd_p, stack_batch(_svd_p, core=(2,) * 4))


def _vjp_svdvals(g, ans, a):
    u, _, vh = _svd_p(a)
    return cj(fnp.matmul(_scale_cols(u, g), vh))  # conj(U diag(g) Vh): JAX's convention


def _jvp_svdvals(t, ans, a):
    u, _, vh = _svd_p(a)
    return _re(fnp.sum(cj(u) * fnp.matmul(t, mH(vh)), axis=-2))


defvjp(_svdvals_p, _vjp_svdvals)
defjvp(_svdvals_p, _jvp_svdvals)
defbatch(_svdvals_p, stack_batch(_svdvals_p, core=(2,) * 4))

# ----------------------------------------------------------------------------- qr
# Reduced QR A = Q R. For m >= n (R square, invertible):
#   C = Q^T dA R^{-1}, O = tril(C, -1) - tril(C, -1)^T,
#   dQ = dA R^{-1} - Q C + Q O,  dR = (C - O) R;
#   gA = (gQ + Q copyltu(M)) R^{-T},  M = R gR^T - gQ^T Q,
# copyltu(M) the symmetric matrix with M's lower triangle. For m < n, A = [X | Y] with X
# square: X = Q U is the square case and the rest of R is Q^T Y.


def _copyltu(x):
    low = fnp.tril(x, -1)
    return low + mT(low) + x * eye_like(shape(x)[-1], x)


def _right_solve_t(b, r):
    """b R^{-T}, i.e. the solution of X R^T = b."""
    return mT(solve(r, mT(b)))


def _vjp_qr_tall(gq, gr, q, r):
    m = fnp.matmul(r, mT(gr)) - fnp.matmul(mT(gq), q)
    return _right_solve_t(gq + fnp.matmul(q, _copyltu(m)), r)


def _jvp_qr_tall(t, q, r):
    dar = mT(solve(mT(r), mT(t)))          # dA R^{-1}
    c = fnp.matmul(mT(q), dar)
    low = fnp.tril(c, -1)
    o = low - mT(low)
    return dar + fnp.matmul(q, o - c), fnp.matmul(c - o, r)


def _vjp_qr(g, ans, a):
    _real_only("qr", a)
    gq, gr = g
    q, r = ans
    m, n = shape(a)[-2:]
    if m >= n:
        return _vjp_qr_tall(gq, gr, q, r)
    y = a[..., m:]
    gu, gv = gr[..., :m], gr[..., m:]
    gx = _vjp_qr_tall(gq + fnp.matmul(y, mT(gv)), gu, q, r[..., :m])
    return fnp.concatenate([gx, fnp.matmul(q, gv)], axis=-1)


def _jvp_qr(t, ans, a):
    _real_only("qr", a)
    q, r = ans
    m, n = shape(a)[-2:]
    if m >= n:
        return _jvp_qr_tall(t, q, r)
    dq, du = _jvp_qr_tall(t[..., :m], q, r[..., :m])
    dv = fnp.matmul(mT(dq), a[..., m:]) + fnp.matmul(mT(q), t[..., m:])
    return dq, fnp.concatenate([du, dv], axis=-1)


defvjp(_qr_p, _vjp_qr)
defjvp(_qr_p, _jvp_qr)
defbatch(_qr_p, stack_batch(_qr_p, core=(2,) * 4))

# ----------------------------------------------------------------------------- public functions


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices, as `numpy.linalg.eigh`.

    Only the `UPLO` triangle of `a` (and the real part of its diagonal) is read, and the
    derivative is that of what is read: zero for the other triangle, the read off-diagonal
    entries counted twice (autograd's convention; for a symmetric `a` built from other
    values the gradient of those is PyTorch's and JAX's). Eigenvector derivatives assume
    distinct eigenvalues.

    Returns:
      EighResult(eigenvalues, eigenvectors), shapes (..., M) and (..., M, M).

    Example:
      w, v = fnp.linalg.eigh(a)
    """
    a, UPLO = _read_triangle(check_square(a, "eigh"), UPLO, "eigh")
    return EighResult(*_eigh_p(a, UPLO))


def eigvalsh(a, UPLO="L"):
    """Eigenvalues (ascending) of symmetric matrices, as `numpy.linalg.eigvalsh`.

    Only the `UPLO` triangle is read, and differentiated (see eigh).

    Example:
      w = fnp.linalg.eigvalsh(a)
    """
    a, UPLO = _read_triangle(check_square(a, "eigvalsh"), UPLO, "eigvalsh")
    return _eigvalsh_p(a, UPLO)


def _read_triangle(a, UPLO, fname):
    """(`a`, UPLO): a traced `a` becomes the Hermitian matrix read from its UPLO triangle, so
    that derivatives are those of NumPy's forward."""
    uplo = UPLO.upper() if isinstance(UPLO, str) else UPLO
    if uplo not in ("L", "U"):
        raise ValueError(f"fnad.numpy.linalg.{fname}: UPLO must be 'L' or 'U', got {UPLO!r}.")
    if any_traced(a):
        a = from_triangle(a, lower=uplo == "L")
    return a, uplo


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition, as `numpy.linalg.svd`.

    Gradients need the reduced factors: differentiating the full SVD of a non-square matrix
    refuses (the extra columns of U or V are not unique; pass full_matrices=False); jit and
    vmap of it work. Singular-vector
    derivatives assume distinct, nonzero singular values.

    Returns:
      SVDResult(U, S, Vh), or only S when compute_uv is False.

    Example:
      u, s, vh = fnp.linalg.svd(a, full_matrices=False)
    """
    a = check_matrix(a, "svd")
    if not any_traced(a):
        kw = {"hermitian": True} if hermitian else {}
        res = np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv, **kw)
        return SVDResult(*res) if compute_uv else res
    if not compute_uv:
        return _svdvals_p(a)
    return SVDResult(*_svd_p(a, full_matrices=bool(full_matrices)))


def svdvals(x, /):
    """Singular values (descending), as `numpy.linalg.svdvals`.

    Example:
      s = fnp.linalg.svdvals(a)
    """
    x = check_matrix(x, "svdvals")
    return _svdvals_p(x)


def qr(a, mode="reduced"):
    """QR decomposition, as `numpy.linalg.qr`.

    Differentiable for mode 'reduced' and 'r' (and 'complete' when M <= N, where it is the
    same); R must be invertible in its leading square block.

    Returns:
      QRResult(Q, R) for 'reduced'/'complete', R for 'r', (h, tau) for 'raw'.

    Example:
      q, r = fnp.linalg.qr(a)
    """
    a = check_matrix(a, "qr")
    if not any_traced(a):
        res = np.linalg.qr(a, mode=mode)
        return QRResult(*res) if mode in ("reduced", "complete") else res
    m, n = shape(a)[-2:]
    if mode == "raw" or (mode == "complete" and m > n):
        raise ValueError(f"fnad.numpy.linalg.qr: mode={mode!r} is not differentiable for shape "
                         f"{shape(a)}; use mode='reduced' (or 'r').")
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"fnad.numpy.linalg.qr: unrecognized mode {mode!r}; use 'reduced', "
                         "'complete', 'r' or 'raw'.")
    q, r = _qr_p(a)
    return r if mode == "r" else QRResult(q, r)

# ----------------------------------------------------------------------------- abstract evaluation


def _svd_shapes(a, full_matrices=False):
    u, s, vh = _reduced_shapes(a)
    m, n = a.shape[-2:]
    return (u[:-1] + (m,), s, vh[:-2] + (n, n)) if full_matrices else (u, s, vh)


def _reduced_shapes(a):
    """(m, k), (k,), (k, n) with k = min(m, n), behind a's batch axes: the shapes of the
    reduced SVD's u, s, vh (and of QR's q, r without the middle one)."""
    b, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    return b + (m, k), b + (k,), b + (k, n)


def _qr_shapes(a):
    q, _, r = _reduced_shapes(a)
    return q, r


defabstract_eval(_eigh_p, linalg_rule(as_primitive(_eigh_p).impl,
                                      lambda a, *args: (a.shape[:-1], a.shape)))
defabstract_eval(_eigvalsh_p, linalg_rule(as_primitive(_eigvalsh_p).impl,
                                          lambda a, *args: a.shape[:-1]))
defabstract_eval(_svd_p, linalg_rule(as_primitive(_svd_p).impl, _svd_shapes))
defabstract_eval(_svdvals_p, linalg_rule(as_primitive(_svdvals_p).impl,
                                         lambda a: _reduced_shapes(a)[1]))
defabstract_eval(_qr_p, linalg_rule(as_primitive(_qr_p).impl, _qr_shapes))
