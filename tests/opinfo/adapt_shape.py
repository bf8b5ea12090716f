"""Argument adapters of the shape and indexing OpInfos for tests/opinfo/mapping.py: each
takes a sample as torch's op does (tensors as arrays) and calls fnad.numpy, raising `Skip`
for an argument fnad has no form for."""

import numpy as np

import fnad.numpy as fnp
from tests.opinfo.adapt import Skip, ax, kw, none, pairs, sections, split_sizes


def expand(x, *shape, **k):
    none(k)
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    lead = len(shape) - np.ndim(x)
    full = tuple(np.shape(x)[i - lead] if s == -1 else s for i, s in enumerate(shape))
    return fnp.broadcast_to(x, full)


def reshape(x, *shape, **k):
    none(k)
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    return fnp.reshape(x, tuple(shape))


def flatten(x, start_dim=0, end_dim=-1, **k):
    none(k)
    s = np.shape(x)
    if not s:
        return fnp.reshape(x, (1,))
    a, b = start_dim % len(s), end_dim % len(s)
    return fnp.reshape(x, s[:a] + (-1,) + s[b + 1:])


def unflatten(x, dim, sizes, **k):
    none(k)
    s = np.shape(x)
    d = dim % len(s)
    return fnp.reshape(x, s[:d] + tuple(sizes) + s[d + 1:])


def squeeze(x, dim=None, **k):
    none(k)
    if dim is None:
        return fnp.squeeze(x)
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    keep = tuple(d for d in dims if np.ndim(x) and np.shape(x)[d] == 1)
    return fnp.squeeze(x, axis=keep) if keep else x


def permute(x, *dims, **k):
    none(k)
    dims = dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    return fnp.transpose(x, tuple(dims))


def roll(x, shifts, dims=None, **k):
    none(k)
    return fnp.roll(x, shifts, axis=ax(dims))


def rot90(x, k=1, dims=(0, 1), **kws):
    none(kws)
    return fnp.rot90(x, k, axes=tuple(dims))


def flip(x, dims, **k):
    none(k)
    return fnp.flip(x, axis=tuple(dims)) if len(dims) else x


def cat(f):
    def run(xs, dim=0, **k):
        none(k)
        xs = [a for a in xs if not (np.ndim(a) == 1 and np.shape(a)[0] == 0)] or xs
        return f(list(xs), axis=dim)
    return run


def split(x, size, dim=0, **k):
    none(k)
    n = np.shape(x)[dim]
    ids = split_sizes(n, size) if isinstance(size, int) else sections(size)
    return tuple(fnp.split(x, ids, axis=dim))


def chunk(x, chunks, dim=0, **k):
    none(k)
    n = np.shape(x)[dim]
    size = -(-n // chunks)
    return tuple(fnp.split(x, split_sizes(n, size), axis=dim))


def tensor_split(x, ind, dim=0, **k):
    none(k)
    if np.ndim(ind) == 1:
        ind = [int(i) for i in ind]
    elif np.ndim(ind) == 0 and not isinstance(ind, int):
        ind = int(ind)
    return tuple(fnp.array_split(x, ind, axis=dim))


def nsplit(f):
    def run(x, ind, **k):
        none(k)
        return tuple(f(x, ind))
    return run


def unbind(x, dim=0, **k):
    none(k)
    return tuple(fnp.moveaxis(x, dim, 0)[i] for i in range(np.shape(x)[dim]))


def repeat(x, *reps, **k):
    none(k)
    reps = reps[0] if len(reps) == 1 and isinstance(reps[0], (tuple, list)) else reps
    return fnp.tile(x, tuple(reps)) if len(reps) else x


def repeat_interleave(x, repeats=None, dim=None, output_size=None, **k):
    none(k)
    if np.ndim(repeats):
        repeats = np.asarray(repeats)
    return fnp.repeat(x, repeats, axis=dim)


def narrow(x, dim, start, length, **k):
    none(k)
    start = int(start) % np.shape(x)[dim] if np.shape(x)[dim] else 0
    idx = [slice(None)] * np.ndim(x)
    idx[dim] = slice(start, start + length)
    return x[tuple(idx)]


def select(x, dim, index, **k):
    none(k)
    return fnp.take(x, index, axis=dim)


def diag(x, diagonal=0, **k):
    none(k)
    return fnp.diag(x, diagonal)


def diagonal(x, offset=0, dim1=0, dim2=1, **k):
    none(k)
    return fnp.diagonal(x, offset, dim1, dim2)


def diag_embed(x, offset=0, dim1=-2, dim2=-1, **k):
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


def tri(f):
    def run(x, diagonal=0, **k):
        none(k)
        return f(x, diagonal)
    return run


def pad(mode):
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
               "circular": "wrap"}

    def run(x, pad, m=mode, value=None, **k):
        k = dict(k)
        m = k.pop("mode", m)
        value = k.pop("value", value)
        none(k)
        if isinstance(m, (int, float, complex)):
            m, value = "constant", m
        if any(p < 0 for p in pad):
            raise Skip("negative padding (a crop)")
        width = pairs(pad, np.ndim(x))
        if m == "constant":
            return fnp.pad(x, width, constant_values=0 if value is None else value)
        return fnp.pad(x, width, mode=np_mode[m])
    return run


def masked_fill(x, mask, value, **k):
    none(k)
    return fnp.where(mask, value, x)


def where(x, cond, y, **k):
    none(k)
    return fnp.where(cond, x, y)


def no0d(x):
    if np.ndim(x) == 0:
        raise Skip("0-d input: NumPy indexes no axis of a 0-d array")


