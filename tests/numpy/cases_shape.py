"""Op table, part 2: shape manipulation, products and indexing (format: cases.py)."""

import numpy as np

import fnad.numpy as fnp
from tests.numpy.casekit import OpCase, make_args, shape_id, torch


def case(name, variant, fun, shapes, tfun=None, domains=None, order=2, **kw):
    domains = domains or ("real",) * len(shapes)
    return OpCase(name, variant, fun, make_args(name, variant, domains, shapes), tfun, order,
                  **kw)


def each(name, shapes_list, fun, tfun=None, label=""):
    """One case per shape tuple in `shapes_list` (a single shape means one argument)."""
    out = []
    for shapes in shapes_list:
        shapes = shapes if shapes and isinstance(shapes[0], tuple) else (shapes,)
        out.append(case(name, (label + " " if label else "") + shape_id(shapes), fun, shapes,
                        tfun))
    return out


def _tsplit(t, sections, dim):
    return list(torch.tensor_split(t, sections, dim))


def _tcat(ts, dim):
    return torch.cat(ts, dim)


X3 = (2, 3, 4)

SHAPE = (
    each("reshape", [(2, 3), (2, 1, 3)], lambda x: fnp.reshape(x, (3, -1)),
         lambda t: t.reshape(3, -1))
    + each("reshape", [(), (1,)], lambda x: fnp.reshape(x, (1, 1)), lambda t: t.reshape(1, 1),
           "to (1,1)")
    + each("ravel", [(2, 3), (2, 1, 3), ()], fnp.ravel, lambda t: torch.ravel(t))
    + each("transpose", [(2, 3), X3], fnp.transpose, lambda t: t.permute(*range(t.ndim)[::-1]))
    + each("transpose", [X3], lambda x: fnp.transpose(x, (1, 2, 0)),
           lambda t: t.permute(1, 2, 0), "axes=(1,2,0)")
    + each("permute_dims", [X3], lambda x: fnp.permute_dims(x, (2, 0, 1)),
           lambda t: t.permute(2, 0, 1))
    + each("matrix_transpose", [X3], fnp.matrix_transpose, lambda t: t.mT)
    + each("swapaxes", [X3, (2, 3)], lambda x: fnp.swapaxes(x, 0, -1),
           lambda t: torch.swapaxes(t, 0, -1))
    + each("moveaxis", [X3], lambda x: fnp.moveaxis(x, 0, -1), lambda t: torch.moveaxis(t, 0, -1))
    + each("moveaxis", [X3], lambda x: fnp.moveaxis(x, (0, 1), (-1, 0)),
           lambda t: torch.moveaxis(t, (0, 1), (-1, 0)), "two axes")
    + each("expand_dims", [(2, 3), ()], lambda x: fnp.expand_dims(x, -1),
           lambda t: torch.unsqueeze(t, -1))
    + each("expand_dims", [(2, 3)], lambda x: fnp.expand_dims(x, (0, 2)),
           lambda t: t[None, :, None], "axis=(0,2)")
    + each("squeeze", [(2, 1, 3), (1, 3)], fnp.squeeze, lambda t: torch.squeeze(t))
    + each("squeeze", [(2, 1, 3)], lambda x: fnp.squeeze(x, axis=1),
           lambda t: torch.squeeze(t, 1), "axis=1")
    + each("broadcast_to", [(3,), (1, 3), (2, 1, 3), ()], lambda x: fnp.broadcast_to(x, (2, 4, 3)),
           lambda t: torch.broadcast_to(t, (2, 4, 3)))
    + each("broadcast_arrays", [((3,), (2, 1))], lambda x, y: fnp.broadcast_arrays(x, y),
           lambda x, y: torch.broadcast_tensors(x, y))
    + each("concatenate", [((2, 3), (1, 3)), ((2, 3), (2, 3))],
           lambda x, y: fnp.concatenate([x, y]), lambda x, y: torch.cat([x, y]))
    + each("concatenate", [((2, 3), (2, 1))], lambda x, y: fnp.concatenate([x, y], axis=-1),
           lambda x, y: torch.cat([x, y], -1), "axis=-1")
    + each("concatenate", [((2, 3), (3,))], lambda x, y: fnp.concatenate([x, y], axis=None),
           lambda x, y: torch.cat([x.reshape(-1), y]), "axis=None")
    + each("concat", [((2, 3), (1, 3))], lambda x, y: fnp.concat([x, y]),
           lambda x, y: torch.cat([x, y]))
    + each("stack", [((2, 3), (2, 3)), ((), ())], lambda x, y: fnp.stack([x, y, x]),
           lambda x, y: torch.stack([x, y, x]))
    + each("stack", [((2, 3), (2, 3))], lambda x, y: fnp.stack([x, y], axis=-1),
           lambda x, y: torch.stack([x, y], -1), "axis=-1")
    + each("hstack", [((2, 3), (2, 1)), ((3,), (2,)), ((), ())],
           lambda x, y: fnp.hstack([x, y]), lambda x, y: torch.hstack([x, y]))
    + each("vstack", [((2, 3), (1, 3)), ((3,), (3,))],
           lambda x, y: fnp.vstack([x, y]), lambda x, y: torch.vstack([x, y]))
    + each("row_stack", [((2, 3), (1, 3))], lambda x, y: fnp.row_stack([x, y]),
           lambda x, y: torch.vstack([x, y]))
    + each("dstack", [((2, 3), (2, 3)), ((3,), (3,))],
           lambda x, y: fnp.dstack([x, y]), lambda x, y: torch.dstack([x, y]))
    + each("column_stack", [((3,), (3, 2))], lambda x, y: fnp.column_stack([x, y]),
           lambda x, y: torch.column_stack([x, y]))
    + each("append", [((2, 3), (1, 3))], lambda x, y: fnp.append(x, y, axis=0),
           lambda x, y: torch.cat([x, y]))
    + each("append", [((2, 3), (2,))], lambda x, y: fnp.append(x, y),
           lambda x, y: torch.cat([x.reshape(-1), y]), "axis=None")
    + each("split", [(2, 4)], lambda x: fnp.split(x, 2, axis=1), lambda t: _tsplit(t, 2, 1))
    + each("split", [(5, 2)], lambda x: fnp.split(x, [1, 3]), lambda t: _tsplit(t, [1, 3], 0),
           "indices")
    + each("array_split", [(5, 2), (2, 1, 3)], lambda x: fnp.array_split(x, 3, axis=-1),
           lambda t: _tsplit(t, 3, -1))
    + each("hsplit", [(2, 4)], lambda x: fnp.hsplit(x, 2), lambda t: list(torch.hsplit(t, 2)))
    + each("vsplit", [(4, 2)], lambda x: fnp.vsplit(x, 2), lambda t: list(torch.vsplit(t, 2)))
    + each("dsplit", [(1, 2, 4)], lambda x: fnp.dsplit(x, 2), lambda t: list(torch.dsplit(t, 2)))
    + each("unstack", [(2, 3)], lambda x: fnp.unstack(x, axis=1),
           lambda t: list(torch.unbind(t, 1)))
    + each("tile", [(3,), (2, 3), ()], lambda x: fnp.tile(x, (2, 2)),
           lambda t: torch.tile(t, (2, 2)))
    + each("tile", [(2, 1, 3)], lambda x: fnp.tile(x, 3), lambda t: torch.tile(t, (3,)), "reps=3")
    + each("repeat", [(2, 3), (2, 1, 3)], lambda x: fnp.repeat(x, 2, axis=1),
           lambda t: torch.repeat_interleave(t, 2, dim=1))
    + each("repeat", [(2, 3)], lambda x: fnp.repeat(x, 3),
           lambda t: torch.repeat_interleave(t.reshape(-1), 3), "axis=None")
    + each("repeat", [(3, 2)], lambda x: fnp.repeat(x, [2, 0, 3], axis=0),
           lambda t: torch.repeat_interleave(t, torch.tensor([2, 0, 3]), dim=0), "counts")
    + each("flip", [(3,), (2, 3), X3], fnp.flip, lambda t: torch.flip(t, tuple(range(t.ndim))))
    + each("flip", [X3], lambda x: fnp.flip(x, -1), lambda t: torch.flip(t, (-1,)), "axis=-1")
    + each("fliplr", [(2, 3)], fnp.fliplr, lambda t: torch.fliplr(t))
    + each("flipud", [(2, 3), (3,)], fnp.flipud, lambda t: torch.flipud(t))
    + each("rot90", [(2, 3), X3], fnp.rot90, lambda t: torch.rot90(t))
    + each("rot90", [X3], lambda x: fnp.rot90(x, 2, (1, 2)), lambda t: torch.rot90(t, 2, (1, 2)),
           "k=2")
    + each("rot90", [(2, 3)], lambda x: fnp.rot90(x, -1), lambda t: torch.rot90(t, -1), "k=-1")
    + each("roll", [(5,), (2, 3)], lambda x: fnp.roll(x, 2), lambda t: torch.roll(t, 2))
    + each("roll", [X3], lambda x: fnp.roll(x, (1, -3), axis=(0, 2)),
           lambda t: torch.roll(t, (1, -3), (0, 2)), "two axes")
    + each("pad", [(2, 3), X3], lambda x: fnp.pad(x, 1),
           lambda t: torch.nn.functional.pad(t, (1, 1) * t.ndim))
    + each("pad", [(2, 3)], lambda x: fnp.pad(x, ((1, 0), (2, 1)), constant_values=2.0),
           lambda t: torch.nn.functional.pad(t, (2, 1, 1, 0), value=2.0), "constant 2")
    + each("pad", [(3, 4)], lambda x: fnp.pad(x, ((0, 0), (2, 1)), mode="reflect"),
           lambda t: torch.nn.functional.pad(t[None], (2, 1), mode="reflect")[0], "reflect")
    + each("pad", [(3, 4)], lambda x: fnp.pad(x, ((0, 0), (2, 3)), mode="edge"),
           lambda t: torch.nn.functional.pad(t[None], (2, 3), mode="replicate")[0], "edge")
    + each("pad", [(3, 4)], lambda x: fnp.pad(x, ((0, 0), (2, 3)), mode="wrap"),
           lambda t: torch.nn.functional.pad(t[None], (2, 3), mode="circular")[0], "wrap")
    + each("pad", [(3, 4)], lambda x: fnp.pad(x, 2, mode="symmetric"), None, "symmetric")
    + each("diagonal", [(3, 3), (2, 3)], fnp.diagonal, lambda t: torch.diagonal(t))
    + each("diagonal", [X3], lambda x: fnp.diagonal(x, 1, 2, 0),
           lambda t: torch.diagonal(t, 1, 2, 0), "offset=1 axes=(2,0)")
    + each("diag", [(3,)], lambda x: fnp.diag(x, -1), lambda t: torch.diag(t, -1), "k=-1")
    + each("diag", [(3, 4)], lambda x: fnp.diag(x, 1), lambda t: torch.diag(t, 1), "k=1")
    + each("diagflat", [(2, 2)], fnp.diagflat, lambda t: torch.diagflat(t))
    + each("trace", [(3, 3), (2, 3)], fnp.trace, lambda t: torch.trace(t))
    + each("trace", [X3], lambda x: fnp.trace(x, -1, 1, 2),
           lambda t: torch.diagonal(t, -1, 1, 2).sum(-1), "offset=-1 axes=(1,2)")
    + each("atleast_1d", [(), (2, 3)], fnp.atleast_1d, lambda t: torch.atleast_1d(t))
    + each("atleast_2d", [(), (3,), (2, 3)], fnp.atleast_2d, lambda t: torch.atleast_2d(t))
    + each("atleast_3d", [(), (3,), (2, 3)], fnp.atleast_3d, lambda t: torch.atleast_3d(t))
    + each("diff", [(5,), (2, 3)], fnp.diff, lambda t: torch.diff(t))
    + each("diff", [(2, 4)], lambda x: fnp.diff(x, 2, axis=1, prepend=0.5),
           lambda t: torch.diff(t, 2, 1, prepend=torch.full((2, 1), 0.5, dtype=t.dtype)),
           "n=2 prepend")
    + each("trapezoid", [(5,), (2, 3)], lambda x: fnp.trapezoid(x, dx=0.5),
           lambda t: torch.trapezoid(t, dx=0.5))
    + each("trapezoid", [((2, 3), (3,))], lambda y, x: fnp.trapezoid(y, x),
           lambda y, x: torch.trapezoid(y, x), "x given")
    + each("tril", [(3, 3), X3], fnp.tril, lambda t: torch.tril(t))
    + each("tril", [(3, 4)], lambda x: fnp.tril(x, -1), lambda t: torch.tril(t, -1), "k=-1")
    + each("triu", [(3, 3), X3], fnp.triu, lambda t: torch.triu(t))
    + each("triu", [(3, 4)], lambda x: fnp.triu(x, 1), lambda t: torch.triu(t, 1), "k=1")
    + each("asarray", [((3,), (3,))], lambda x, y: fnp.asarray([x, y]),
           lambda x, y: torch.stack([x, y]), "list of traced")
    + each("array", [((), ())], lambda x, y: fnp.array([[x, y], [y, x]]),
           lambda x, y: torch.stack([torch.stack([x, y]), torch.stack([y, x])]),
           "nested list")
    + each("astype", [(2, 3)], lambda x: fnp.astype(x, np.float32).astype(np.float64) * 1.0,
           None, "float32 round trip")
    + [case("astype", "to int64 (no derivative) times x (2,3)",
            lambda x: fnp.astype(x, np.int64) * x, ((2, 3),),
            lambda t: t.to(torch.int64) * t, domains=("int",))]
    + each("rollaxis", [X3], lambda x: fnp.rollaxis(x, 2), lambda t: torch.movedim(t, 2, 0))
    + each("rollaxis", [X3], lambda x: fnp.rollaxis(x, 0, 2), lambda t: torch.movedim(t, 0, 1),
           "axis=0 start=2")
    # creation from traced values: the fill value, the end points, the vectors
    + each("full", [(), (3,)], lambda v: fnp.full((2, 3), v), lambda t: t.expand(2, 3))
    + each("full_like", [()], lambda v: fnp.full_like(np.ones((2, 3)), v),
           lambda t: t.expand(2, 3))
    + each("full_like", [(3,)], lambda v: fnp.full_like(np.ones(2), v, shape=(2, 3)),
           lambda t: t.expand(2, 3), "shape=")
    + each("linspace", [((), ())], lambda a, b: fnp.linspace(a, b, 5),
           lambda a, b: a + (b - a) * torch.arange(5, dtype=a.dtype) / 4)
    + each("linspace", [((2,), ())], lambda a, b: fnp.linspace(a, b, 4, endpoint=False,
                                                                 axis=-1),
           lambda a, b: a[:, None] + (b - a)[:, None] * torch.arange(4, dtype=a.dtype) / 4,
           "axis=-1 no endpoint")
    + each("logspace", [((), ())], lambda a, b: fnp.logspace(a, b, 4),
           lambda a, b: 10.0 ** (a + (b - a) * torch.arange(4, dtype=a.dtype) / 3))
    + each("meshgrid", [((2,), (3,))], lambda a, b: fnp.meshgrid(a, b),
           lambda a, b: list(torch.meshgrid(a, b, indexing="xy")))
    + each("meshgrid", [((2,), (3,))], lambda a, b: fnp.meshgrid(a, b, indexing="ij",
                                                                   sparse=True),
           lambda a, b: [a[:, None], b[None, :]], "ij sparse")
    + each("copy", [(2, 3)], fnp.copy, lambda t: t.clone())
)
for _c in SHAPE:
    if "float32" in _c.variant:
        _c.atol, _c.rtol, _c.eps = 1e-4, 1e-4, 1e-2

