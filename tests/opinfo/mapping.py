"""One table: each of PyTorch's OpInfos (by "name" or "name.variant") to its fnad counterpart,
with the argument adapter where torch's signature differs. The elementwise, reduction, shape
and indexing families are here; linear algebra, FFT, special functions and fnad_nn are in
tests/opinfo/mapping_more.py, merged into `MAPPING` at the bottom. Deliberate differences from
torch and the defects still open are in tests/opinfo/known.py."""

import numpy as np

import fnad.numpy as fnp
import fnad.scipy.special as sp
from tests.opinfo.adapt import (Entry, Skip, ax, bi, dtype_of, kw, minmax_dim, moments, none,
                                pairs, real_only, red, sections, split_sizes, un)

__all__ = ["MAPPING", "Skip"]
E = Entry
NOGRAD = "no gradient (integer or boolean result)"
BY_VALUE = "result shape depends on the values: jit refuses with AbstractEvalError, as JAX does"
EXPIT = "fnad.scipy.special.expit is real-only, as SciPy's is"
NOCOMPLEX = "NumPy has no complex loop for it; fnad refuses complex input as NumPy does"
SIGN = "sign of a complex number has no derivative in fnad (JAX's choice; docs/api.md)"


def _sub(x, y, alpha=1, **k):
    none(k)
    return fnp.subtract(x, y * alpha if alpha != 1 else y)


def _add(x, y, alpha=1, **k):
    none(k)
    return fnp.add(x, y * alpha if alpha != 1 else y)


def _div(mode):
    def run(x, y, rounding_mode=None, **k):
        none(k)
        q = fnp.divide(x, y)
        return {None: q, "trunc": fnp.trunc(q) if mode == "trunc" else q,
                "floor": fnp.floor(q) if mode == "floor" else q}[rounding_mode]
    return run


def _clamp(x, lo=None, hi=None, **k):
    none(k)
    if lo is None and hi is None:
        raise Skip("clamp with neither bound")
    if lo is None:
        return fnp.minimum(x, hi)
    if hi is None:
        return fnp.maximum(x, lo)
    return fnp.minimum(fnp.maximum(x, lo), hi)   # torch: min(max(x, lo), hi), even if lo > hi


