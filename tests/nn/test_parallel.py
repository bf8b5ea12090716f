"""The threaded paths of fnad_nn's primitives compute what the serial paths do.

Elementwise passes must match bit for bit. Products may differ in the last bits: OpenBLAS
blocks a GEMM differently at one thread than at two on some kernels (seen with its Haswell
kernel on AMD EPYC), so those are compared to float rounding.
"""

import numpy as np
import pytest

from fnad_nn import _parallel
from fnad_nn._activations import _relu_impl, _relu_vjp
from fnad_nn._conv_s1 import _conv_s1_dw_impl, _conv_s1_dx_impl, _conv_s1_impl

GEOM = ((3, 3), (1, 1), (1, 1))


def _both(fn):
    """fn() with the helper thread and without: the results, bit for bit."""
    old = _parallel.set_threads(2)
    try:
        threaded = fn()
        _parallel.set_threads(1)
        serial = fn()
    finally:
        _parallel.set_threads(old)
    return threaded, serial


def _assert_same(threaded, serial):
    """Equal up to the summation order of a GEMM (bit-identical where the BLAS allows)."""
    tol = 2e-5 if threaded.dtype == np.float32 else 1e-13
    np.testing.assert_allclose(threaded, serial, rtol=tol, atol=tol * float(np.abs(serial).max()))


def _data(*shapes, dtype=np.float32):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_conv_s1_threaded_is_serial(dtype):
    x, w, b, g = _data((20, 16, 14, 14), (24, 144), (24,), (20, 24, 14, 14), dtype=dtype)
    for fn in (lambda: _conv_s1_impl(x, w, b, GEOM),
               lambda: _conv_s1_dx_impl(g, w, x.shape, GEOM),
               lambda: _conv_s1_dw_impl(g, x, w.shape, GEOM)):
        _assert_same(*_both(fn))


def test_relu_threaded_is_serial():
    x, g = _data((64, 32, 28, 28), (64, 32, 28, 28))
    for fn in (lambda: _relu_impl(x), lambda: _relu_vjp(g, _relu_impl(x), x)):
        threaded, serial = _both(fn)
        np.testing.assert_array_equal(threaded, serial)


def test_parallel_map_keeps_order_and_scratch_is_per_key():
    out = _parallel.parallel_map(lambda i, slot: i * i, list(range(50)), threads=2)
    assert out == [i * i for i in range(50)]
    a = _parallel.scratch("t", (3, 4), np.float32, zero=True)
    assert a is _parallel.scratch("t", (3, 4), np.float32)
    assert a is not _parallel.scratch("t", (3, 4), np.float64)
    assert not a.any()


@pytest.mark.skipif(_parallel._blas_local is None, reason="needs OpenBLAS")
def test_blas_maps_restore_the_blas_thread_count():
    # the count is process-wide in OpenBLAS: a map must leave it as it found it (it used to
    # be set and restored in both threads, which raced and could leave OpenBLAS on 1 thread)
    def count():
        n = _parallel._blas_local(1)
        _parallel._blas_local(n)
        return n

    old = _parallel._blas_local(2)
    try:
        a, b = _data((2048, 128), (128, 512))
        for _ in range(20):
            _parallel.parallel_map(lambda r, slot: a[r[0]:r[1]] @ b, [(0, 1024), (1024, 2048)],
                                   blas=True, threads=2)
            assert count() == 2
    finally:
        _parallel._blas_local(old)