PRODUCTS = (
    each("matmul", [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)),
                    ((2, 1, 2, 3), (4, 3, 2))],
         fnp.matmul, lambda a, b: torch.matmul(a, b))
    + each("dot", [((2, 3), (3, 4)), ((3,), (3,)), ((), (2, 3)), ((2, 3, 4), (4, 2))],
           fnp.dot, lambda a, b: torch.tensordot(a, b, dims=([a.ndim - 1], [0]))
           if a.ndim and b.ndim else a * b)
    + each("tensordot", [(X3, (3, 4))], fnp.tensordot, lambda a, b: torch.tensordot(a, b))
    + each("tensordot", [(X3, (4, 2))], lambda a, b: fnp.tensordot(a, b, axes=([0, 2], [1, 0])),
           lambda a, b: torch.tensordot(a, b, dims=([0, 2], [1, 0])), "axes lists")
    + each("tensordot", [((2, 3), (3,))], lambda a, b: fnp.tensordot(a, b, axes=0),
           lambda a, b: torch.tensordot(a, b, dims=0), "axes=0")
    + each("inner", [((2, 3), (4, 3)), ((3,), (3,)), ((), (3,))], fnp.inner,
           lambda a, b: torch.inner(a, b))
    + each("outer", [((3,), (4,)), ((2, 2), (3,))], fnp.outer, lambda a, b: torch.outer(
        a.reshape(-1), b.reshape(-1)))
    + each("kron", [((2, 3), (2, 2)), ((3,), (2, 2)), ((2, 1, 2), (2, 3))], fnp.kron,
           lambda a, b: torch.kron(a, b))
    + each("cross", [((3,), (3,)), ((2, 3), (3,)), ((2, 1, 3), (4, 3))], fnp.cross,
           lambda a, b: torch.linalg.cross(*torch.broadcast_tensors(a, b)))
    + each("cross", [((3, 2), (3, 2))], lambda a, b: fnp.cross(a, b, axis=0),
           lambda a, b: torch.linalg.cross(a, b, dim=0), "axis=0")
    + each("vdot", [((2, 3), (2, 3)), ((3,), (3,))], fnp.vdot,
           lambda a, b: torch.vdot(a.reshape(-1), b.reshape(-1)))
    + each("vecdot", [((2, 3), (3,)), ((2, 1, 3), (4, 3))], fnp.vecdot,
           lambda a, b: torch.linalg.vecdot(a, b))
    + each("matvec", [((2, 3), (3,)), ((2, 4, 3), (1, 3))], fnp.matvec,
           lambda a, b: torch.matmul(a, b[..., None])[..., 0])
    + each("vecmat", [((3,), (3, 2)), ((2, 3), (4, 1, 3, 2))], fnp.vecmat,
           lambda a, b: torch.matmul(a[..., None, :], b)[..., 0, :])
)
_EINSUM = [
    ("ij,jk->ik", ((2, 3), (3, 4))),
    ("ij,jk", ((2, 3), (3, 4))),
    ("bij,bjk->bik", ((2, 2, 3), (2, 3, 2))),
    ("ii->i", ((3, 3),)),
    ("ii", ((3, 3),)),
    ("iij,j->i", ((3, 3, 2), (2,))),
    ("ijk->j", ((2, 3, 4),)),
    ("i,i", ((3,), (3,))),
    ("i,j->ij", ((3,), (2,))),
    ("...ij,...jk->...ik", ((2, 2, 3), (3, 2))),
    ("...i,...i->...", ((1, 3), (2, 3))),
    ("i...->...", ((2, 3, 2),)),
    ("ij,jk,kl->il", ((2, 3), (3, 3), (3, 2))),
    ("ab,ab,ab->", ((2, 3), (2, 3), (2, 3))),
    ("iji->j", ((2, 3, 2),)),
]
PRODUCTS += [
    case("einsum", spec, lambda *ops, _s=spec: fnp.einsum(_s, *ops), shapes,
         lambda *ts, _s=spec: torch.einsum(_s, *ts))
    for spec, shapes in _EINSUM
]

