"""The op battery (tests/numpy/cases*.py) on the simulated device: forward values, VJPs and
JVPs equal to NumPy's, every result a device array, and no host-device transfer.

A case's function may close over NumPy constants (index arrays, weights); `on_device`
rebuilds it with those constants on the device, as a user would write it for a GPU.
"""

import functools
import types

import numpy as np

import fnad
from fnad._core.backend import is_device_array
from tests.numpy import cases, cases_linalg, cases_scipy
from tests.numpy.battery import leaves, rel_err
from tests.simdevice import transfers
from tests.simdevice._transfers import paused

ALL_CASES = cases.CASES + cases_linalg.CASES + cases_scipy.CASES
TOL = 1e-8  # normwise, as tests/backend/test_gpu_ops.py on CuPy


def _put(x):
    """A NumPy constant of a case on the device (the case's own data: not counted)."""
    if not (isinstance(x, np.ndarray) and x.ndim > 0):
        return x
    with paused():
        return fnad.device_put(x, "gpu")


def on_device(fun, _seen=None):
    """`fun` with every NumPy array it closes over (closure cells, defaults and the globals
    it names, through nested functions and functools.partial) moved to the device."""
    seen = {} if _seen is None else _seen
    if id(fun) in seen:
        return seen[id(fun)]
    if isinstance(fun, functools.partial):
        out = functools.partial(on_device(fun.func, seen), *map(_move, fun.args, [seen] * len(
            fun.args)), **{k: _move(v, seen) for k, v in fun.keywords.items()})
    elif isinstance(fun, types.FunctionType):
        seen[id(fun)] = fun  # a recursive closure refers to the original
        cells = tuple(types.CellType(_move(c.cell_contents, seen)) if _filled(c) else c
                      for c in fun.__closure__ or ())
        glob = _globals_on_device(fun, seen)
        out = types.FunctionType(fun.__code__, glob, fun.__name__,
                                 tuple(_move(d, seen) for d in fun.__defaults__ or ()),
                                 cells or None)
        out.__kwdefaults__ = {k: _move(v, seen) for k, v in (fun.__kwdefaults__ or {}).items()}
    else:
        return fun
    seen[id(fun)] = out
    return out


def _globals_on_device(fun, seen):
    """`fun`'s globals with the names its code reads rebound: NumPy arrays moved to the
    device, the test tables' own functions made `on_device`, and `np` a NumPy whose array
    constructors build device arrays (an inline `np.array([0, 2])` index or constant)."""
    g = fun.__globals__
    new = {}
    for n in fun.__code__.co_names:
        v = g.get(n)
        if isinstance(v, np.ndarray):
            new[n] = _put(v)
        elif v is np:
            new[n] = DEVICE_NUMPY
        elif isinstance(v, types.FunctionType) and v.__module__.startswith("tests."):
            new[n] = on_device(v, seen)
    return dict(g, **new) if new else g


class _DeviceNumPy:
    """NumPy, except that its array constructors return device arrays."""

    def __getattr__(self, name):
        fn = getattr(np, name)
        if name in ("array", "asarray", "arange", "zeros", "ones", "full", "eye", "linspace"):
            return lambda *a, **k: _put(np.asarray(fn(*a, **k)))
        return fn


DEVICE_NUMPY = _DeviceNumPy()


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _move(v, seen):
    if isinstance(v, np.ndarray):
        return _put(v)
    if isinstance(v, (types.FunctionType, functools.partial)):
        return on_device(v, seen)
    if type(v) in (list, tuple) and any(isinstance(x, np.ndarray) for x in v):
        return type(v)(_move(x, seen) for x in v)
    return v


def _cotangents(out, rng):
    if isinstance(out, (list, tuple)):
        return type(out)(_cotangents(o, rng) for o in out)
    return rng.standard_normal(np.shape(out)).astype(getattr(out, "dtype", np.float64))


