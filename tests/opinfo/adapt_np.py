"""Argument adapters of the elementwise, reduction, shape and indexing OpInfos for
tests/opinfo/mapping.py: each takes a sample as torch's op does (tensors as arrays) and calls
fnad.numpy, raising `Skip` for an argument fnad has no form for."""

import numpy as np

import fnad.numpy as fnp
import fnad.scipy.special as sp
from tests.opinfo.adapt import Skip, ax, dtype_of, none


def sub(x, y, alpha=1, **k):
    none(k)
    return fnp.subtract(x, y * alpha if alpha != 1 else y)


def add(x, y, alpha=1, **k):
    none(k)
    return fnp.add(x, y * alpha if alpha != 1 else y)


def div(mode):
    def run(x, y, rounding_mode=None, **k):
        none(k)
        q = fnp.divide(x, y)
        return {None: q, "trunc": fnp.trunc(q) if mode == "trunc" else q,
                "floor": fnp.floor(q) if mode == "floor" else q}[rounding_mode]
    return run


def clamp(x, lo=None, hi=None, **k):
    none(k)
    if lo is None and hi is None:
        raise Skip("clamp with neither bound")
    if lo is None:
        return fnp.minimum(x, hi)
    if hi is None:
        return fnp.maximum(x, lo)
    return fnp.minimum(fnp.maximum(x, lo), hi)   # torch: min(max(x, lo), hi), even if lo > hi


def isclose(f):
    def run(x, y, rtol=1e-5, atol=1e-8, equal_nan=False, **k):
        none(k)
        return f(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return run


def round_(x, decimals=0, **k):
    none(k)
    return fnp.round(x, decimals)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None, **k):
    none(k)
    return fnp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def cast(dtype):
    def run(x, **k):
        none(k)
        if np.iscomplexobj(x) and np.dtype(dtype).kind != "c":
            raise Skip("complex to real cast (NumPy and torch warn, dropping the imaginary part)")
        return fnp.astype(x, dtype)
    return run


def like(f):
    def run(x, *args, **k):
        d = dtype_of(k)
        none(k)
        return f(x, *args, dtype=d)
    return run


def create(f):
    def run(*args, **k):
        d = dtype_of(k, np.float32)
        none(k)
        args = [a[0] if isinstance(a, tuple) and len(a) == 1 and isinstance(a[0], tuple)
                else a for a in args]
        return f(*args, dtype=d)
    return run


def arange(start, end=None, step=1, **k):
    d = dtype_of(k)
    none(k)
    if end is None:
        start, end = 0, start
    if d is None or isinstance(start, bool):
        raise Skip("arange without dtype (torch infers int64/float32)")
    return fnp.arange(start, end, step, dtype=d)


def linspace(start, end, steps, **k):
    d = dtype_of(k, np.float32)
    none(k)
    if np.ndim(start) or not np.issubdtype(d, np.inexact):
        raise Skip("linspace with a tensor bound or an integer dtype (torch truncates)")
    return fnp.linspace(start, end, steps, dtype=d)


def logspace(start, end, steps, base=10.0, **k):
    d = dtype_of(k, np.float32)
    none(k)
    if np.ndim(start) or not np.issubdtype(d, np.inexact):
        raise Skip("logspace with a tensor bound or an integer dtype (torch truncates)")
    return fnp.logspace(start, end, steps, base=base, dtype=d)


def eye(n, m=None, **k):
    d = dtype_of(k, np.float32)
    none(k)
    return fnp.eye(n, m, dtype=d)


def sum_(f):
    def run(x, dim=None, keepdim=False, **k):
        d = dtype_of(k)
        none(k)
        return f(x, axis=ax(dim), keepdims=keepdim, dtype=d)
    return run


def prod(x, dim=None, keepdim=False, **k):
    d = dtype_of(k)
    none(k)
    return fnp.prod(x, axis=dim, keepdims=keepdim, dtype=d)


def cum(f):
    def run(x, dim, **k):
        d = dtype_of(k)
        none(k)
        if np.ndim(x) == 0:
            raise Skip("0-d input: NumPy's cumsum/cumprod give shape (1,), torch's ()")
        return f(x, axis=dim, dtype=d)
    return run


def logsumexp(x, dim, keepdim=False, **k):
    none(k)
    return sp.logsumexp(x, axis=ax(dim), keepdims=keepdim)


def aminmax(x, dim=None, keepdim=False, **k):
    none(k)
    return fnp.min(x, axis=dim, keepdims=keepdim), fnp.max(x, axis=dim, keepdims=keepdim)


def count_nonzero(x, dim=None, **k):
    none(k)
    return fnp.count_nonzero(x, axis=ax(dim))


def argext(f):
    def run(x, dim=None, keepdim=False, **k):
        none(k)
        return f(x, axis=dim, keepdims=keepdim) if dim is not None else f(x)
    return run


def trapz(f):
    def run(y, x=None, *, dx=None, dim=-1, **k):
        none(k)
        if x is not None and np.ndim(x) == 0:
            dx, x = x, None
        return f(y, x=x, dx=1.0 if dx is None else dx, axis=dim)
    return run


def diff(x, n=1, dim=-1, prepend=None, append=None, **k):
    none(k)
    return fnp.diff(x, n, axis=dim, prepend=prepend, append=append)


def cross(x, y, dim=None, **k):
    none(k)
    if dim is None:
        dim = next(i for i, s in enumerate(np.broadcast_shapes(np.shape(x), np.shape(y)))
                   if s == 3)
    return fnp.cross(x, y, axis=dim)


def lerp(x, y, w, **k):
    none(k)
    return fnp.add(x, fnp.multiply(w, fnp.subtract(y, x)))   # ufuncs, as staged code


def addc(op):
    def run(x, a, b, value=1, **k):
        none(k)
        return x + value * op(a, b)
    return run


def complex_(re, im, **k):
    none(k)
    return re + 1j * im


def polar(r, theta, **k):
    none(k)
    return r * fnp.cos(theta) + 1j * (r * fnp.sin(theta))


def float_power(x, y, **k):
    none(k)
    dt = np.complex128 if np.iscomplexobj(x) or np.iscomplexobj(y) else np.float64
    return fnp.power(fnp.astype(x, dt) if np.ndim(x) or hasattr(x, "dtype") else x, y)


def ldexp(x, e, **k):
    none(k)
    return x * fnp.power(2.0, e)


def r(op):
    def run(x, other, **k):
        none(k)
        return op(other, x)
    return run


def rsub(x, other, alpha=1, **k):
    none(k)
    return other - alpha * x


def frac(x, **k):
    none(k)
    return x - fnp.trunc(x)


def zero(x, **k):
    none(k)
    return fnp.zeros_like(x)


def full_like(x, v, **k):
    d = dtype_of(k)
    none(k)
    return fnp.full_like(x, v, dtype=d)


def fill(x, value, **k):
    none(k)
    return fnp.full_like(x, value)


def sgn(x):
    return fnp.sign(x)


def logit(x, eps=None, **k):
    none(k)
    if eps is not None:
        x = fnp.clip(x, eps, 1 - eps)
    return sp.logit(x)


def xlogy(f):
    def run(x, y, **k):
        none(k)
        return f(x, y)
    return run