def index_select(x, dim, index, **k):
    none(k)
    no0d(x)
    return fnp.take(x, np.asarray(index).reshape(-1), axis=dim)


def gather(x, dim, index, **k):
    k = kw(k, sparse_grad="sparse_grad")
    if k.get("sparse_grad"):
        raise Skip("sparse_grad")
    index = np.asarray(index)
    if np.ndim(x) != index.ndim:
        raise Skip("index of another rank than the input")
    if index.ndim == 0 or np.ndim(x) == 0:
        return fnp.reshape(x, (1,) * index.ndim)[tuple([0] * index.ndim)] + 0 * index
    crop = tuple(slice(None) if d == dim % index.ndim else slice(0, s)
                 for d, s in enumerate(index.shape))
    return fnp.take_along_axis(x[crop], index, axis=dim)


def take_along_dim(x, index, dim=None, **k):
    none(k)
    if dim is None:
        return fnp.take_along_axis(fnp.ravel(x), np.ravel(index), axis=0)
    return fnp.take_along_axis(x, index, axis=dim)


def take(x, index, **k):
    none(k)
    return fnp.take(fnp.ravel(x), np.asarray(index))


def index_add(x, dim, index, source, alpha=1, **k):
    none(k)
    no0d(x)
    idx = (slice(None),) * (dim % max(np.ndim(x), 1)) + (np.asarray(index).reshape(-1),)
    return fnp.at(x)[idx].add(source * alpha if alpha != 1 else source)


def index_copy(x, dim, index, source, **k):
    none(k)
    no0d(x)
    if len(np.unique(index)) != np.size(index):
        raise Skip("repeated index (torch leaves the winner unspecified)")
    idx = (slice(None),) * (dim % max(np.ndim(x), 1)) + (np.asarray(index).reshape(-1),)
    return fnp.at(x)[idx].set(source)


def index_fill(x, dim, index, value, **k):
    none(k)
    no0d(x)
    if np.ndim(value):
        raise Skip("tensor fill value")
    idx = (slice(None),) * (dim % max(np.ndim(x), 1)) + (np.asarray(index).reshape(-1),)
    return fnp.at(x)[idx].set(value)


def masked_select(x, mask, **k):
    none(k)
    x, mask = fnp.broadcast_to(x, np.broadcast_shapes(np.shape(x), np.shape(mask))), mask
    return x[np.broadcast_to(mask, np.shape(x))]


def getitem(x, idx, **k):
    none(k)
    return x[idx]


def sort(x, dim=-1, descending=False, stable=False, **k):
    none(k)
    if np.ndim(x) == 0:
        raise Skip("0-d input: NumPy sorts no axis of a 0-d array")
    if descending:
        raise Skip("descending sort (tie order differs)")
    i = fnp.argsort(x, axis=dim, stable=True)
    return fnp.take_along_axis(x, i, axis=dim), i


def argsort(x, dim=-1, descending=False, stable=False, **k):
    none(k)
    if descending or not stable:
        raise Skip("unstable or descending argsort (tie order differs)")
    return fnp.argsort(x, axis=dim, stable=True)


def msort(x, **k):
    none(k)
    return fnp.sort(x, axis=0)


def nonzero(x, as_tuple=False, **k):
    none(k)
    if np.ndim(x) == 0:
        raise Skip("0-d input: NumPy refuses nonzero of a 0-d array")
    return tuple(fnp.nonzero(x)) if as_tuple else fnp.argwhere(x)


def argwhere(x, **k):
    none(k)
    return fnp.argwhere(x)


def searchsorted(seq, v, out_int32=False, right=False, side=None, sorter=None, **k):
    none(k)
    if np.ndim(seq) != 1 or sorter is not None:
        raise Skip("batched or sorter searchsorted")
    side = side or ("right" if right else "left")
    out = fnp.searchsorted(seq, v, side=side)
    return fnp.astype(out, np.int32) if out_int32 else out


def T(x):
    return fnp.transpose(x) if np.ndim(x) <= 2 else fnp.transpose(x)


def mT(x):
    return fnp.swapaxes(x, -1, -2)


def transpose(x, d0, d1, **k):
    none(k)
    if np.ndim(x) == 0:
        raise Skip("0-d input: NumPy has no axes to swap")
    return fnp.swapaxes(x, d0, d1)


def movedim(x, src, dst, **k):
    none(k)
    return fnp.moveaxis(x, src, dst)


def unsqueeze(x, dim, **k):
    none(k)
    return fnp.expand_dims(x, dim)


def tile(x, reps, **k):
    none(k)
    return fnp.tile(x, tuple(reps))


def broadcast_to(x, shape, **k):
    none(k)
    return fnp.broadcast_to(x, tuple(shape))


def broadcast_tensors(*xs, **k):
    none(k)
    return tuple(fnp.broadcast_arrays(*xs))


def meshgrid(*xs, indexing="ij", **k):
    none(k)
    if len(xs) == 1 and isinstance(xs[0], (list, tuple)):
        xs = xs[0]
    return tuple(fnp.meshgrid(*xs, indexing=indexing))


def block_diag(*xs, **k):
    none(k)
    from fnad.scipy.linalg import block_diag
    return block_diag(*[fnp.atleast_2d(a) if np.ndim(a) < 2 else a for a in xs])


def stack_fn(f):
    def run(xs, **k):
        none(k)
        return f(list(xs))
    return run


def atleast(f):
    """torch.atleast_Nd of one tensor or of a tuple of them."""
    def run(x, *more, **k):
        none(k)
        if isinstance(x, (list, tuple)) or more:
            xs = list(x) + list(more) if isinstance(x, (list, tuple)) else [x, *more]
            return tuple(f(a) for a in xs)
        return f(x)
    return run