# ----------------------------------------------------------------------------- indexing
_REP = np.array([0, 2, 0, 1, 0])
_MASK = np.array([[True, False, True], [False, False, True]])


def _idx_case(variant, shp, index):
    return case("getitem", variant, lambda x: x[index], (shp,), lambda t: t[_tidx(index)])


def _tidx(index):
    """The same index for torch (NumPy integer arrays become tensors)."""
    if isinstance(index, tuple):
        return tuple(_tidx(i) for i in index)
    if isinstance(index, np.ndarray):
        return torch.from_numpy(index)
    return index


def _torch_neg_slice(t):
    return torch.flip(t, (0,))[::2]


INDEXING = [
    _idx_case("int", (2, 3), 1),
    _idx_case("negative int", (2, 3), (-1, -2)),
    _idx_case("slice", (4, 3), slice(1, 3)),
    _idx_case("newaxis ellipsis", (2, 3, 2), (None, Ellipsis, 1)),
    _idx_case("repeated int array", (3, 2), _REP),
    _idx_case("2-d int arrays", (3, 4), (np.array([[0, 2], [2, 2]]), np.array([1, 1]))),
    _idx_case("array + slice", (3, 4), (slice(None), _REP[:3] + 1)),
    _idx_case("bool mask", (2, 3), _MASK),
    _idx_case("bool row mask", (2, 3), np.array([True, False])),
    case("getitem", "negative step", lambda x: x[::-2], ((4, 3),), _torch_neg_slice),
    case("take", "axis=None repeated", lambda x: fnp.take(x, _REP), ((2, 3),),
         lambda t: torch.take(t, torch.from_numpy(_REP))),
    case("take", "axis=1", lambda x: fnp.take(x, _REP[:4], axis=1), ((2, 3),),
         lambda t: torch.index_select(t, 1, torch.from_numpy(_REP[:4]))),
    case("take", "embedding (B,T) ids", lambda w: fnp.take(w, np.array([[1, 0], [1, 1]]), axis=0),
         ((3, 4),), lambda w: torch.nn.functional.embedding(torch.tensor([[1, 0], [1, 1]]), w)),
    case("take_along_axis", "axis=1", lambda x: fnp.take_along_axis(
        x, np.array([[2, 0, 2], [1, 1, 0]]), axis=1), ((2, 3),),
        lambda t: torch.take_along_dim(t, torch.tensor([[2, 0, 2], [1, 1, 0]]), 1)),
    case("take_along_axis", "axis=0 broadcast", lambda x: fnp.take_along_axis(
        x, np.array([[1, 0, 1]]), axis=0), ((2, 3),),
        lambda t: torch.take_along_dim(t, torch.tensor([[1, 0, 1]]), 0)),
    case("sort", "axis=-1", lambda x: fnp.sort(x), ((2, 3),), lambda t: torch.sort(t)[0]),
    case("sort", "axis=0", lambda x: fnp.sort(x, axis=0), ((3, 2),),
         lambda t: torch.sort(t, 0)[0]),
    case("partition", "kth=1 axis=-1", lambda x: fnp.partition(x, 1), ((2, 4),)),
    case("partition", "kth=[0,2] axis=0", lambda x: fnp.partition(x, [0, 2], axis=0),
         ((4, 2),)),
    case("partition", "kth=3 axis=None", lambda x: fnp.partition(x, 3, axis=None), ((2, 3),)),
    case("sort", "axis=None", lambda x: fnp.sort(x, axis=None), ((2, 3),),
         lambda t: torch.sort(t.reshape(-1))[0]),
    case("at.set", "repeated rows", lambda x, v: fnp.at(x)[np.array([0, 2])].set(v),
         ((3, 2), (2, 2)),
         lambda x, v: x.index_put((torch.tensor([0, 2]),), v)),
    case("at.set", "slice scalar-broadcast", lambda x, v: fnp.at(x)[1:].set(v), ((3, 2), (2,)),
         lambda x, v: torch.cat([x[:1], v.expand(2, 2)])),
    case("at.add", "repeated indices", lambda x, v: fnp.at(x)[_REP].add(v), ((3, 2), (5, 2)),
         lambda x, v: x.index_put((torch.from_numpy(_REP),), v, accumulate=True)),
    case("at.add", "2-d index", lambda x, v: fnp.at(x)[_REP[:3], 1].add(v), ((3, 2), (3,)),
         lambda x, v: x.index_put((torch.from_numpy(_REP[:3]), torch.tensor(1)), v,
                                  accumulate=True)),
    case("at.multiply", "unique", lambda x, v: fnp.at(x)[np.array([2, 0])].multiply(v),
         ((3, 2), (2, 2)),
         lambda x, v: torch.stack([x[0] * v[1], x[1], x[2] * v[0]])),
    case("at.multiply", "repeated", lambda x, v: fnp.at(x)[np.array([1, 1])].multiply(v),
         ((3,), (2,)), lambda x, v: torch.stack([x[0], x[1] * v[0] * v[1], x[2]])),
]
