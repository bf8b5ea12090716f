"""Batching rules (fnad.vmap) of fnad_nn's fused primitives.

Activations are elementwise; the layer-norm and softmax kernels work along the last axis
with any leading axes, so the batch axis goes first; affine batches its input alone and
otherwise falls back to matmul's and add's rules; convolutions take the batch into their
image axis N. Per-example weight gradients of a convolution (`conv_s1_dw` with a batched
input) run the loop fallback.
"""

import fnad.numpy as fnp
from fnad.extend import (PRIMITIVES, as_primitive, batch_fallback, batch_size,
                         elementwise_batch, keep_batch, logical_ndim, to_front)


def _lead(prim, nb):
    """The rule of a kernel on the last axis whose first `nb` arguments broadcast together
    (the rest unbatched): batch axes first, lifted to a common rank."""
    def rule(args, dims, **kw):
        if any(d is not None for d in dims[nb:]):
            return batch_fallback(prim, args, dims, kw, batch_size(args, dims))
        r = max(logical_ndim(a, d) for a, d in zip(args[:nb], dims[:nb]))
        out = list(args)
        for k in range(nb):
            if dims[k] is not None:
                a = to_front(args[k], dims[k])
                s = fnp.shape(a)
                out[k] = fnp.reshape(a, s[:1] + (1,) * (r + 1 - len(s)) + s[1:])
        return prim.bind(*out, **kw), 0
    return rule


def _affine_rule(args, dims):
    (x, w, b), (dx, dw, db) = args, dims
    if dw is None and db is None:
        return _P["affine"].bind(to_front(x, dx), w, b), 0
    y, dy = as_primitive(fnp.matmul).batch([x, w], [dx, dw])
    if b is None:
        return y, dy
    return as_primitive(fnp.add).batch([y, b], [dy, db])


def _sparse_xent_rule(args, dims, **kw):
    n = batch_size(args, dims)
    if any(d is not None for d in dims[2:]):
        return batch_fallback(_P["sparse_softmax_cross_entropy"], args, dims, kw, n)
    z, y = to_front(args[0], dims[0], n), to_front(args[1], dims[1], n)
    return _P["sparse_softmax_cross_entropy"].bind(z, y, *args[2:], **kw), 0


def _sum_leading_rule(args, dims):
    g, n_keep = to_front(args[0], dims[0]), args[1]
    nd = len(fnp.shape(g))
    return fnp.sum(g, axis=tuple(range(1, nd - n_keep))), 0


def _merge(x, d):
    """Batched NCHW `x` with the batch folded into N, and the batch size."""
    x = to_front(x, d)
    s = fnp.shape(x)
    return fnp.reshape(x, (s[0] * s[1],) + s[2:]), s[0]


def _split(y, n):
    s = fnp.shape(y)
    return fnp.reshape(y, (n, s[0] // n) + s[1:])


def _image_rule(prim, shape_arg=None):
    """Convolution kernels whose first argument is a batch of images (NCHW, or the column
    tensor of im2col): only that argument batched, the batch folds into N."""
    def rule(args, dims, **kw):
        if any(d is not None for d in dims[1:]) or logical_ndim(args[0], dims[0]) < 4:
            return batch_fallback(prim, args, dims, kw, batch_size(args, dims))
        x, n = _merge(args[0], dims[0])
        rest = list(args[1:])
        if shape_arg is not None:  # the x_shape argument: (N, C, H, W) -> (B * N, C, H, W)
            s = tuple(rest[shape_arg - 1])
            rest[shape_arg - 1] = (n * s[0],) + s[1:]
        return _split(prim.bind(x, *rest, **kw), n), 0
    return rule


_P = {p.name: p for p in PRIMITIVES}


def _register():
    for n in ("gelu", "gelu_grad_mul", "relu", "softplus", "normal_cdf", "scale_shift"):
        _P[n].batch = elementwise_batch(_P[n])
    _P["contiguous"].batch = keep_batch(_P["contiguous"])
    for n, nb in (("normalize", 1), ("ln_rstd", 1), ("attention_softmax", 2),
                  ("softmax_vjp", 2), ("softmax_cross_entropy", 2), ("normalize_vjp", 3)):
        _P[n].batch = _lead(_P[n], nb)
    _P["affine"].batch = _affine_rule
    _P["sum_leading"].batch = _sum_leading_rule
    _P["sparse_softmax_cross_entropy"].batch = _sparse_xent_rule
    _P["conv_s1"].batch = _image_rule(_P["conv_s1"])
    _P["conv_s1_dx"].batch = _image_rule(_P["conv_s1_dx"], shape_arg=2)
    _P["im2col"].batch = _image_rule(_P["im2col"])
    _P["col2im"].batch = _image_rule(_P["col2im"], shape_arg=1)


_register()