def _compare(what, case, ref, got):
    ref, got = leaves(ref), leaves(got)
    assert len(ref) == len(got), f"{case.id} {what}: {len(got)} outputs, NumPy {len(ref)}"
    for r, g in zip(ref, got):
        if r is None:
            continue
        assert is_device_array(g), f"{case.id} {what}: a {type(g).__name__} left the device"
        assert g.dtype == np.asarray(r).dtype, f"{case.id} {what}: dtype {g.dtype} vs {r.dtype}"
        err = rel_err(r, fnad.to_numpy(g))
        assert err <= TOL, f"{case.id} {what}: relative error {err:.2e}"


# Ops whose device path reads values back or goes through the host, by design; the rest
# make no host-device transfer at all.
HOST_PATHS = {
    "getitem": "a boolean mask's count of true entries sizes the result (CuPy reads it too)",
    "repeat": "counts given on the host: the gather index is built there and copied in",
    "at.multiply": "repeated indices are grouped; the number of groups sizes a table",
    "linalg.eig": "CuPy 13 has no general eigensolver: eig runs on the host",
    "linalg.eigvals": "CuPy 13 has no general eigensolver: eigvals runs on the host",
    "linalg.lstsq": "NumPy's residuals have a shape that depends on the rank, read back",
    "scipy.linalg.expm": "the number of squarings comes from the norms, read back",
    "scipy.linalg.sqrtm": "Denman-Beavers iterates until converged (a test read back)",
    "scipy.linalg.lu": "the pivot search runs on the host",
    "scipy.linalg.lu_factor": "the pivot search runs on the host",
    "scipy.linalg.lu_solve": "the pivots become a row order on the host",
    "scipy.integrate.odeint": "adaptive steps: each step's error norm is read back",
    "special.jn": "cupyx.scipy.special has no jn: the NumPy kernel on host copies",
    "special.j1": "its derivative is jn(2, x), which cupyx lacks",
    "special.iv": "cupyx.scipy.special has no iv: the NumPy kernel on host copies",
    "special.ive": "cupyx.scipy.special has no ive: the NumPy kernel on host copies",
    "special.i1": "its derivative is iv(0) and iv(2), which cupyx lacks",
    "special.i1e": "its derivative is ive(0) and ive(2), which cupyx lacks",
    "special.gammainc": "d/da has no cupyx kernel: the NumPy series on host copies",
    "special.gammaincc": "d/da has no cupyx kernel: the NumPy series on host copies",
    "stats.multivariate_normal.logpdf": "a singular covariance is detected (read back)",
    "stats.multivariate_normal.pdf": "a singular covariance is detected (read back)",
    "stats.multivariate_normal.entropy": "a singular covariance is detected (read back)",
}


def check_case(case):
    """Forward, VJP and JVP of `case` on the device against NumPy; no transfer inside
    (but for the ops of HOST_PATHS)."""
    args = tuple(np.asarray(a, np.float64) for a in case.args)
    dargs = fnad.device_put(args, "gpu")
    fun = on_device(case.fun)
    rng = np.random.default_rng(0)
    out, f_vjp = fnad.vjp(case.fun, *args)
    ct = _cotangents(out, rng)
    tangents = tuple(rng.standard_normal(a.shape) for a in args)
    dct, dtan = fnad.device_put((ct, tangents), "gpu")
    with transfers() as log:
        dout, d_vjp = fnad.vjp(fun, *dargs)
        dgrads = d_vjp(dct)
        if "fwd" in case.modes:
            _, dt_out = fnad.jvp(fun, dargs, dtan)
    assert not log.events or case.name in HOST_PATHS, f"{case.id}: {log!r}"
    _compare("forward", case, out, dout)
    _compare("VJP", case, f_vjp(ct), dgrads)
    if "fwd" in case.modes:
        _compare("JVP", case, fnad.jvp(case.fun, args, tangents)[1], dt_out)
