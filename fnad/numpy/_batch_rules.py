"""Batching rules (fnad.vmap) of fnad.numpy's primitives, registered by family: elementwise
ops line their batch axes up, reductions and scans shift `axis`, linalg batches along
leading axes, and the shape and product ops below rewrite their static arguments. Indexing
and scatters are in `_batch_rules_index`."""

import string

import numpy as np

from .. import numpy as fnp
from .._batching.families import (all_to_front, axis_batch, batch_size, elementwise_batch,
                                  keep_batch, logical_ndim, stack_batch, to_front)
from .._batching.vmap import batch_fallback
from .._core.devices import _put
from .._core.tracer import PRIMITIVE_OF, PRIMITIVES
from .._ad.transforms import stop_gradient_p
from .._core.rules import as_primitive
from ._util import shape

_P = {p.name: p for p in PRIMITIVES}


def _fallback(prim, args, dims, kwargs):
    return batch_fallback(prim, args, dims, kwargs, batch_size(args, dims))


def _only_first(dims):
    return all(d is None for d in dims[1:])


# ----------------------------------------------------------------------------- shape ops

def _reshape_rule(args, dims, **kw):
    a, newshape = args[0], args[1]
    order = args[2] if len(args) > 2 else kw.get("order", "C")
    if not _only_first(dims) or order != "C":
        return _fallback(_P["reshape"], args, dims, kw)
    a = to_front(a, dims[0])
    return fnp.reshape(a, (shape(a)[0],) + tuple(newshape)), 0


def _transpose_rule(args, dims, **kw):
    a, d = args[0], dims[0]
    axes = args[1] if len(args) > 1 else kw.get("axes")
    nd = logical_ndim(a, d)
    axes = tuple(range(nd))[::-1] if axes is None else tuple(int(x) % nd for x in axes)
    phys = [i for i in range(nd + 1) if i != d]  # logical axis -> physical axis
    return fnp.transpose(a, (d,) + tuple(phys[x] for x in axes)), 0


def _broadcast_to_rule(args, dims, **kw):
    a, target = to_front(args[0], dims[0]), tuple(args[1])
    s = shape(a)
    a = fnp.reshape(a, s[:1] + (1,) * (len(target) - len(s) + 1) + s[1:])
    return fnp.broadcast_to(a, s[:1] + target), 0


def _concatenate_rule(args, dims, axis=0):
    arrays = all_to_front(args, dims)
    if axis is None:
        arrays = [fnp.reshape(a, (shape(a)[0], -1)) for a in arrays]
        return fnp.concatenate(arrays, axis=1), 0
    nd = logical_ndim(args[0], dims[0])
    return _P["concatenate"].bind(*arrays, axis=int(axis) % nd + 1), 0


def _unstack_rule(args, dims, **kw):
    x, axis = to_front(args[0], dims[0]), args[1] if len(args) > 1 else kw["axis"]
    out = _P["unstack"].bind(x, int(axis) % (len(shape(x)) - 1) + 1)
    return out, (0,) * len(out)


def _pad_rule(args, dims, **kw):
    x, pw, cv = args
    if not _only_first(dims):
        return _fallback(_P["pad"], args, dims, kw)
    return _P["pad"].bind(to_front(x, dims[0]), ((0, 0),) + tuple(pw), cv), 0


def _diagonal_rule(args, dims, **kw):
    a, offset, a1, a2 = args
    nd = logical_ndim(a, dims[0])
    return _P["diagonal"].bind(to_front(a, dims[0]), offset, a1 % nd + 1, a2 % nd + 1), 0


def _diag_embed_rule(args, dims, **kw):
    g, out_shape, offset, a1, a2 = args
    g = to_front(g, dims[0])
    nd = len(out_shape)
    return _P["diag_embed"].bind(g, (shape(g)[0],) + tuple(out_shape), offset, a1 % nd + 1,
                                 a2 % nd + 1), 0


def _tri_rule(prim):
    def rule(args, dims, **kw):
        if not _only_first(dims) or logical_ndim(args[0], dims[0]) < 2:
            return _fallback(prim, args, dims, kw)  # a 1-d input becomes a matrix
        return prim.bind(to_front(args[0], dims[0]), *args[1:], **kw), 0
    return rule


def _like_rule(prim):
    def rule(args, dims, **kw):
        if kw.get("shape") is not None and _only_first(dims):  # it reads no value of `a`
            a, d = args[0], dims[0]
            return prim.bind(a[(slice(None),) * d + (0,)], *args[1:], **kw), None
        if not _only_first(dims):
            return _fallback(prim, args, dims, kw)
        return prim.bind(*args, **kw), dims[0]
    return rule


def _lift_front(x, d, rank):
    """Batched `x` with its batch axis first and size-1 axes after it up to `rank` example
    axes, so that right-aligned broadcasting lines the example axes up."""
    x = to_front(x, d)
    s = shape(x)
    return fnp.reshape(x, s[:1] + (1,) * (rank - len(s) + 1) + s[1:])


def _full_rule(args, dims, **kw):
    (fill, shp, *rest), d = args, dims[0]
    if not _only_first(dims):
        return _fallback(_P["full"], args, dims, kw)
    fill = _lift_front(fill, d, len(shp))
    return _P["full"].bind(fill, (shape(fill)[0],) + tuple(shp), *rest, **kw), 0


# ----------------------------------------------------------------------------- products

def _lift_to(x, r):
    s = shape(x)
    return fnp.reshape(x, s[:1] + (1,) * (r + 1 - len(s)) + s[1:])


