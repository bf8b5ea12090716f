"""The principal matrix square root, as `scipy.linalg.sqrtm`: a primitive differentiated
through the Sylvester equation X dX + dX X = dA.

The root is the principal one: eigenvalues sqrt(lambda) with real part >= 0, and i sqrt(r)
for an eigenvalue -r on the negative real axis (SciPy's choice). A real matrix whose root
is complex (a negative real eigenvalue) gives a complex result, as SciPy; the dtype depends
on the values, so inside jit (no values) the result keeps the input's dtype and a real
matrix with a complex root raises an error that says to pass it as complex.

Methods: a Hermitian (real symmetric) matrix by its eigendecomposition, V sqrt(w) V^H;
any other matrix by the Denman-Beavers iteration Y -> (Y + Z^{-1}) / 2, Z -> (Z + Y^{-1}) / 2
from Y = A, Z = I, which converges to the principal root when no eigenvalue lies on the
closed negative real axis. Eigenvalues on that axis are first turned off it: with
A' = e^{-i t} A (t below half the angle between the cut and the nearest eigenvalue under
it, so none crosses), sqrtm(A) = e^{i t / 2} sqrtm(A').
"""

import math

import numpy as np

from .._core.abstract import same_rule
from .._core.backend import array_module
from .._batching.families import stack_batch
from .._core.rules import defabstract_eval, defbatch, defjvp, defvjp
from .._core.tracer import getval
from ..numpy._linalg import check_square
from ..numpy._util import is_staged, wrap
from ._linalg import _as_float, _name, mT, solve_sylvester


def _host(a):
    """`a` as a NumPy array (eigenvalues of a general matrix are found on the host: CuPy
    has no general eigensolver)."""
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _is_hermitian(a):
    return bool((a == np.conj(np.swapaxes(a, -1, -2))).all())


def _small(w, n):
    """Eigenvalue magnitudes at rounding level: n eps max|w| per matrix."""
    return n * np.finfo(np.float64).eps * np.max(np.abs(w), axis=-1, keepdims=True)


def root_is_complex(a):
    """True when the real matrix `a` has a negative real eigenvalue (beyond rounding): its
    principal square root is then complex."""
    a = _host(a).astype(np.float64)
    if a.size == 0:
        return False
    n = a.shape[-1]
    if _is_hermitian(a):
        w = np.linalg.eigvalsh(a)
        return bool((w < -_small(w, n)).any())
    w = np.linalg.eigvals(a)  # real eigenvalues of a real matrix have imaginary part 0
    return bool(((w.imag == 0) & (w.real < -_small(w, n))).any())


def _complex_root_error():
    return ValueError(
        f"{_name('sqrtm')}: the matrix is real but has a negative real eigenvalue, so its "
        "principal square root is complex; inside jit the result's dtype cannot depend on "
        "the values: pass the matrix as complex (a + 0j) to get the complex root.")


def _hermitian_root(xp, a):
    w, v = xp.linalg.eigh(a)
    if a.dtype.kind == "f":
        w = xp.where(w < 0, 0.0, w)  # rounding of a semi-definite matrix's zero eigenvalues
    else:
        w = w.astype(a.dtype)  # sqrt(-r + 0j) = i sqrt(r), the principal root
    return (v * xp.sqrt(w)[..., None, :]) @ xp.conj(mT(v))


def _rotation(a):
    """Per matrix of the stack, the angle t to turn eigenvalues off the negative real axis
    (0 where none is on it). An eigenvalue within rounding of the axis counts as on it, on
    its upper side (i sqrt(r), SciPy's root of a real matrix's negative eigenvalue), so the
    turn takes it there; t stays below half the angle of the nearest eigenvalue beneath."""
    w = np.linalg.eigvals(_host(a))
    tol = 100 * _small(w, w.shape[-1])
    on_cut = (np.abs(w.imag) <= tol) & (w.real < 0)
    below = np.where(w.imag < -tol, np.pi + np.angle(w), np.inf)  # angle above the underside
    t = np.minimum(np.min(below, axis=-1) / 2, math.pi / 2)
    return np.where(on_cut.any(axis=-1), t, 0.0)


def _denman_beavers(xp, a):
    y = a
    z = xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    for _ in range(100):
        y_new = 0.5 * (y + xp.linalg.inv(z))
        z = 0.5 * (z + xp.linalg.inv(y))
        done = float(xp.max(xp.abs(y_new - y))) <= 1e-15 * max(float(xp.max(xp.abs(y_new))),
                                                               1e-300)
        y = y_new
        if done:
            break
    return y


def _sqrtm_impl(a):
    xp = array_module(a)
    dt = a.dtype
    if a.size == 0:
        return a.copy()
    work = a.astype(np.result_type(dt, np.float64))
    if _is_hermitian(_host(work)):
        if dt.kind == "f" and root_is_complex(work):
            raise _complex_root_error()
        return _hermitian_root(xp, work).astype(dt, copy=False)
    if dt.kind == "f":
        if root_is_complex(work):
            raise _complex_root_error()
        return _denman_beavers(xp, work).astype(dt, copy=False)
    t = _rotation(work)
    if not t.any():
        return _denman_beavers(xp, work).astype(dt, copy=False)
    turn = xp.asarray(np.exp(-1j * t)[..., None, None])
    back = xp.asarray(np.exp(0.5j * t)[..., None, None])
    return (_denman_beavers(xp, work * turn) * back).astype(dt, copy=False)


_sqrtm_p = wrap(_sqrtm_impl, "sqrtm")
defvjp(_sqrtm_p, lambda g, ans, a: solve_sylvester(mT(ans), mT(ans), g))
defjvp(_sqrtm_p, lambda t, ans, a: solve_sylvester(ans, ans, t))
defabstract_eval(_sqrtm_p, same_rule)
defbatch(_sqrtm_p, stack_batch(_sqrtm_p))


def sqrtm(a, disp=True, blocksize=64):
    """The principal square root of a matrix, as `scipy.linalg.sqrtm`. Batched.

    A real matrix with a negative real eigenvalue has a complex principal root, returned as
    a complex array (as SciPy; inside jit pass such a matrix as complex, since there the
    dtype cannot follow the values). The derivative solves the Sylvester equation
    X dX + dX X = dA (a real input's gradient is real).

    Example:
      x = fnad.scipy.linalg.sqrtm(a); x @ x   # a
      fnad.scipy.linalg.sqrtm(np.array([[1., 2.], [2., 1.]]))   # complex: eigenvalue -1
    """
    a = check_square(_as_float(a), "sqrtm")
    va = getval(a)
    if is_staged(va):  # jit: no values
        return _sqrtm_p(a)
    if va.size and not bool(array_module(va).all(array_module(va).isfinite(va))):
        raise ValueError(f"{_name('sqrtm')}: the matrix has non-finite entries.")
    if va.dtype.kind == "f" and root_is_complex(va):
        a = a + np.complex64(0)  # complex64 for float32, complex128 for float64
    return _sqrtm_p(a)
