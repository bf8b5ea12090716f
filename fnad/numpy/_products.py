"""Matrix products and their rules."""

import math

import numpy as np

from .. import numpy as fnp
from .._core.abstract import ShapedArray, xp_of
from .._batching.families import logical_ndim, to_front
from .._core.rules import as_primitive, defabstract_eval, defbatch, defjvp_linear, defvjp
from ._precision import preferred_operands
from ._util import ndim, shape, unbroadcast, wrap

_matmul = wrap(np.matmul)  # np.matmul itself, registered as a primitive


def matmul(a, b, /, *, precision=None, preferred_element_type=None, **kwargs):
    """Matrix product with NumPy's broadcasting rules (np.matmul; the @ operator).
    `precision=` (JAX's) is validated and ignored: NumPy multiplies in the operands' own
    dtype. `preferred_element_type=` converts the operands first, so the product is computed
    and returned in that dtype. Other keywords go to np.matmul."""
    if kwargs or precision is not None or preferred_element_type is not None:
        return _matmul_kw(a, b, precision, preferred_element_type, kwargs)
    return _matmul(a, b)  # the plain path: one call of np.matmul


matmul.primitive = as_primitive(_matmul)  # rules registered for np.matmul serve it


def _matmul_kw(a, b, precision, preferred_element_type, kwargs):
    if precision is not None or preferred_element_type is not None:
        a, b = preferred_operands("fnad.numpy.matmul", (a, b), precision,
                                  preferred_element_type)
    return _matmul(a, b, **kwargs)


def _swap(x):
    # fnp.transpose of a matrix costs a third of fnp.swapaxes (no permutation to build)
    return fnp.transpose(x) if ndim(x) == 2 else fnp.swapaxes(x, -1, -2)


def _vjp_matmul_a(g, ans, a, b):
    if ndim(b) == 1:
        if ndim(a) == 1:
            return g * b
        return unbroadcast(fnp.expand_dims(g, -1) * b, shape(a))
    if ndim(a) == 1:
        return unbroadcast(_matmul(b, fnp.expand_dims(g, -1))[..., 0], shape(a))
    if ndim(b) == 2 and ndim(a) > 2:  # every row of every matrix in one GEMM
        return fnp.reshape(_matmul(_rows(g), _swap(b)), shape(a))
    return unbroadcast(_matmul(g, _swap(b)), shape(a))


def _vjp_matmul_b(g, ans, a, b):
    if ndim(a) == 1:
        if ndim(b) == 1:
            return g * a
        return unbroadcast(fnp.expand_dims(a, -1) * fnp.expand_dims(g, -2), shape(b))
    if ndim(b) == 1:
        return unbroadcast(_matmul(fnp.expand_dims(g, -2), a)[..., 0, :], shape(b))
    if ndim(b) == 2 and ndim(a) > 2:  # sum over the matrices of a_i^T g_i: one GEMM of the
        return _matmul(_swap(_rows(a)), _rows(g))  # rows, not a stack of products to sum
    return unbroadcast(_matmul(_swap(a), g), shape(b))


def _rows(x):
    """`x` (..., m, n) as one (rows, n) matrix: a 2-D weight's products with a stack of
    matrices, folded into one GEMM as PyTorch does (NumPy loops a GEMM per matrix)."""
    s = shape(x)
    return fnp.reshape(x, (math.prod(s[:-1]), s[-1]))


def _lift_to(x, r):
    s = shape(x)
    return fnp.reshape(x, s[:1] + (1,) * (r + 1 - len(s)) + s[1:])


def matmul_batch(matmul):
    """The batching rule of `matmul` (np.matmul, fnad.kernels.matmul): the batch axes go first
    and the leading axes line up; a 1-d operand becomes a matrix and is squeezed back."""
    prim = as_primitive(matmul)

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


defvjp(_matmul, _vjp_matmul_a, _vjp_matmul_b)
defjvp_linear(_matmul, argnums=(0, 1))
defbatch(_matmul, matmul_batch(_matmul))


def _preferred(fname, a, b, precision, preferred_element_type):
    if precision is None and preferred_element_type is None:
        return a, b
    return preferred_operands(f"fnad.numpy.{fname}", (a, b), precision, preferred_element_type)


