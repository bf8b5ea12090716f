"""fnad's one thread pool (fnad/kernels/_threads.py): the threaded paths of fnad_nn's
primitives compute what the serial paths do; the pool survives a fork, its workers sleep
between calls, and a call made from inside it does not wait on itself.

Elementwise passes must match bit for bit. Products may differ in the last bits: OpenBLAS
blocks a GEMM differently at one thread than at two on some kernels (seen with its Haswell
kernel on AMD EPYC), so those are compared to float rounding.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from fnad.kernels import _threads as pool
from fnad_nn._activations import _relu_impl, _relu_vjp
from fnad_nn._conv_s1 import _conv_s1_dw_impl, _conv_s1_dx_impl, _conv_s1_impl

GEOM = ((3, 3), (1, 1), (1, 1))


def _both(fn):
    """fn() with the helper thread and without: the results, bit for bit."""
    old = pool.set_threads(2)
    try:
        threaded = fn()
        pool.set_threads(1)
        serial = fn()
    finally:
        pool.set_threads(old)
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
    out = pool.parallel_map(lambda i, slot: i * i, list(range(50)), threads=2)
    assert out == [i * i for i in range(50)]
    a = pool.scratch("t", (3, 4), np.float32, zero=True)
    assert a is pool.scratch("t", (3, 4), np.float32)
    assert a is not pool.scratch("t", (3, 4), np.float64)
    assert not a.any()


@pytest.mark.skipif(pool._blas_local() is None, reason="needs OpenBLAS")
def test_blas_maps_restore_the_blas_thread_count():
    # the count is process-wide in OpenBLAS: a map must leave it as it found it (it used to
    # be set and restored in both threads, which raced and could leave OpenBLAS on 1 thread)
    def count():
        n = pool._blas_local()(1)
        pool._blas_local()(n)
        return n

    old = pool._blas_local()(2)
    try:
        a, b = _data((2048, 128), (128, 512))
        for _ in range(20):
            pool.parallel_map(lambda r, slot: a[r[0]:r[1]] @ b, [(0, 1024), (1024, 2048)],
                                   blas=True, threads=2)
            assert count() == 2
    finally:
        pool._blas_local()(old)


def _child(code):
    out = subprocess.run([sys.executable, "-W", "ignore::DeprecationWarning", "-c", code],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, FNAD_NUM_THREADS="2"))
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


USE_POOL = """
import os, time
import numpy as np
from fnad.kernels import _threads as pool
pool.MIN_WORK = 1

def kernel(lo, hi, out):
    out[lo:hi] = np.arange(lo, hi)

def use():
    out = np.zeros(1000)
    pool.run_ranges(kernel, 1000, (out,))
    rows = pool.parallel_map(lambda i, slot: i + 1, list(range(8)))
    return bool((out == np.arange(1000)).all()) and rows == list(range(1, 9))

assert use() and len(pool._state["pool"].threads) == 1
"""


def test_the_pool_works_in_a_forked_child():
    code = USE_POOL + """
pid = os.fork()
if pid == 0:
    os._exit(0 if use() and len(pool._state["pool"].threads) == 1 else 3)
print(os.waitpid(pid, 0)[1], use())
"""
    assert _child(code) == ["0", "True"]


def test_the_workers_sleep_between_calls():
    code = USE_POOL + """
for _ in range(50):
    use()
t = time.process_time()
time.sleep(0.5)
print(time.process_time() - t)
"""
    assert float(_child(code)[0]) < 0.05  # CPU seconds over 0.5 s of idling


def test_a_call_from_inside_the_pool_runs_on_its_thread(monkeypatch):
    monkeypatch.setattr(pool, "MIN_WORK", 1)
    old = pool.set_threads(2)

    def part(i, slot):  # every part runs a kernel over the pool itself
        out = np.zeros(64)
        pool.run_ranges(lambda lo, hi, o: o.__setitem__(slice(lo, hi), i), 64, (out,))
        return float(out.sum())

    try:
        assert pool.parallel_map(part, list(range(6))) == [64.0 * i for i in range(6)]
    finally:
        pool.set_threads(old)


def test_set_threads_overrides_the_setting_until_reset(monkeypatch):
    monkeypatch.setenv("FNAD_NUM_THREADS", "3")
    old = pool.set_threads(5)
    try:
        assert pool.num_threads() == 5
        pool.set_threads(None)
        assert pool.num_threads() == 3
    finally:
        pool.set_threads(old)
