"""fnad.kernels.matmul on the GPU: against cuBLAS for shapes, layouts, batches and
alignments; every tile configuration; gradients to second order on the device."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad._core.backend import is_device_array
from fnad.kernels import _matmul as km
from fnad.kernels import _matmul_cuda as kc
from fnad.test_util import check_grads

pytestmark = pytest.mark.gpu
mm = fnad.kernels.matmul

SHAPES = [  # (batch a, batch b, M, K, N)
    ((), (), 64, 64, 64), ((), (), 256, 128, 192), ((), (), 37, 41, 23), ((), (), 1, 1, 1),
    ((), (), 1, 300, 1), ((), (), 129, 7, 130), ((3,), (), 33, 20, 16), ((2, 1), (4,), 8, 12, 4),
    ((), (), 5, 0, 3), ((), (), 0, 4, 4), ((), (), 1000, 260, 516),
]


def _rand(cp, shape, dtype, seed):
    return cp.asarray(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def _tol(dtype, k):
    return (1e-5 if dtype == np.float32 else 1e-12) * max(1, k) ** 0.5


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ba, bb, m, k, n", SHAPES, ids=[str(s) for s in SHAPES])
def test_against_cublas(cp, dtype, ba, bb, m, k, n):
    a, b = _rand(cp, ba + (m, k), dtype, 0), _rand(cp, bb + (k, n), dtype, 1)
    c = mm(a, b)
    assert is_device_array(c) and c.dtype == dtype
    ref = cp.matmul(a.astype(np.float64), b.astype(np.float64))
    assert c.shape == ref.shape
    if c.size:
        err = float(cp.max(cp.abs(c - ref))) / max(float(cp.max(cp.abs(ref))), 1e-30)
        assert err < _tol(dtype, k), err


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("how", ["a.T", "b.T", "both.T", "strided", "misaligned", "bcast_view"])
def test_layouts(cp, dtype, how):
    a, b = _rand(cp, (2, 48, 40), dtype, 2), _rand(cp, (2, 40, 36), dtype, 3)
    if how == "a.T":
        a = cp.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2)
    elif how == "b.T":
        b = cp.ascontiguousarray(b.swapaxes(-1, -2)).swapaxes(-1, -2)
    elif how == "both.T":
        a = cp.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2)
        b = cp.ascontiguousarray(b.swapaxes(-1, -2)).swapaxes(-1, -2)
    elif how == "strided":
        a = cp.repeat(a, 2, axis=-1)[..., ::2]
    elif how == "misaligned":  # contiguous, but 1 element past a 16-byte boundary
        flat = cp.empty(a.size + 1, dtype)
        flat[1:] = a.ravel()
        a = flat[1:].reshape(a.shape)
    elif how == "bcast_view":
        b = cp.broadcast_to(b[:1], b.shape)
    ref = cp.matmul(a.astype(np.float64), b.astype(np.float64))
    err = float(cp.max(cp.abs(mm(a, b) - ref))) / float(cp.max(cp.abs(ref)))
    assert err < _tol(dtype, 40)


def test_transposed_views_are_read_in_place(cp):
    a = _rand(cp, (2, 40, 48), np.float32, 4).swapaxes(-1, -2)
    b = _rand(cp, (2, 40, 36), np.float32, 5)
    _, args = km._prepare(cp, a, b)
    assert args[0] is a and args[9] is True and args[11] is True  # a2 is a, ta, vec


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_config_gives_the_same_bits(cp, dtype):
    for ta in (False, True):
        a = _rand(cp, (2, 100, 72), dtype, 6)
        if ta:
            a = cp.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2)
        b = _rand(cp, (72, 68), dtype, 7)
        out, args = km._prepare(cp, a, b)
        results = []
        for cfg in kc.CONFIGS[np.dtype(dtype)]:
            out[...] = cp.nan
            kc.launch(cp, *args, cfg=cfg)
            results.append(out.copy())
        for cfg, r in zip(kc.CONFIGS[np.dtype(dtype)], results):
            assert not bool(cp.isnan(r).any()), cfg
            assert bool(cp.array_equal(r, results[0])), cfg
        ref = cp.matmul(a.astype(np.float64), b.astype(np.float64))
        assert float(cp.max(cp.abs(results[0] - ref))) < _tol(dtype, 72) * float(
            cp.max(cp.abs(ref)))


def test_autotune(cp):
    a, b = _rand(cp, (512, 512), np.float32, 8), _rand(cp, (512, 512), np.float32, 9)
    before = mm(a, b)
    cfg = fnad.kernels.matmul_autotune(a, b)
    assert cfg in kc.CONFIGS[np.dtype(np.float32)]
    assert bool(cp.array_equal(mm(a, b), before))


def test_gradients_on_gpu(cp):
    a, b = _rand(cp, (2, 5, 4), np.float64, 10), _rand(cp, (4, 3), np.float64, 11)
    check_grads(mm, (a, b), order=2)
    f = lambda x, y: fnp.sum(fnp.tanh(mm(x, y)))
    g = lambda x, y: fnp.sum(fnp.tanh(fnp.matmul(x, y)))
    ga = fnad.grad(f, argnums=(0, 1))(a, b)
    ra = fnad.grad(g, argnums=(0, 1))(a, b)
    for x, y in zip(ga, ra):
        assert is_device_array(x)
        assert float(cp.max(cp.abs(x - y))) < 1e-12
    h = fnad.hessian(lambda x: fnp.sum(mm(x, b) ** 3))(a)
    hr = fnad.hessian(lambda x: fnp.sum(fnp.matmul(x, b) ** 3))(a)
    assert is_device_array(h) and float(cp.max(cp.abs(h - hr))) < 1e-10


def test_large_float32_accuracy(cp):
    a, b = _rand(cp, (2048, 2048), np.float32, 12), _rand(cp, (2048, 2048), np.float32, 13)
    c = mm(a, b)
    ref = cp.matmul(a.astype(np.float64), b.astype(np.float64))
    assert float(cp.max(cp.abs(c - ref))) / float(cp.max(cp.abs(ref))) < 1e-5
