"""`fnad.kernels.matmul`: a hand-written CUDA matmul as an fnad primitive.

This is the worked example of adding a kernel to fnad with the public `fnad.extend`
API (see docs/custom_kernels.md):

  1. an implementation on plain arrays: NumPy on the CPU, the CUDA kernel (launched with
     `cupy.RawKernel`, source in `_matmul_cuda.py`) for CuPy arrays;
  2. `primitive(impl)` makes it traceable;
  3. VJP and JVP rules written with the primitive itself (and `fnad.numpy` for
     transposes and sums), so derivatives of any order run the same kernel.
"""

import math

import numpy as np

from .. import numpy as fnp
from .._core.backend import cupy_or_none, is_device_array, mixed_device_error
from ..numpy._products import matmul_batch
from .._core.rules import as_primitive, defabstract_eval, defbatch, defjvp, defvjp
from .._core.tracer import primitive
from . import _matmul_cuda as cuda

__all__ = ["matmul", "matmul_autotune"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _check(a, b):
    for name, x in (("a", a), ("b", b)):
        if not hasattr(x, "dtype"):
            raise TypeError(f"fnad.kernels.matmul: {name} must be a NumPy or CuPy array, got "
                            f"{type(x).__name__}; convert it with fnad.numpy.asarray.")
        if x.ndim < 2:
            raise ValueError(f"fnad.kernels.matmul: {name} has shape {tuple(x.shape)}; the "
                             "kernel multiplies matrices (ndim >= 2). Add an axis with "
                             "x[None, :] or x[:, None].")
    if a.dtype != b.dtype or a.dtype not in _FLOATS:
        raise TypeError(f"fnad.kernels.matmul: a is {a.dtype} and b is {b.dtype}; the kernel "
                        "needs both float32 or both float64. Cast with .astype(...).")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"fnad.kernels.matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} "
                         f"do not line up: a has {a.shape[-1]} columns, b has {b.shape[-2]} "
                         "rows.")
    try:
        return np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"fnad.kernels.matmul: batch shapes {tuple(a.shape[:-2])} and "
                         f"{tuple(b.shape[:-2])} do not broadcast.") from None


def _layout(x, rows, cols):
    """'n' if the trailing matrix is row-major, 't' if it is a transposed row-major
    matrix (column-major), None otherwise."""
    item = x.itemsize
    s_r, s_c = x.strides[-2], x.strides[-1]
    if (cols == 1 or s_c == item) and (rows == 1 or s_r == cols * item):
        return "n"
    if (rows == 1 or s_r == item) and (cols == 1 or s_c == rows * item):
        return "t"
    return None


def _batch_stride(x, bshape, rows, cols):
    """Elements between consecutive matrices of `x` over the broadcast batch `bshape`:
    0 for a single (broadcast) matrix, rows*cols for a packed stack, None otherwise."""
    xb = x.shape[:-2]
    if math.prod(xb) == 1:
        return 0
    if tuple(xb) != tuple(bshape):
        return None
    expected = rows * cols * x.itemsize
    for size, stride in zip(reversed(xb), reversed(x.strides[:-2])):
        if size != 1 and stride != expected:
            return None
        expected *= size
    return rows * cols


def _operand(cp, x, bshape, rows, cols):
    """(array, transposed?, batch stride), copying only when the layout has no kernel."""
    lay = _layout(x, rows, cols)
    sb = _batch_stride(x, bshape, rows, cols) if lay is not None else None
    if lay is None or sb is None:
        x = cp.ascontiguousarray(cp.broadcast_to(x, tuple(bshape) + (rows, cols)))
        lay, sb = "n", (rows * cols if math.prod(bshape) > 1 else 0)
    return x, lay == "t", sb


def _vec_ok(dtype, m, n, k, ta, tb, a, b):
    vw = 4 if dtype == np.float32 else 2
    lda = m if ta else k
    ldb = k if tb else n
    aligned = all(p.data.ptr % 16 == 0 for p in (a, b))
    return aligned and lda % vw == 0 and ldb % vw == 0 and n % vw == 0


