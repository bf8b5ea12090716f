"""Fused CPU kernels for the layers' hot paths, on every core: exact GELU and its cotangent,
the attention softmax and its VJP, layer normalisation and its VJP.

Each function takes plain arrays and returns the result, or None where it does not apply:
not a float32 NumPy array, numba not installed, or `FNAD_CPU_KERNELS=numpy` (a strided
array is copied C-ordered first: whether a kernel runs never depends on the layout).
The caller (fnad_nn's fused primitives) then runs its NumPy formulation, which is the
fallback and passes the same tests. One kernel call reads its inputs once and writes its
output once (NumPy's formulation makes 4-15 passes), and its rows run on all cores
(fnad/kernels/_threads.py). Results agree with the NumPy formulation to float32 rounding:
the loops sum rows in another order and use their own exp (relative error below 2e-7)
and erfc fit (1.2e-7); docs/jit.md states the tolerance, tests/nn/test_cpu_kernels.py
checks it against float64.
"""

import numpy as np

from .._core.settings import setting
from ._threads import run_ranges

__all__ = ["available", "gelu", "gelu_grad_mul", "attention_softmax", "softmax_vjp",
           "normalize", "normalize_vjp"]

_loops = None  # the module of numba loops once imported; False when numba is missing


def _numba_loops():
    global _loops
    if _loops is None:
        try:
            from . import _cpu_numba  # noqa: PLC0415 - optional dependency (numba)
            _loops = _cpu_numba
        except ImportError:
            _loops = False
    return _loops


def available():
    """True when the kernels run (numba importable, FNAD_CPU_KERNELS not 'numpy')."""
    return setting("FNAD_CPU_KERNELS") != "numpy" and bool(_numba_loops())


def _plain32(*arrays):
    """float32 NumPy arrays. Their layout does not matter (`_c` copies a strided one), so
    that jit, which may hand a kernel a fresh array where eager code hands it a view, picks
    the kernel exactly when eager code does and gets the same bits."""
    return all(type(a) is np.ndarray and a.dtype == np.float32 for a in arrays)


def _c(a):
    # not np.ascontiguousarray, which makes a 0-d array 1-d
    return np.asarray(a, order="C")


def _rows(a):
    return a.reshape(-1, a.shape[-1])


def gelu(x):
    """x Phi(x), or None."""
    if not (_plain32(x) and available()):
        return None
    x = _c(x)
    out = np.empty_like(x)
    run_ranges(_loops.gelu_range, x.size, (x.reshape(-1), out.reshape(-1)))
    return out


def gelu_grad_mul(g, x):
    """g (Phi(x) + x phi(x)), or None (also when g and x differ in shape)."""
    if not (_plain32(g, x) and g.shape == x.shape and available()):
        return None
    g, x = _c(g), _c(x)
    out = np.empty_like(x)
    run_ranges(_loops.gelu_grad_mul_range, x.size,
               (g.reshape(-1), x.reshape(-1), out.reshape(-1)))
    return out


def _drop_rows(drop, shape):
    """`drop` as rows that repeat along the rows of an array of `shape` (an empty table for
    None), or False when its broadcasting is not a repetition of whole rows."""
    if drop is None:
        return np.zeros((0, shape[-1]), np.bool_)
    if type(drop) is not np.ndarray or drop.dtype != np.bool_ or drop.ndim > len(shape):
        return False
    core = drop.shape
    while core and core[0] == 1:
        core = core[1:]
    if not core or core != tuple(shape[len(shape) - len(core):]):
        return False
    return np.ascontiguousarray(drop).reshape(-1, shape[-1])


def attention_softmax(s, drop, scale):
    """softmax(s * scale) over the last axis without the positions where `drop` is True
    (zeros for a row with all dropped), or None."""
    if not (_plain32(s) and s.ndim >= 1 and s.shape[-1] and available()):
        return None
    d = _drop_rows(drop, s.shape)
    if d is False:
        return None
    s = _c(s)
    out = np.empty_like(s)
    rows = _rows(s)
    run_ranges(_loops.softmax_rows, rows.shape[0], (rows, d, np.float32(scale), _rows(out)),
               work=s.size)
    return out


def softmax_vjp(g, p, scale):
    """scale * p * (g - sum(g * p, -1)), or None."""
    if not (_plain32(g, p) and g.shape == p.shape and g.ndim >= 1 and available()):
        return None
    g, p = _c(g), _c(p)
    out = np.empty_like(g)
    rows = _rows(g)
    run_ranges(_loops.softmax_vjp_rows, rows.shape[0],
               (rows, _rows(p), np.float32(scale), _rows(out)), work=g.size)
    return out


def normalize(x, eps):
    """((x - mean) / sqrt(var + eps), 1 / sqrt(var + eps)) over the last axis (the second
    with a trailing axis of 1), or None."""
    if not (_plain32(x) and x.ndim >= 1 and x.shape[-1] and available()):
        return None
    x = _c(x)
    out = np.empty_like(x)
    rows = _rows(x)
    rstd = np.empty(x.shape[:-1] + (1,), np.float32)
    run_ranges(_loops.normalize_rows, rows.shape[0],
               (rows, np.float32(eps), _rows(out), rstd.reshape(-1)), work=x.size)
    return out, rstd


def normalize_vjp(g, xhat, x, eps):
    """rstd * (g - mean(g) - xhat * mean(g * xhat)) over the last axis, with
    rstd = 1 / sqrt(var(x) + eps), or None."""
    if not (_plain32(g, xhat, x) and g.shape == xhat.shape == x.shape and g.ndim >= 1
            and g.shape[-1] and available()):
        return None
    g, xhat, x = _c(g), _c(xhat), _c(x)
    out = np.empty_like(g)
    rows = _rows(g)
    run_ranges(_loops.normalize_vjp_rows, rows.shape[0],
               (rows, _rows(xhat), _rows(x), np.float32(eps), _rows(out)), work=g.size)
    return out
