"""fnad.from_dlpack / fnad.to_dlpack share memory with torch and NumPy (writes show through
both ways), keep dtypes and strides, and refuse what DLPack cannot carry."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp


def test_numpy_round_trip_shares_memory():
    a = np.arange(6.0).reshape(2, 3)
    b = fnad.from_dlpack(a)
    assert np.shares_memory(a, b)
    b[0, 0] = 42.0
    assert a[0, 0] == 42.0
    c = fnad.from_dlpack(a[:, ::2])  # a strided view stays a view
    assert np.shares_memory(a, c) and c.shape == (2, 2)


def test_torch_tensor_in_without_copy():
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    x = fnad.from_dlpack(t)
    assert isinstance(x, np.ndarray) and x.dtype == np.float32 and x.shape == (3, 4)
    assert x.ctypes.data == t.data_ptr()
    t[1, 2] = -7.0
    assert x[1, 2] == -7.0
    x[0, 0] = 5.0
    assert t[0, 0].item() == 5.0
    y = fnad.grad(lambda v: fnp.sum(fnp.tanh(v)))(x)  # usable as any fnad array
    np.testing.assert_allclose(y, 1 - np.tanh(x) ** 2, rtol=1e-6)
    legacy = fnad.from_dlpack(torch.utils.dlpack.to_dlpack(t))  # a capsule
    assert legacy.ctypes.data == t.data_ptr()


def test_fnad_array_out_to_torch_without_copy():
    torch = pytest.importorskip("torch")
    x = np.linspace(0, 1, 8, dtype=np.float64).reshape(2, 4)
    t = torch.from_dlpack(fnad.to_dlpack(x))
    assert t.dtype == torch.float64 and tuple(t.shape) == (2, 4)
    assert t.data_ptr() == x.ctypes.data
    t.mul_(2)
    np.testing.assert_array_equal(x[1], np.linspace(0, 1, 8)[4:] * 2)
    ints = np.arange(5, dtype=np.int32)
    assert torch.from_dlpack(fnad.to_dlpack(ints)).data_ptr() == ints.ctypes.data


def test_refusals():
    with pytest.raises(TypeError, match="not a DLPack producer"):
        fnad.from_dlpack([1, 2, 3])
    with pytest.raises(TypeError, match="NumPy or CuPy"):
        fnad.to_dlpack([1.0])
    ro = np.arange(3.0)
    ro.flags.writeable = False
    with pytest.raises(BufferError, match="read-only"):
        fnad.to_dlpack(ro)
    with pytest.raises(TypeError, match="traced value"):
        fnad.grad(lambda v: fnad.to_dlpack(v))(np.ones(2))
