"""Matrix products and their rules."""

import numpy as np

from .. import numpy as fnp
from ..extend import defjvp_linear, defvjp
from ._util import ndim, shape, unbroadcast, wrap

matmul = wrap(np.matmul)


def _swap(x):
    return fnp.swapaxes(x, -1, -2)


def _vjp_matmul_a(g, ans, a, b):
    if ndim(b) == 1:
        if ndim(a) == 1:
            return g * b
        return unbroadcast(fnp.expand_dims(g, -1) * b, shape(a))
    if ndim(a) == 1:
        return unbroadcast(fnp.matmul(b, fnp.expand_dims(g, -1))[..., 0], shape(a))
    return unbroadcast(fnp.matmul(g, _swap(b)), shape(a))


def _vjp_matmul_b(g, ans, a, b):
    if ndim(a) == 1:
        if ndim(b) == 1:
            return g * a
        return unbroadcast(fnp.expand_dims(a, -1) * fnp.expand_dims(g, -2), shape(b))
    if ndim(b) == 1:
        return unbroadcast(fnp.matmul(fnp.expand_dims(g, -2), a)[..., 0, :], shape(b))
    return unbroadcast(fnp.matmul(_swap(a), g), shape(b))


defvjp(matmul, _vjp_matmul_a, _vjp_matmul_b)
defjvp_linear(matmul, argnums=(0, 1))


def dot(a, b, out=None):
    """Dot product with NumPy's rules (matmul for 1-D/2-D, sum-product over the last axis
    of `a` and the second-to-last of `b` for N-D)."""
    if out is not None:
        raise TypeError("fnad.numpy.dot: out= is not supported; use the returned array.")
    if ndim(a) == 0 or ndim(b) == 0:
        return fnp.multiply(a, b)
    if ndim(a) <= 2 and ndim(b) <= 2:
        return matmul(a, b)
    return fnp.tensordot(a, b, axes=([ndim(a) - 1], [max(ndim(b) - 2, 0)]))