def _isclose(f):
    def run(x, y, rtol=1e-5, atol=1e-8, equal_nan=False, **k):
        none(k)
        return f(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return run


def _round(x, decimals=0, **k):
    none(k)
    return fnp.round(x, decimals)


def _nan_to_num(x, nan=0.0, posinf=None, neginf=None, **k):
    none(k)
    return fnp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def _cast(dtype):
    def run(x, **k):
        none(k)
        return fnp.astype(x, dtype)
    return run


def _like(f):
    def run(x, *args, **k):
        d = dtype_of(k)
        none(k)
        return f(x, *args, dtype=d)
    return run


def _create(f):
    def run(*args, **k):
        d = dtype_of(k, np.float32)
        none(k)
        args = [a[0] if isinstance(a, tuple) and len(a) == 1 and isinstance(a[0], tuple)
                else a for a in args]
        return f(*args, dtype=d)
    return run


def _arange(start, end=None, step=1, **k):
    d = dtype_of(k)
    none(k)
    if end is None:
        start, end = 0, start
    if d is None or isinstance(start, bool):
        raise Skip("arange without dtype (torch infers int64/float32)")
    return fnp.arange(start, end, step, dtype=d)


def _linspace(start, end, steps, **k):
    d = dtype_of(k, np.float32)
    none(k)
    if np.ndim(start) or not np.issubdtype(d, np.inexact):
        raise Skip("linspace with a tensor bound or an integer dtype (torch truncates)")
    return fnp.linspace(start, end, steps, dtype=d)


def _logspace(start, end, steps, base=10.0, **k):
    d = dtype_of(k, np.float32)
    none(k)
    if np.ndim(start) or not np.issubdtype(d, np.inexact):
        raise Skip("logspace with a tensor bound or an integer dtype (torch truncates)")
    return fnp.logspace(start, end, steps, base=base, dtype=d)


def _eye(n, m=None, **k):
    d = dtype_of(k, np.float32)
    none(k)
    return fnp.eye(n, m, dtype=d)


def _sum(f):
    def run(x, dim=None, keepdim=False, **k):
        d = dtype_of(k)
        none(k)
        return f(x, axis=ax(dim), keepdims=keepdim, dtype=d)
    return run


def _prod(x, dim=None, keepdim=False, **k):
    d = dtype_of(k)
    none(k)
    return fnp.prod(x, axis=dim, keepdims=keepdim, dtype=d)


def _cum(f):
    def run(x, dim, **k):
        d = dtype_of(k)
        none(k)
        return f(x, axis=dim, dtype=d)
    return run


def _logcumsumexp(x, dim, **k):
    none(k)
    m = fnp.max(fnp.real(x)) if np.size(x) else 0.0
    m = fnp.where(fnp.isfinite(m), m, 0.0)
    return fnp.log(fnp.cumsum(fnp.exp(x - m), axis=dim)) + m


def _logsumexp(x, dim, keepdim=False, **k):
    none(k)
    return sp.logsumexp(x, axis=ax(dim), keepdims=keepdim)


def _aminmax(x, dim=None, keepdim=False, **k):
    none(k)
    return fnp.min(x, axis=dim, keepdims=keepdim), fnp.max(x, axis=dim, keepdims=keepdim)


def _count_nonzero(x, dim=None, **k):
    none(k)
    return fnp.count_nonzero(x, axis=ax(dim))


def _argext(f):
    def run(x, dim=None, keepdim=False, **k):
        none(k)
        return f(x, axis=dim, keepdims=keepdim) if dim is not None else f(x)
    return run


def _trapz(f):
    def run(y, x=None, *, dx=None, dim=-1, **k):
        none(k)
        if x is not None and np.ndim(x) == 0:
            dx, x = x, None
        return f(y, x=x, dx=1.0 if dx is None else dx, axis=dim)
    return run


def _diff(x, n=1, dim=-1, prepend=None, append=None, **k):
    none(k)
    return fnp.diff(x, n, axis=dim, prepend=prepend, append=append)


def _cross(x, y, dim=None, **k):
    none(k)
    if dim is None:
        dim = next(i for i, s in enumerate(np.broadcast_shapes(np.shape(x), np.shape(y)))
                   if s == 3)
    return fnp.cross(x, y, axis=dim)


# ----------------------------------------------------------------------------- shape

def _expand(x, *shape, **k):
    none(k)
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    lead = len(shape) - np.ndim(x)
    full = tuple(np.shape(x)[i - lead] if s == -1 else s for i, s in enumerate(shape))
    return fnp.broadcast_to(x, full)


def _reshape(x, *shape, **k):
    none(k)
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    return fnp.reshape(x, tuple(shape))


def _flatten(x, start_dim=0, end_dim=-1, **k):
    none(k)
    s = np.shape(x)
    if not s:
        return fnp.reshape(x, (1,))
    a, b = start_dim % len(s), end_dim % len(s)
    return fnp.reshape(x, s[:a] + (-1,) + s[b + 1:])


def _unflatten(x, dim, sizes, **k):
    none(k)
    s = np.shape(x)
    d = dim % len(s)
    return fnp.reshape(x, s[:d] + tuple(sizes) + s[d + 1:])


def _squeeze(x, dim=None, **k):
    none(k)
    if dim is None:
        return fnp.squeeze(x)
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    keep = tuple(d for d in dims if np.ndim(x) and np.shape(x)[d] == 1)
    return fnp.squeeze(x, axis=keep) if keep else x


def _permute(x, *dims, **k):
    none(k)
    dims = dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    return fnp.transpose(x, tuple(dims))


def _roll(x, shifts, dims=None, **k):
    none(k)
    return fnp.roll(x, shifts, axis=ax(dims))


def _rot90(x, k=1, dims=(0, 1), **kws):
    none(kws)
    return fnp.rot90(x, k, axes=tuple(dims))


def _flip(x, dims, **k):
    none(k)
    return fnp.flip(x, axis=tuple(dims)) if len(dims) else x


def _cat(f):
    def run(xs, dim=0, **k):
        none(k)
        xs = [a for a in xs if not (np.ndim(a) == 1 and np.shape(a)[0] == 0)] or xs
        return f(list(xs), axis=dim)
    return run


def _split(x, size, dim=0, **k):
    none(k)
    n = np.shape(x)[dim]
    ids = split_sizes(n, size) if isinstance(size, int) else sections(size)
    return tuple(fnp.split(x, ids, axis=dim))


def _chunk(x, chunks, dim=0, **k):
    none(k)
    n = np.shape(x)[dim]
    size = -(-n // chunks)
    return tuple(fnp.split(x, split_sizes(n, size), axis=dim))


def _tensor_split(x, ind, dim=0, **k):
    none(k)
    if np.ndim(ind) == 1:
        ind = [int(i) for i in ind]
    elif np.ndim(ind) == 0 and not isinstance(ind, int):
        ind = int(ind)
    return tuple(fnp.array_split(x, ind, axis=dim))


def _nsplit(f):
    def run(x, ind, **k):
        none(k)
        return tuple(f(x, ind))
    return run


def _unbind(x, dim=0, **k):
    none(k)
    return tuple(fnp.moveaxis(x, dim, 0)[i] for i in range(np.shape(x)[dim]))


def _repeat(x, *reps, **k):
    none(k)
    reps = reps[0] if len(reps) == 1 and isinstance(reps[0], (tuple, list)) else reps
    return fnp.tile(x, tuple(reps)) if len(reps) else x


def _repeat_interleave(x, repeats=None, dim=None, output_size=None, **k):
    none(k)
    if np.ndim(repeats):
        repeats = np.asarray(repeats)
    return fnp.repeat(x, repeats, axis=dim)


def _narrow(x, dim, start, length, **k):
    none(k)
    start = int(start) % np.shape(x)[dim] if np.shape(x)[dim] else 0
    idx = [slice(None)] * np.ndim(x)
    idx[dim] = slice(start, start + length)
    return x[tuple(idx)]


def _select(x, dim, index, **k):
    none(k)
    return fnp.take(x, index, axis=dim)


def _diag(x, diagonal=0, **k):
    none(k)
    return fnp.diag(x, diagonal)


def _diagonal(x, offset=0, dim1=0, dim2=1, **k):
    none(k)
    return fnp.diagonal(x, offset, dim1, dim2)


def _diag_embed(x, offset=0, dim1=-2, dim2=-1, **k):
    none(k)
    n = np.shape(x)[-1] + abs(offset)
    out = fnp.zeros(np.shape(x)[:-1] + (n, n), x.dtype)
    i = np.arange(np.shape(x)[-1])
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    out = fnp.at(out)[..., r, c].set(x)
    nd = np.ndim(out)
    d1, d2 = dim1 % nd, dim2 % nd
    rest = [a for a in range(nd) if a not in (d1, d2)]
    order = [0] * nd
    for src, dst in zip(rest + [nd - 2, nd - 1], list(range(nd - 2)) + [nd - 2, nd - 1]):
        order[dst] = src
    src_axes = list(range(nd - 2)) + [nd - 2, nd - 1]
    dst_axes = rest + [d1, d2]
    return fnp.moveaxis(out, src_axes, dst_axes)


def _tri(f):
    def run(x, diagonal=0, **k):
        none(k)
        return f(x, diagonal)
    return run


def _pad(mode):
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
               "circular": "wrap"}

    def run(x, pad, m=mode, value=None, **k):
        k = dict(k)
        m = k.pop("mode", m)
        value = k.pop("value", value)
        none(k)
        if isinstance(m, (int, float)):
            m, value = "constant", m
        if any(p < 0 for p in pad):
            raise Skip("negative padding (a crop)")
        width = pairs(pad, np.ndim(x))
        if m == "constant":
            return fnp.pad(x, width, constant_values=0 if value is None else value)
        return fnp.pad(x, width, mode=np_mode[m])
    return run


def _masked_fill(x, mask, value, **k):
    none(k)
    return fnp.where(mask, value, x)


def _where(x, cond, y, **k):
    none(k)
    return fnp.where(cond, x, y)


def _no0d(x):
    if np.ndim(x) == 0:
        raise Skip("0-d input: NumPy indexes no axis of a 0-d array")


def _index_select(x, dim, index, **k):
    none(k)
    _no0d(x)
    return fnp.take(x, np.asarray(index).reshape(-1), axis=dim)


def _gather(x, dim, index, **k):
    k = kw(k, sparse_grad="sparse_grad")
    if k.get("sparse_grad"):
        raise Skip("sparse_grad")
    index = np.asarray(index)
    if index.ndim == 0 or np.ndim(x) == 0:
        return fnp.reshape(x, (1,) * index.ndim)[tuple([0] * index.ndim)] + 0 * index
    crop = tuple(slice(None) if d == dim % index.ndim else slice(0, s)
                 for d, s in enumerate(index.shape))
    return fnp.take_along_axis(x[crop], index, axis=dim)


def _take_along_dim(x, index, dim=None, **k):
    none(k)
    if dim is None:
        return fnp.take_along_axis(fnp.ravel(x), np.ravel(index), axis=0)
    return fnp.take_along_axis(x, index, axis=dim)


def _take(x, index, **k):
    none(k)
    return fnp.take(fnp.ravel(x), np.asarray(index))


def _index_add(x, dim, index, source, alpha=1, **k):
    none(k)
    _no0d(x)
    idx = (slice(None),) * (dim % max(np.ndim(x), 1)) + (np.asarray(index).reshape(-1),)
    return fnp.at(x)[idx].add(source * alpha if alpha != 1 else source)


def _index_copy(x, dim, index, source, **k):
    none(k)
    _no0d(x)
    if len(np.unique(index)) != np.size(index):
        raise Skip("repeated index (torch leaves the winner unspecified)")
    idx = (slice(None),) * (dim % max(np.ndim(x), 1)) + (np.asarray(index).reshape(-1),)
    return fnp.at(x)[idx].set(source)


def _index_fill(x, dim, index, value, **k):
    none(k)
    _no0d(x)
    if np.ndim(value):
        raise Skip("tensor fill value")
    idx = (slice(None),) * (dim % max(np.ndim(x), 1)) + (np.asarray(index).reshape(-1),)
    return fnp.at(x)[idx].set(value)


def _masked_select(x, mask, **k):
    none(k)
    x, mask = fnp.broadcast_to(x, np.broadcast_shapes(np.shape(x), np.shape(mask))), mask
    return x[np.broadcast_to(mask, np.shape(x))]


def _getitem(x, idx, **k):
    none(k)
    return x[idx]


def _sort(x, dim=-1, descending=False, stable=False, **k):
    none(k)
    if descending:
        raise Skip("descending sort (tie order differs)")
    i = fnp.argsort(x, axis=dim, stable=True)
    return fnp.take_along_axis(x, i, axis=dim), i


def _argsort(x, dim=-1, descending=False, stable=False, **k):
    none(k)
    if descending or not stable:
        raise Skip("unstable or descending argsort (tie order differs)")
    return fnp.argsort(x, axis=dim, stable=True)


def _msort(x, **k):
    none(k)
    return fnp.sort(x, axis=0)


def _nonzero(x, as_tuple=False, **k):
    none(k)
    return tuple(fnp.nonzero(x)) if as_tuple else fnp.argwhere(x)


def _argwhere(x, **k):
    none(k)
    return fnp.argwhere(x)


def _searchsorted(seq, v, out_int32=False, right=False, side=None, sorter=None, **k):
    none(k)
    if np.ndim(seq) != 1 or sorter is not None:
        raise Skip("batched or sorter searchsorted")
    side = side or ("right" if right else "left")
    out = fnp.searchsorted(seq, v, side=side)
    return fnp.astype(out, np.int32) if out_int32 else out


def _lerp(x, y, w, **k):
    none(k)
    return x + w * (y - x)


def _addc(op):
    def run(x, a, b, value=1, **k):
        none(k)
        return x + value * op(a, b)
    return run


def _complex(re, im, **k):
    none(k)
    return re + 1j * im


def _polar(r, theta, **k):
    none(k)
    return r * fnp.cos(theta) + 1j * (r * fnp.sin(theta))


def _float_power(x, y, **k):
    none(k)
    dt = np.complex128 if np.iscomplexobj(x) or np.iscomplexobj(y) else np.float64
    return fnp.power(fnp.astype(x, dt) if np.ndim(x) or hasattr(x, "dtype") else x, y)


def _ldexp(x, e, **k):
    none(k)
    return x * fnp.power(2.0, e)


def _r(op):
    def run(x, other, **k):
        none(k)
        return op(other, x)
    return run


def _rsub(x, other, alpha=1, **k):
    none(k)
    return other - alpha * x


def _frac(x, **k):
    none(k)
    return x - fnp.trunc(x)


def _zero(x, **k):
    none(k)
    return fnp.zeros_like(x)


def _full_like(x, v, **k):
    d = dtype_of(k)
    none(k)
    return fnp.full_like(x, v, dtype=d)


def _fill(x, value, **k):
    none(k)
    return fnp.full_like(x, value)


def _sgn(x):
    return fnp.sign(x)


def _logit(x, eps=None, **k):
    none(k)
    if eps is not None:
        x = fnp.clip(x, eps, 1 - eps)
    return sp.logit(x)


def _xlogy(f):
    def run(x, y, **k):
        none(k)
        return f(x, y)
    return run


def _T(x):
    return fnp.transpose(x) if np.ndim(x) <= 2 else fnp.transpose(x)


def _mT(x):
    return fnp.swapaxes(x, -1, -2)


def _transpose(x, d0, d1, **k):
    none(k)
    return fnp.swapaxes(x, d0, d1)


def _movedim(x, src, dst, **k):
    none(k)
    return fnp.moveaxis(x, src, dst)


def _unsqueeze(x, dim, **k):
    none(k)
    return fnp.expand_dims(x, dim)


def _tile(x, reps, **k):
    none(k)
    return fnp.tile(x, tuple(reps))


def _broadcast_to(x, shape, **k):
    none(k)
    return fnp.broadcast_to(x, tuple(shape))


def _broadcast_tensors(*xs, **k):
    none(k)
    return tuple(fnp.broadcast_arrays(*xs))


def _meshgrid(*xs, indexing="ij", **k):
    none(k)
    if len(xs) == 1 and isinstance(xs[0], (list, tuple)):
        xs = xs[0]
    return tuple(fnp.meshgrid(*xs, indexing=indexing))


def _block_diag(*xs, **k):
    none(k)
    from fnad.scipy.linalg import block_diag
    return block_diag(*[fnp.atleast_2d(a) if np.ndim(a) < 2 else a for a in xs])


def _stack_fn(f):
    def run(xs, **k):
        none(k)
        return f(list(xs))
    return run


SECTIONS = {}
SECTIONS["elementwise"] = {
    "abs": E(un(fnp.abs)), "acos": E(un(fnp.arccos)), "acosh": E(un(fnp.arccosh)),
    "asin": E(un(fnp.arcsin)), "asinh": E(un(fnp.arcsinh)), "atan": E(un(fnp.arctan)),
    "atanh": E(un(fnp.arctanh)), "ceil": E(un(fnp.ceil)), "cos": E(un(fnp.cos)),
    "cosh": E(un(fnp.cosh)), "deg2rad": E(un(fnp.deg2rad)), "rad2deg": E(un(fnp.rad2deg)),
    "exp": E(un(fnp.exp)), "exp2": E(un(fnp.exp2)), "expm1": E(un(fnp.expm1)),
    "floor": E(un(fnp.floor)), "frac": E(_frac), "log": E(un(fnp.log)),
    "log10": E(un(fnp.log10)), "log1p": E(un(fnp.log1p)), "log2": E(un(fnp.log2)),
    "neg": E(un(fnp.negative)), "positive": E(un(fnp.positive)),
    "reciprocal": E(un(fnp.reciprocal)), "rsqrt": E(un(lambda x: 1 / fnp.sqrt(x))),
    "sqrt": E(un(fnp.sqrt)), "square": E(un(fnp.square)), "sin": E(un(fnp.sin)),
    "sinh": E(un(fnp.sinh)), "tan": E(un(fnp.tan)), "tanh": E(un(fnp.tanh)),
    "trunc": E(un(fnp.trunc)), "sign": E(un(fnp.sign)), "sgn": E(un(_sgn), nograd_complex=SIGN),
    "sinc": E(un(fnp.sinc)), "sigmoid": E(real_only(un(sp.expit), EXPIT)), "angle": E(un(fnp.angle)),
    "conj": E(un(fnp.conj)), "conj_physical": E(un(fnp.conj)),
    "resolve_conj": E(un(fnp.positive)), "resolve_neg": E(un(fnp.positive)),
    "clone": E(un(fnp.copy)), "contiguous": E(un(fnp.positive)),
    "alias_copy": E(un(fnp.copy)), "real": E(un(fnp.real)), "imag": E(un(fnp.imag)),
    "round": E(_round), "round.decimals_0": E(_round), "round.decimals_3": E(_round),
    "round.decimals_neg_3": E(_round), "nan_to_num": E(_nan_to_num),
    "logit": E(_logit), "digamma": E(un(sp.digamma)), "erf": E(un(sp.erf)),
    "erfc": E(un(sp.erfc)), "erfinv": E(un(sp.erfinv)), "lgamma": E(un(sp.gammaln)),
    "i0": E(un(sp.i0)),
    "isfinite": E(un(fnp.isfinite)), "isinf": E(un(fnp.isinf)), "isnan": E(un(fnp.isnan)),
    "isposinf": E(un(fnp.isposinf)), "isneginf": E(un(fnp.isneginf)),
    "isreal": E(un(fnp.isreal)), "signbit": E(un(fnp.signbit)),
    "logical_not": E(un(fnp.logical_not)),
    "add": E(_add), "sub": E(_sub), "mul": E(bi(fnp.multiply)),
    "div.no_rounding_mode": E(_div(None)), "div.trunc_rounding": E(_div("trunc")),
    "div.floor_rounding": E(_div("floor")), "true_divide": E(bi(fnp.true_divide)),
    "floor_divide": E(bi(fnp.floor_divide)), "atan2": E(bi(fnp.arctan2)),
    "fmax": E(bi(fnp.fmax)), "fmin": E(bi(fnp.fmin)), "fmod": E(bi(fnp.fmod)),
    "remainder": E(bi(fnp.remainder)), "maximum": E(bi(fnp.maximum)),
    "minimum": E(bi(fnp.minimum)), "max.binary": E(bi(fnp.maximum)),
    "min.binary": E(bi(fnp.minimum)), "copysign": E(bi(fnp.copysign)),
    "hypot": E(bi(fnp.hypot)), "logaddexp": E(real_only(bi(fnp.logaddexp), NOCOMPLEX)),
    "logaddexp2": E(bi(fnp.logaddexp2)), "xlogy": E(_xlogy(sp.xlogy)),
    "special.xlog1py": E(_xlogy(sp.xlog1py)), "pow": E(bi(fnp.power)),
    "float_power": E(_float_power), "nextafter": E(bi(fnp.nextafter)), "ldexp": E(_ldexp),
    "heaviside": E(bi(fnp.heaviside)), "eq": E(bi(fnp.equal)), "ne": E(bi(fnp.not_equal)),
    "lt": E(bi(fnp.less)), "le": E(bi(fnp.less_equal)), "gt": E(bi(fnp.greater)),
    "ge": E(bi(fnp.greater_equal)), "logical_and": E(bi(fnp.logical_and)),
    "logical_or": E(bi(fnp.logical_or)), "logical_xor": E(bi(fnp.logical_xor)),
    "isclose": E(_isclose(fnp.isclose)), "allclose": E(_isclose(fnp.allclose)),
    "equal": E(bi(fnp.array_equal)), "clamp_max": E(bi(fnp.minimum)),
    "clamp_min": E(bi(fnp.maximum)), "clamp": E(_clamp), "igamma": E(bi(sp.gammainc)),
    "igammac": E(bi(sp.gammaincc)), "complex": E(_complex), "polar": E(_polar),
    "lerp": E(_lerp), "addcmul": E(_addc(fnp.multiply)), "addcdiv": E(_addc(fnp.divide)),
    "__radd__": E(_r(fnp.add)), "__rmul__": E(_r(fnp.multiply)),
    "__rdiv__": E(_r(fnp.divide)), "__rpow__": E(_r(fnp.power)),
    "__rmod__": E(_r(fnp.remainder)), "__rsub__": E(_r(fnp.subtract)),
    "__rmatmul__": E(_r(fnp.matmul)), "rsub": E(_rsub),
    "double": E(_cast(np.float64)), "cdouble": E(_cast(np.complex128)),
    "float": E(_cast(np.float32)), "cfloat": E(_cast(np.complex64)),
    "half": E(_cast(np.float16)), "bool": E(_cast(np.bool_)),
    "zeros_like": E(_like(fnp.zeros_like)), "ones_like": E(_like(fnp.ones_like)),
    "full_like": E(_full_like), "zero_": E(_zero), "fill": E(_fill),
    "zeros": E(_create(fnp.zeros)), "ones": E(_create(fnp.ones)),
    "full": E(_create(fnp.full)), "eye": E(_eye), "arange": E(_arange),
    "linspace": E(_linspace), "logspace": E(_logspace),
}
SECTIONS["reductions"] = {
    "sum": E(_sum(fnp.sum)), "mean": E(_sum(fnp.mean)), "nansum": E(_sum(fnp.nansum)),
    "nanmean": E(_sum(fnp.nanmean)), "prod": E(_prod),
    "amax": E(red(fnp.max)), "amin": E(red(fnp.min)),
    "max.reduction_no_dim": E(minmax_dim(fnp.max, fnp.argmax)),
    "min.reduction_no_dim": E(minmax_dim(fnp.min, fnp.argmin)),
    "max.reduction_with_dim": E(minmax_dim(fnp.max, fnp.argmax)),
    "min.reduction_with_dim": E(minmax_dim(fnp.min, fnp.argmin)),
    "argmax": E(_argext(fnp.argmax)), "argmin": E(_argext(fnp.argmin)),
    "all": E(red(fnp.all)), "any": E(red(fnp.any)), "count_nonzero": E(_count_nonzero),
    "aminmax": E(_aminmax),
    "var": E(moments(fnp.var)), "var.unbiased": E(moments(fnp.var)),
    "std": E(moments(fnp.std)), "std.unbiased": E(moments(fnp.std)),
    "var_mean": E(moments(fnp.var, True)), "var_mean.unbiased": E(moments(fnp.var, True)),
    "std_mean": E(moments(fnp.std, True)), "std_mean.unbiased": E(moments(fnp.std, True)),
    "logsumexp": E(_logsumexp), "cumsum": E(_cum(fnp.cumsum)),
    "cumprod": E(_cum(fnp.cumprod)), "logcumsumexp": E(_logcumsumexp),
    "trapz": E(_trapz(fnp.trapezoid)), "trapezoid": E(_trapz(fnp.trapezoid)),
    "diff": E(_diff), "cross": E(_cross), "linalg.cross": E(_cross),
}
SECTIONS["shape"] = {
    "broadcast_to": E(_broadcast_to), "broadcast_tensors": E(_broadcast_tensors),
    "expand": E(_expand), "expand_copy": E(_expand),
    "expand_as": E(lambda x, y, **k: _expand(x, np.shape(y), **k)),
    "reshape": E(_reshape), "view": E(_reshape), "view_copy": E(_reshape),
    "reshape_as": E(lambda x, y, **k: _reshape(x, np.shape(y), **k)),
    "view_as": E(lambda x, y, **k: _reshape(x, np.shape(y), **k)),
    "ravel": E(un(fnp.ravel)), "flatten": E(_flatten), "unflatten": E(_unflatten),
    "squeeze": E(_squeeze), "squeeze.multiple": E(_squeeze), "squeeze_copy": E(_squeeze),
    "unsqueeze": E(_unsqueeze), "unsqueeze_copy": E(_unsqueeze),
    "permute": E(_permute), "permute_copy": E(_permute), "movedim": E(_movedim),
    "transpose": E(_transpose), "transpose_copy": E(_transpose),
    "T": E(un(_T)), "H": E(un(lambda x: fnp.conj(fnp.transpose(x)))),
    "mT": E(un(_mT)), "mH": E(un(lambda x: fnp.conj(_mT(x)))),
    "t": E(un(_T)), "t_copy": E(un(_T)),
    "flip": E(_flip), "fliplr": E(un(fnp.fliplr)), "flipud": E(un(fnp.flipud)),
    "roll": E(_roll), "rot90": E(_rot90),
    "cat": E(_cat(fnp.concatenate)), "stack": E(_cat(fnp.stack)),
    "hstack": E(_stack_fn(fnp.hstack)), "vstack": E(_stack_fn(fnp.vstack)),
    "dstack": E(_stack_fn(fnp.dstack)), "column_stack": E(_stack_fn(fnp.column_stack)),
    "split": E(_split), "split.list_args": E(_split), "unsafe_split": E(_split),
    "split_with_sizes": E(_split), "split_with_sizes_copy": E(_split),
    "chunk": E(_chunk), "unsafe_chunk": E(_chunk), "tensor_split": E(_tensor_split),
    "hsplit": E(_nsplit(fnp.hsplit)), "vsplit": E(_nsplit(fnp.vsplit)),
    "dsplit": E(_nsplit(fnp.dsplit)), "unbind": E(_unbind), "unbind_copy": E(_unbind),
    "tile": E(_tile), "repeat": E(_repeat), "repeat_interleave": E(_repeat_interleave),
    "narrow": E(_narrow), "narrow_copy": E(_narrow), "select": E(_select),
    "atleast_1d": E(un(fnp.atleast_1d)), "atleast_2d": E(un(fnp.atleast_2d)),
    "atleast_3d": E(un(fnp.atleast_3d)), "meshgrid.variadic_tensors": E(_meshgrid),
    "meshgrid.list_of_tensors": E(_meshgrid), "block_diag": E(_block_diag),
    "diag": E(_diag), "diagflat": E(_tri(fnp.diagflat)), "diagonal": E(_diagonal),
    "diagonal_copy": E(_diagonal), "diag_embed": E(_diag_embed),
    "linalg.diagonal": E(lambda x, offset=0, dim1=-2, dim2=-1, **k:
                         _diagonal(x, offset, dim1, dim2, **k)),
    "tril": E(_tri(fnp.tril)), "triu": E(_tri(fnp.triu)),
    "trace": E(un(fnp.trace)),
    "constant_pad_nd": E(_pad("constant")), "nn.functional.pad.constant": E(_pad("constant")),
    "nn.functional.pad.reflect": E(_pad("reflect")), "nn.functional.pad.replicate": E(_pad("replicate")),
    "nn.functional.pad.circular": E(_pad("circular")),
}
SECTIONS["indexing"] = {
    "where": E(_where), "masked_fill": E(_masked_fill), "masked_select": E(_masked_select, nojit=BY_VALUE, novmap=BY_VALUE),
    "index_select": E(_index_select), "gather": E(_gather),
    "take_along_dim": E(_take_along_dim), "take": E(_take), "index_add": E(_index_add),
    "index_copy": E(_index_copy), "index_fill": E(_index_fill),
    "__getitem__": E(_getitem), "sort": E(_sort), "argsort": E(_argsort, nograd=NOGRAD),
    "msort": E(_msort), "nonzero": E(_nonzero, nograd=NOGRAD, nojit=BY_VALUE),
    "argwhere": E(_argwhere, nograd=NOGRAD, nojit=BY_VALUE,
                  novmap=BY_VALUE), "searchsorted": E(_searchsorted, nograd=NOGRAD),
}


def _merge():
    from tests.opinfo.mapping_more import SECTIONS as MORE
    table = {}
    for section in list(SECTIONS.values()) + list(MORE.values()):
        dup = set(section) & set(table)
        assert not dup, f"mapped twice: {sorted(dup)}"
        table.update(section)
    return table


MAPPING = _merge()