def _prepare(cp, a, b):
    bshape = _check(a, b)
    m, k = a.shape[-2:]
    n = b.shape[-1]
    batch = math.prod(bshape)
    out = cp.empty(tuple(bshape) + (m, n), dtype=a.dtype)
    a2, ta, s_a = _operand(cp, a, bshape, m, k)
    b2, tb, s_b = _operand(cp, b, bshape, k, n)
    vec = _vec_ok(a.dtype, m, n, k, ta, tb, a2, b2)
    return out, (a2, b2, out, m, n, k, batch, s_a, s_b, ta, tb, vec)


def _matmul_impl(a, b):
    if is_device_array(a) or is_device_array(b):
        return _matmul_gpu(a, b)
    _check(a, b)
    return np.matmul(a, b)


def _matmul_gpu(a, b):
    cp = cupy_or_none()
    if not (is_device_array(a) and is_device_array(b)):
        raise mixed_device_error(b if is_device_array(a) else a, a if is_device_array(a) else b,
                                 "fnad.kernels.matmul")
    if a.device.id != b.device.id:
        raise ValueError(f"fnad.kernels.matmul: a is on gpu:{a.device.id} and b on "
                         f"gpu:{b.device.id}; move one with fnad.device_put.")
    with cp.cuda.Device(a.device.id):
        out, args = _prepare(cp, a, b)
        if out.size:
            cuda.launch(cp, *args)
    return out


matmul = primitive(_matmul_impl, "fnad.kernels.matmul")
matmul.__doc__ = """Batched matrix product `a @ b` by fnad's own CUDA kernel (NumPy on CPU).

Args:
  a: (..., M, K) float32 or float64 array (NumPy or CuPy).
  b: (..., K, N) array of the same dtype; batch axes broadcast as in numpy.matmul.

Returns:
  (..., M, N) array on the inputs' device. Differentiable to any order: the VJP and JVP
  rules call this same primitive. Transposed views (x.swapaxes(-1, -2) of a contiguous
  array) are read in place, without copies.

Example:
  c = fnad.kernels.matmul(a, b)                      # a, b CuPy float32
  ga = fnad.grad(lambda a: fnp.sum(fnad.kernels.matmul(a, b) ** 2))(a)
"""
defabstract_eval(matmul, as_primitive(np.matmul).abstract_eval)  # same shapes and dtypes
defbatch(matmul, matmul_batch(matmul))  # and batches as np.matmul


def _t(x):
    return fnp.swapaxes(x, -1, -2)


def _sum_to(g, shape):
    """Sum the leading batch axes of `g` that were broadcast to reach it from `shape`."""
    shape = tuple(shape)
    gshape = tuple(fnp.shape(g))
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape[:-2]) if s == 1 and gshape[lead + i] != 1)
    return fnp.reshape(fnp.sum(g, axis=axes), shape)


# d(a @ b) = da @ b + a @ db: both rules reuse the kernel.
defvjp(matmul, lambda g, ans, a, b: _sum_to(matmul(g, _t(b)), fnp.shape(a)),
               lambda g, ans, a, b: _sum_to(matmul(_t(a), g), fnp.shape(b)))
defjvp(matmul, lambda t, ans, a, b: matmul(t, b),
               lambda t, ans, a, b: matmul(a, t))


def matmul_autotune(a, b):
    """Time every tile configuration on these CuPy operands and keep the fastest for
    their shape (later calls with that shape use it). Returns the chosen configuration.
    Results do not depend on the configuration, only the speed does. On NumPy arrays
    this does nothing and returns None.

    Example:
      fnad.kernels.matmul_autotune(a, b)     # once, before a benchmark or training loop
    """
    if not (is_device_array(a) and is_device_array(b)):
        return None
    cp = cupy_or_none()
    with cp.cuda.Device(a.device.id):
        _, args = _prepare(cp, a, b)
        return cuda.autotune(cp, args)