def dot(a, b, out=None, *, precision=None, preferred_element_type=None):
    """Dot product with NumPy's rules (matmul for 1-D/2-D, sum-product over the last axis
    of `a` and the second-to-last of `b` for N-D). `precision=` and
    `preferred_element_type=` as in `matmul` (JAX's; the precision is ignored)."""
    if out is not None:
        raise TypeError("fnad.numpy.dot: out= is not supported; use the returned array.")
    a, b = _preferred("dot", a, b, precision, preferred_element_type)
    if ndim(a) == 0 or ndim(b) == 0:
        return fnp.multiply(a, b)
    if ndim(a) <= 2 and ndim(b) <= 2:
        return _matmul(a, b)
    return fnp.tensordot(a, b, axes=([ndim(a) - 1], [max(ndim(b) - 2, 0)]))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """Sum products over the given axes (an int N: the last N of `a` with the first N of
    `b`; or a pair of axis lists). Built from transpose, reshape and matmul. `precision=`
    and `preferred_element_type=` as in `matmul`."""
    a, b = _preferred("tensordot", a, b, precision, preferred_element_type)
    na, nb = ndim(a), ndim(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        ax_a, ax_b = list(range(na - n, na)), list(range(n))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
        ax_a, ax_b = [x % na for x in ax_a], [x % nb for x in ax_b]
    sa, sb = shape(a), shape(b)
    if len(ax_a) != len(ax_b) or any(sa[i] != sb[j] for i, j in zip(ax_a, ax_b)):
        raise ValueError(f"tensordot: shape-mismatch for sum: axes {ax_a} of {sa} against "
                         f"axes {ax_b} of {sb}.")
    free_a = [i for i in range(na) if i not in ax_a]
    free_b = [i for i in range(nb) if i not in ax_b]
    k = int(np.prod([sa[i] for i in ax_a]))
    at = fnp.reshape(fnp.transpose(a, free_a + ax_a), (-1, k))
    bt = fnp.reshape(fnp.transpose(b, ax_b + free_b), (k, -1))
    out_shape = tuple(sa[i] for i in free_a) + tuple(sb[i] for i in free_b)
    return fnp.reshape(_matmul(at, bt), out_shape)


def inner(a, b, *, precision=None, preferred_element_type=None):
    """Inner product over the last axes (a product when either is 0-d). `precision=` and
    `preferred_element_type=` as in `matmul`."""
    a, b = _preferred("inner", a, b, precision, preferred_element_type)
    if ndim(a) == 0 or ndim(b) == 0:
        return fnp.multiply(a, b)
    return tensordot(a, b, axes=([-1], [-1]))


def outer(a, b, out=None):
    """Outer product of the flattened inputs."""
    if out is not None:
        raise TypeError("fnad.numpy.outer: out= is not supported; use the returned array.")
    return fnp.reshape(a, (-1, 1)) * fnp.reshape(b, (1, -1))


def kron(a, b):
    """Kronecker product (block matrix of a[i] * b)."""
    sa, sb = shape(a), shape(b)
    d = max(len(sa), len(sb))
    sa, sb = (1,) * (d - len(sa)) + sa, (1,) * (d - len(sb)) + sb
    x = fnp.reshape(a, tuple(v for n in sa for v in (n, 1)))
    y = fnp.reshape(b, tuple(v for n in sb for v in (1, n)))
    return fnp.reshape(x * y, tuple(m * n for m, n in zip(sa, sb)))


def _mul(x, y):
    return None if x is None or y is None else x * y


def _sub(x, y):
    if x is None:
        return None if y is None else -y
    return x if y is None else x - y


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (or 2-vectors, whose missing z is 0) along the given axes."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a = fnp.moveaxis(a, axisa, -1)
    b = fnp.moveaxis(b, axisb, -1)
    na, nb = shape(a)[-1], shape(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"cross: incompatible dimensions for cross product (dimension must be "
                         f"2 or 3), got {na} and {nb}.")
    ca = [a[..., i] if i < na else None for i in range(3)]
    cb = [b[..., i] if i < nb else None for i in range(3)]
    z = _sub(_mul(ca[0], cb[1]), _mul(ca[1], cb[0]))
    if na == 2 and nb == 2:
        return z
    x = _sub(_mul(ca[1], cb[2]), _mul(ca[2], cb[1]))
    y = _sub(_mul(ca[2], cb[0]), _mul(ca[0], cb[2]))
    res = fnp.stack(fnp.broadcast_arrays(x, y, z), axis=-1)
    return fnp.moveaxis(res, -1, axisc)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened inputs, the first conjugated (complex inputs too).
    `precision=` and `preferred_element_type=` as in `matmul`."""
    a, b = _preferred("vdot", a, b, precision, preferred_element_type)
    return _matmul(fnp.conj(fnp.ravel(a)), fnp.ravel(b))


def vecdot(x1, x2, /, *, axis=-1):
    """Vector dot product over `axis`, broadcasting the others (NumPy 2)."""
    return fnp.sum(fnp.conj(x1) * x2, axis=axis)


def matvec(x1, x2, /):
    """Matrix-vector product over the last axes, broadcasting the others (NumPy 2.2)."""
    return _matmul(x1, fnp.expand_dims(x2, -1))[..., 0]


def vecmat(x1, x2, /):
    """Vector-matrix product over the last axes, broadcasting the others (NumPy 2.2)."""
    return _matmul(fnp.expand_dims(fnp.conj(x1), -2), x2)[..., 0, :]

# ----------------------------------------------------------------------------- abstract evaluation


def _matmul_aval(a, b):
    """matmul's shape rule (1-D operands get an axis added, then removed) and NumPy's dtype."""
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: scalar operands are not allowed; use multiply (*) instead.")
    sa = (1,) + a.shape if a.ndim == 1 else a.shape
    sb = b.shape + (1,) if b.ndim == 1 else b.shape
    if sa[-1] != sb[-2]:
        raise ValueError(f"matmul: the inner dimensions of shapes {a.shape} and {b.shape} "
                         f"differ ({sa[-1]} vs {sb[-2]}).")
    out = (np.broadcast_shapes(sa[:-2], sb[:-2]) + (sa[-2],) * (a.ndim > 1)
           + (sb[-1],) * (b.ndim > 1))
    dtype = np.matmul.resolve_dtypes((a.dtype, b.dtype, None))[-1]
    return ShapedArray(out, dtype, xp=xp_of((a, b)))


defabstract_eval(_matmul, _matmul_aval)


def _as_1d(v, fname):
    v = v if hasattr(v, "shape") else fnp.asarray(v)
    if ndim(v) != 1 or shape(v)[0] == 0:
        raise ValueError(f"fnad.numpy.{fname}: inputs must be non-empty 1-d arrays, got "
                         f"shape {tuple(shape(v))}.")
    return v


def convolve(a, v, mode="full"):
    """Discrete linear convolution of two 1-d arrays (NumPy's modes 'full', 'same', 'valid'),
    as a product of `a`'s sliding windows with reversed `v`: differentiable in both.

    Example:
      convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))   # [0, 1, 2.5, 4, 1.5]
    """
    a, v = _as_1d(a, "convolve"), _as_1d(v, "convolve")
    if shape(v)[0] > shape(a)[0]:
        a, v = v, a
    n, m = shape(a)[0], shape(v)[0]
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"fnad.numpy.convolve: mode {mode!r} is not 'full', 'same' or 'valid'.")
    padded = fnp.pad(a, (m - 1, m - 1))
    windows = padded[np.arange(n + m - 1)[:, None] + np.arange(m)[None, :]]
    full = _matmul(windows, fnp.flip(v))
    if mode == "same":
        start = (m - 1) // 2
        return full[start:start + n]
    return full[m - 1:n] if mode == "valid" else full


def correlate(a, v, mode="valid"):
    """Cross-correlation of two 1-d arrays: `c[k] = sum_n a[n + k] conj(v[n])` (NumPy's).

    Example:
      correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))   # [3.5]
    """
    a, v = _as_1d(a, "correlate"), _as_1d(v, "correlate")
    if shape(v)[0] > shape(a)[0]:  # NumPy: the swapped correlation, reversed and conjugated
        return fnp.conj(fnp.flip(correlate(v, a, mode)))
    return convolve(a, fnp.conj(fnp.flip(v)), mode)