def matmul_batch(prim):
    def rule(args, dims, **kw):
        (a, b), (da, db) = args, dims
        ra, rb = logical_ndim(a, da), logical_ndim(b, db)
        sq_a = da is not None and ra == 1 and not (db is None and rb == 1)
        sq_b = db is not None and rb == 1
        if da is not None:
            a = to_front(a, da)
            a = fnp.expand_dims(a, 1) if sq_a else a
            ra = max(ra, 2) if sq_a else ra
        if db is not None:
            b = to_front(b, db)
            b = fnp.expand_dims(b, -1) if sq_b else b
            rb = 2 if sq_b else rb
        r = max(ra, rb)
        a = _lift_to(a, r) if da is not None else a
        b = _lift_to(b, r) if db is not None else b
        if shape(a)[-1] == 1 and len(shape(a)) > 1 and len(shape(b)) > 1 and not kw:
            out = fnp.multiply(a, b)  # outer products (per-example weight grads): NumPy's
        else:                         # stacked matmul with k = 1 is far slower than this
            out = prim.bind(a, b, **kw)
        if sq_b:
            out = fnp.squeeze(out, -1)
        if sq_a:
            out = fnp.squeeze(out, -1 if sq_b else -2)
        return out, 0
    return rule


def _einsum_rule(args, dims, subscripts, optimize=False):
    ins, out = subscripts.split("->")
    letter = next(c for c in string.ascii_letters if c not in subscripts)
    subs = ins.split(",")
    ops = []
    for op, d, sub in zip(args, dims, subs):
        if d is None:
            ops.append((op, sub))
        else:
            ops.append((to_front(op, d), letter + sub))
    spec = ",".join(s for _, s in ops) + "->" + letter + out
    return _P["einsum"].bind(*[o for o, _ in ops], subscripts=spec, optimize=optimize), 0


# ----------------------------------------------------------------------------- linalg

def _solve_rule(args, dims, **kw):
    (a, b), (da, db) = args, dims
    if db is not None and logical_ndim(b, db) == 1:  # a batch of vectors: solve as columns
        out, _ = stack_batch(_P["solve"])([a, fnp.expand_dims(to_front(b, db), -1)], [da, 0])
        return fnp.squeeze(out, -1), 0
    return stack_batch(_P["solve"])(args, dims, **kw)


def _register():
    ufuncs = [p for f, p in PRIMITIVE_OF.items() if isinstance(f, np.ufunc)
              and f.signature is None]
    for p in ufuncs + [_P[n] for n in (
            "clip", "where", "angle", "real", "imag", "sinc", "sinc_deriv", "round", "fix",
            "isneginf", "isposinf", "iscomplex", "isreal", "isclose", "nan_to_num")]:
        p.batch = elementwise_batch(p)
    for p in (_P["astype"], _P["astype_exact"], _P["copy"], as_primitive(_put),
              as_primitive(stop_gradient_p)):
        p.batch = keep_batch(p)
    for n in ("zeros_like", "ones_like", "empty_like", "full_like"):
        _P[n].batch = _like_rule(_P[n])
    for n in ("sum", "mean", "prod", "max", "min", "amax", "amin", "any", "all",
              "count_nonzero", "logsumexp", "norm", "cumsum", "cumprod"):
        _P[n].batch = axis_batch(_P[n])
    for n in ("argmax", "argmin", "argsort", "argpartition"):
        _P[n].batch = axis_batch(_P[n], none="flat")
    for n in ("inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "qr", "svd", "svdvals",
              "pinv"):
        _P[n].batch = stack_batch(_P[n], core=(2,) * 4)
    _P["full"].batch = _full_rule
    _P["solve"].batch = _solve_rule
    _P["reshape"].batch = _reshape_rule
    _P["transpose"].batch = _transpose_rule
    _P["broadcast_to"].batch = _broadcast_to_rule
    _P["concatenate"].batch = _concatenate_rule
    _P["unstack"].batch = _unstack_rule
    _P["pad"].batch = _pad_rule
    _P["diagonal"].batch = _diagonal_rule
    _P["diag_embed"].batch = _diag_embed_rule
    for n in ("tril", "triu"):
        _P[n].batch = _tri_rule(_P[n])
    _P["matmul"].batch = matmul_batch(_P["matmul"])
    _P["einsum"].batch = _einsum_rule


_register()
from . import _batch_rules_index as _batch_rules_index  # noqa: E402
from . import _fft, _linalg_eig  # noqa: E402 - their primitives get rules here


# ----------------------------------------------------------------------------- fft, eig, lstsq

def _fft_axes_rule(prim, name):
    """fft primitives transform given axes (`axes` or `axis`): the batch axis goes first and
    the non-negative axes shift by one (negative ones still count from the end)."""
    def rule(args, dims, **kw):
        (x,), (d,) = args, dims
        x = to_front(x, d)
        if name == "axes":
            kw["axes"] = tuple(a + 1 if a >= 0 else a for a in kw["axes"])
        elif kw[name] >= 0:
            kw[name] = kw[name] + 1
        return prim.bind(x, **kw), 0
    return rule


def _register_late():
    _fft._fft_p.primitive.batch = _fft_axes_rule(_fft._fft_p.primitive, "axes")
    _fft._rfft_p.primitive.batch = _fft_axes_rule(_fft._rfft_p.primitive, "axis")
    _fft._irfft_p.primitive.batch = _fft_axes_rule(_fft._irfft_p.primitive, "axis")
    for p in (_linalg_eig._eig_p, _linalg_eig._eigvals_p):
        p.primitive.batch = stack_batch(p.primitive, core=(2,))
    _linalg_eig._rank_p.primitive.batch = stack_batch(_linalg_eig._rank_p.primitive,
                                                      core=(1, 1))


_register_late()
