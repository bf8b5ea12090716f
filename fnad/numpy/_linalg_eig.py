"""General (non-symmetric) eigendecomposition and least squares: eig, eigvals, lstsq.

eig and eigvals of a traced input always return complex arrays (as JAX): NumPy's real
result for a matrix whose eigenvalues happen to be real depends on the values, which a
trace cannot know. On plain arrays they are NumPy's own functions.

Derivatives follow JAX (complex cotangents pair with tangents as Re(sum(g * t))). With
A = V diag(w) V^{-1}, M = V^{-1} dA V and F[i, j] = 1 / (w_j - w_i) off the diagonal:
  dw = diag(M),  dV = V (F o M) - V diag(Re(diag(V^H V (F o M))))   (unit-norm columns)
and the VJP is the transpose of that map. The phase of each eigenvector is not unique, so
only phase-invariant functions of V (|V|, V / V[0], V V^{-1}) have meaningful derivatives.
Eigenvector derivatives need distinct eigenvalues; repeated ones give a RuntimeWarning.
"""

import warnings
from collections import namedtuple

import numpy as np

from .. import numpy as fnp
from .._core.backend import array_module
from .._core.devices import to_numpy
from .._core.tracer import getval
from .._batching.families import stack_batch
from .._core.rules import defabstract_eval, defbatch, defjvp, defvjp
from ._linalg import as_array, check_matrix, check_square, diag_embed, diag_part
from ._linalg import mT, numpy_only, pinv, solve
from ._linalg_decomp import _gap_inverse, svdvals
from ._util import dtype_of, linalg_rule, shape, wrap, wrap_nondiff

EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
LstsqResult = namedtuple("LstsqResult", ["x", "residuals", "rank", "s"])


def _complex_type(dt):
    return np.result_type(dt, np.complex64)


def _on_host(fn, a):
    """fn on NumPy arrays; CuPy has no general eigensolver, so CuPy inputs go through the
    host and their results come back to the device."""
    if isinstance(a, np.ndarray):
        return fn(a)
    xp = array_module(a)
    out = fn(a.get())
    return tuple(xp.asarray(o) for o in out) if isinstance(out, tuple) else xp.asarray(out)


def _eig_np(a):
    w, v = np.linalg.eig(a)
    ct = _complex_type(a.dtype)
    return w.astype(ct, copy=False), v.astype(ct, copy=False)


def _eig_impl(a):
    return _on_host(_eig_np, a)


def _eigvals_impl(a):
    return _on_host(lambda a: np.linalg.eigvals(a).astype(_complex_type(a.dtype), copy=False),
                    a)


_eig_p = wrap(_eig_impl, "eig", multiple_results=True)
_eigvals_p = wrap(_eigvals_impl, "eigvals")


def _concrete(x):
    """The value of `x` when one is known (plain or autodiff-traced), else None."""
    try:
        v = getval(x)
    except Exception:  # a staging tracer has no value
        return None
    return v if hasattr(v, "dtype") and not hasattr(v, "aval") else None


def _warn_repeated(w, fname):
    """Warn when eigenvalues (concrete ones only: rules never read staged values) repeat."""
    w = _concrete(w)
    if w is None or shape(w)[-1] < 2:
        return
    w = np.asarray(w.get() if hasattr(w, "get") else w)
    gap = np.abs(w[..., :, None] - w[..., None, :])
    gap[..., np.arange(w.shape[-1]), np.arange(w.shape[-1])] = np.inf
    scale = np.maximum(np.max(np.abs(w), axis=-1), 1.0)
    if np.any(np.min(gap, axis=(-2, -1)) <= 1e3 * np.finfo(w.dtype).eps * scale):
        warnings.warn(f"fnad.numpy.linalg.{fname}: the matrix has repeated eigenvalues, where "
                      "eigenvector (and eigenvalue) derivatives are undefined; the gradient "
                      "holds inf/nan. Differentiate a symmetric problem with eigh, or a "
                      "function of the eigenvalues that does not need them distinct.",
                      RuntimeWarning, stacklevel=2)


def _to_input_type(g, a):
    """A real input's cotangent/tangent is the real part (JAX's convention)."""
    return g if np.dtype(dtype_of(a)).kind == "c" else fnp.real(g)


# ----------------------------------------------------------------------------- eig


