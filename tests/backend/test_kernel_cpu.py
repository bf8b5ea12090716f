"""fnad.kernels.matmul on the CPU: the NumPy path, its rules (to third order), errors, and
the layout logic that decides what the CUDA kernel reads in place."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad.kernels import _matmul as km
from fnad.test_util import check_grads

mm = fnad.kernels.matmul
R = np.random.default_rng(0)


@pytest.mark.parametrize("sa, sb", [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((1, 3, 4), (2, 4, 5)),
                                    ((2, 1, 3, 4), (5, 4, 2)), ((1, 1), (1, 1))],
                         ids=["2d", "batch_a", "bcast", "bcast4d", "1x1"])
def test_values_and_grads(sa, sb):
    a, b = R.standard_normal(sa), R.standard_normal(sb)
    np.testing.assert_allclose(mm(a, b), a @ b)
    check_grads(mm, (a, b), order=2)
    ga, gb = fnad.grad(lambda x, y: fnp.sum(fnp.sin(mm(x, y))), argnums=(0, 1))(a, b)
    ra, rb = fnad.grad(lambda x, y: fnp.sum(fnp.sin(fnp.matmul(x, y))), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, ra, rtol=1e-12)
    np.testing.assert_allclose(gb, rb, rtol=1e-12)


def test_third_order_and_hessian():
    a, b = R.standard_normal((2, 3)), R.standard_normal((3, 2))
    check_grads(lambda x, y: mm(x, fnp.tanh(y)), (a, b), order=3)
    h = fnad.hessian(lambda x: fnp.sum(mm(x, b) ** 3))(a)
    h_ref = fnad.hessian(lambda x: fnp.sum(fnp.matmul(x, b) ** 3))(a)
    np.testing.assert_allclose(h, h_ref, rtol=1e-12)


def test_float32_stays_float32():
    a, b = R.standard_normal((3, 4)).astype(np.float32), R.standard_normal((4, 2)).astype(
        np.float32)
    assert mm(a, b).dtype == np.float32
    assert fnad.grad(lambda x: fnp.sum(mm(x, b)))(a).dtype == np.float32


@pytest.mark.parametrize("a, b, err, pattern", [
    (np.ones(3), np.ones((3, 2)), ValueError, r"a has shape \(3,\).*ndim >= 2"),
    (np.ones((2, 3)), np.ones((4, 2)), ValueError, r"a has 3 columns, b has 4 rows"),
    (np.ones((2, 3), np.float32), np.ones((3, 2)), TypeError, "float32 and b is float64"),
    (np.ones((2, 3), int), np.ones((3, 2), int), TypeError, "both float32 or both float64"),
    (np.ones((2, 2, 3)), np.ones((3, 3, 2)), ValueError, r"batch shapes \(2,\) and \(3,\)"),
], ids=["1d", "inner", "mixed_dtype", "int", "batch"])
def test_errors_name_the_problem(a, b, err, pattern):
    with pytest.raises(err, match="fnad.kernels.matmul: .*" + pattern):
        mm(a, b)


def test_layout_detection():
    x = np.ones((5, 3, 4))
    assert km._layout(x, 3, 4) == "n"
    assert km._layout(np.swapaxes(np.ones((5, 4, 3)), -1, -2), 3, 4) == "t"
    assert km._layout(np.ones((3, 8))[:, ::2], 3, 4) is None
    assert km._batch_stride(x, (5,), 3, 4) == 12
    assert km._batch_stride(np.ones((1, 3, 4)), (5,), 3, 4) == 0
    assert km._batch_stride(np.ones((3, 4)), (5,), 3, 4) == 0
    assert km._batch_stride(np.ones((10, 3, 4))[::2], (5,), 3, 4) is None
    assert km._batch_stride(np.ones((2, 5, 3, 4)), (2, 5), 3, 4) == 12
    assert km._batch_stride(np.ones((5, 2, 3, 4)).swapaxes(0, 1), (2, 5), 3, 4) is None
    # the VJP's transposed operand of a batched contiguous array is read in place
    t = np.swapaxes(np.ones((5, 4, 3)), -1, -2)
    assert km._layout(t, 3, 4) == "t" and km._batch_stride(t, (5,), 3, 4) == 12