def _gaps(w):
    """_gap_inverse(w), quiet about the infinities of repeated eigenvalues (warned of)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _gap_inverse(w)


def _jvp_eig(t, ans, a):
    w, v = ans
    _warn_repeated(w, "eig")
    m = fnp.matmul(solve(v, t), v)
    dv = fnp.matmul(v, _gaps(w) * m)
    dv = dv - v * fnp.expand_dims(fnp.real(fnp.sum(fnp.conj(v) * dv, axis=-2)), -2)
    return diag_part(m), dv


def _vjp_eig(g, ans, a):
    gw, gv = g
    w, v = ans
    inner = diag_embed(gw)
    if not (isinstance(gv, np.ndarray) and not gv.any()):
        _warn_repeated(w, "eig")
        c = fnp.real(fnp.sum(gv * v, axis=-2))
        gv0 = gv - fnp.conj(v) * fnp.expand_dims(c, -2)
        inner = inner + _gaps(w) * fnp.matmul(mT(v), gv0)
    return _to_input_type(solve(mT(v), fnp.matmul(inner, mT(v))), a)


defvjp(_eig_p, _vjp_eig)
defjvp(_eig_p, _jvp_eig)
defbatch(_eig_p, stack_batch(_eig_p, core=(2,)))


def _jvp_eigvals(t, ans, a):
    _warn_repeated(ans, "eigvals")
    v = _eig_p(a)[1]
    return fnp.sum(solve(v, t) * mT(v), axis=-1)


def _vjp_eigvals(g, ans, a):
    _warn_repeated(ans, "eigvals")
    v = _eig_p(a)[1]
    return _to_input_type(solve(mT(v), fnp.expand_dims(g, -1) * mT(v)), a)


defvjp(_eigvals_p, _vjp_eigvals)
defjvp(_eigvals_p, _jvp_eigvals)
defbatch(_eigvals_p, stack_batch(_eigvals_p, core=(2,)))

defabstract_eval(_eig_p, linalg_rule(_eig_impl, lambda a: (a.shape[:-1], a.shape)))
defabstract_eval(_eigvals_p, linalg_rule(_eigvals_impl, lambda a: a.shape[:-1]))


def eig(a):
    """Eigenvalues and right eigenvectors of square matrices, as `numpy.linalg.eig`.

    Traced inputs give complex results (see the module notes); eigenvector derivatives
    assume distinct eigenvalues and are meaningful for phase-invariant functions of them.

    Returns:
      EigResult(eigenvalues, eigenvectors), shapes (..., M) and (..., M, M).

    Example:
      w, v = fnp.linalg.eig(a)
    """
    a = check_square(a, "eig")
    if numpy_only(a):
        return np.linalg.eig(a)
    return EigResult(*_eig_p(a))


def eigvals(a):
    """Eigenvalues of square matrices, as `numpy.linalg.eigvals` (complex when traced).

    Example:
      w = fnp.linalg.eigvals(a)
    """
    a = check_square(a, "eigvals")
    if numpy_only(a):
        return np.linalg.eigvals(a)
    return _eigvals_p(a)


# ----------------------------------------------------------------------------- lstsq

# the rank is int32, as NumPy's (LAPACK's integer)
_rank_p = wrap_nondiff(lambda s, tol: (s > tol).sum(axis=-1, dtype=np.int32), "lstsq_rank")
defabstract_eval(_rank_p, lambda s, tol: type(s)(s.shape[:-1], np.dtype(np.int32), xp=s.xp))
defbatch(_rank_p, stack_batch(_rank_p, core=(1, 1)))


def lstsq(a, b, rcond=None):
    """Least-squares solution of `a @ x = b`, as `numpy.linalg.lstsq`.

    Also batched: `a` of shape (..., M, N) with `b` of shape (..., M, K), or (M,) for one
    vector. The solution is the minimum-norm one (pinv(a) @ b); it is differentiable in `a`
    and `b` where the rank of `a` is locally constant (always for full rank). Singular values
    at most `rcond` (default machine epsilon * max(M, N)) times the largest count as zero.

    Returns:
      LstsqResult(x, residuals, rank, s): residuals are the squared 2-norms of the columns of
      `b - a @ x` when `a` has rank N < M, else an empty array (as NumPy); rank has no
      derivative; s are the singular values of `a`.

    Example:
      x, res, rank, s = fnp.linalg.lstsq(a, b)
    """
    a = check_matrix(a, "lstsq")
    b = as_array(b)
    m, n = shape(a)[-2:]
    vec = len(shape(b)) == 1
    if (vec and shape(b)[0] != m) or (not vec and shape(b)[-2:-1] != (m,)):
        raise ValueError(f"fnad.numpy.linalg.lstsq: a of shape {shape(a)} (..., M, N) needs b "
                         f"of shape (M,) or (..., M, K) with M = {m}, got {shape(b)}.")
    # no shortcut to NumPy's lstsq (LAPACK's gelsd) for plain arrays: eager and jitted calls
    # take the same path, so they agree bit for bit (with NumPy's to rounding)
    if rcond is None:
        dt = np.result_type(dtype_of(a), dtype_of(b))
        rcond = np.finfo(dt if dt.kind in "fc" else np.float64).eps * max(m, n)
    b2 = fnp.expand_dims(b, -1) if vec else b
    s = svdvals(a)
    rank = _rank_p(s, rcond * fnp.max(s, axis=-1, keepdims=True))
    x = fnp.matmul(pinv(a, rcond), b2)
    known = _concrete(rank)
    if m > n and known is None:  # staged (jit): the rank is unknown, so NumPy's result shape
        # is too; the residuals are given, NaN where a turns out rank-deficient
        resid = fnp.sum(fnp.abs(b2 - fnp.matmul(a, x)) ** 2, axis=-2)
        full = fnp.expand_dims(rank == n, -1) if not vec and len(shape(rank)) else rank == n
        resid = fnp.where(full, resid, fnp.full_like(resid, np.nan))
    elif m > n and np.all(to_numpy(known) == n):  # on a device, the rank is read back
        resid = fnp.sum(fnp.abs(b2 - fnp.matmul(a, x)) ** 2, axis=-2)
    else:
        resid = fnp.zeros_like(x, shape=(0,), dtype=np.finfo(dtype_of(x)).dtype)
    return LstsqResult(x[..., 0] if vec else x, resid, rank, s)
