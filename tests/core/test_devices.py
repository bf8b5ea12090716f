"""Devices without a GPU: fnad.devices, device_put, to_numpy, and device-mismatch errors.

The GPU side (arrays really moving, transforms staying on the GPU) is tested in
tests/backend/, marked `gpu`.
"""

import types

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad._core.backend import (DeviceMismatchError, array_module, find_mixed_devices,
                                register_device_backend, unregister_device_backend)
from fnad._core.devices import Device, device_of, parse_device

HAS_GPU = bool(fnad.devices("gpu"))
needs_no_gpu = pytest.mark.skipif(HAS_GPU, reason="checks the no-GPU behaviour")


class _Device:
    id = 0


class FakeCupyArray:
    """Looks like a cupy.ndarray to fnad's checks; refuses NumPy arrays as CuPy does."""

    def __init__(self, shape=(3,), dtype=np.float32):
        self.shape, self.dtype, self.device = shape, np.dtype(dtype), _Device()

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise TypeError(f"Unsupported type {type(inputs[0])}")

    def __array_function__(self, func, types, args, kwargs):
        raise TypeError("Unsupported type <class 'numpy.ndarray'>")


FakeCupyArray.__module__ = "cupy._core.core"
FakeCupyArray.__name__ = FakeCupyArray.__qualname__ = "ndarray"


@pytest.fixture
def fake_cupy():
    """FakeCupyArray registered as a device backend named CuPy (fnad knows a device backend
    only by registration; tests/simdevice has a complete one)."""
    backend = register_device_backend(types.SimpleNamespace(), FakeCupyArray, name="CuPy")
    yield backend
    unregister_device_backend(backend)


def test_devices_lists_cpu_first():
    ds = fnad.devices()
    assert ds[0] == "cpu" and str(ds[0]) == "cpu" and repr(ds[0]) == "Device('cpu')"
    assert fnad.devices("cpu") == [Device("cpu")]
    assert all(d.platform == "gpu" for d in fnad.devices("gpu"))
    with pytest.raises(ValueError, match="platform must be"):
        fnad.devices("tpu")


@needs_no_gpu
def test_no_gpu_means_only_cpu():
    assert fnad.devices() == [Device("cpu")] and fnad.devices("gpu") == []


def test_device_put_cpu_is_identity_on_numpy():
    x = np.arange(3.0)
    assert fnad.device_put(x, "cpu") is x
    tree = {"a": x, "n": 3, "s": np.float32(2), "none": None}
    out = fnad.device_put(tree, "cpu")
    assert out["a"] is x and out["n"] == 3 and out["none"] is None
    assert out["s"] == np.float32(2)
    assert fnad.device_put(x, fnad.devices()[0]) is x


@needs_no_gpu
@pytest.mark.parametrize("device", ["gpu", "gpu:0", "cuda", Device("gpu", 0)])
def test_asking_for_gpu_without_one_is_a_clear_error(device):
    with pytest.raises(RuntimeError, match=r"fnad.device_put: a GPU was asked for, but none "
                                           r"can be used: .*CuPy.*keep the arrays on 'cpu'"):
        fnad.device_put(np.ones(2), device)


@needs_no_gpu
def test_nothing_else_changes_without_gpu():
    x = np.ones(3)
    assert fnad.to_numpy(x) is x
    assert fnad.grad(lambda v: fnp.sum(v * v))(x).tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("bad, err", [("tpu", ValueError), ("gpu:x", ValueError),
                                      ("cpu:1", ValueError), (0, TypeError)])
def test_bad_device_names(bad, err):
    with pytest.raises(err, match="fnad.device_put"):
        fnad.device_put(np.ones(2), bad)


def test_parse_device_and_equality():
    assert parse_device("GPU:1", check=False) == Device("gpu", 1)
    assert parse_device("gpu", check=False).id is None
    assert Device("gpu", 1) == "gpu:1" and Device("gpu", 1) != "gpu:0"
    assert Device("gpu", 1) == "gpu"  # "gpu" means any (the current) GPU
    assert Device("cpu") != "gpu" and Device("cpu") != "banana"
    assert len({Device("cpu"), Device("cpu")}) == 1
    assert device_of(np.ones(1)) == "cpu" and device_of(3.0) == "cpu"


def test_to_numpy():
    x = np.ones(2)
    out = fnad.to_numpy({"x": x, "n": 3, "f": 2.5, "l": [True]})
    assert out["x"] is x
    assert isinstance(out["n"], np.ndarray) and out["n"].dtype.kind == "i"
    assert out["f"].dtype == np.float64 and out["l"][0].dtype == np.bool_
    assert isinstance(fnad.to_numpy(np.float32(1)), np.float32)


def test_to_numpy_of_traced_value_says_what_to_do():
    def f(x):
        fnad.to_numpy(x)
        return fnp.sum(x)

    with pytest.raises(TypeError, match="fnad.to_numpy: a traced value.*stop_gradient"):
        fnad.grad(f)(np.ones(2))


def test_device_put_is_differentiable():
    f = lambda x: fnp.sum(fnad.device_put(x, "cpu") ** 2)
    np.testing.assert_allclose(fnad.grad(f)(np.arange(3.0)), [0.0, 2.0, 4.0])
    out, t = fnad.jvp(lambda x: fnad.device_put(x, "cpu") * 3, (np.ones(2),), (np.ones(2),))
    np.testing.assert_allclose(t, [3.0, 3.0])


# ----------------------------------------------------------------------------- mixing devices

@pytest.mark.usefixtures("fake_cupy")
def test_array_module_names_both_devices():
    a, c = np.ones((2, 2)), FakeCupyArray((3,), np.float32)
    for args in [(a, c), (c, a)]:
        with pytest.raises(DeviceMismatchError) as info:
            array_module(*args)
        msg = str(info.value)
        assert "NumPy (cpu) float64 array of shape (2, 2)" in msg
        assert "CuPy (gpu:0) float32 array of shape (3,)" in msg
        assert "fnad.device_put(x, 'gpu')" in msg and "'cpu'" in msg
    assert isinstance(DeviceMismatchError("x"), ValueError)
    assert array_module(np.float32(1.0), 2.0) is np  # scalars are on no device


@pytest.mark.usefixtures("fake_cupy")
def test_find_mixed_devices():
    a, c = np.ones(2), FakeCupyArray()
    assert find_mixed_devices((a, 1.0)) is None
    assert find_mixed_devices((a, c)) == (a, c)
    assert find_mixed_devices(([a, c],)) == (a, c)  # e.g. concatenate([a, c])
    assert find_mixed_devices((a,), {"out": c}) == (a, c)
    assert find_mixed_devices((np.float64(1.0), c)) is None


@pytest.mark.usefixtures("fake_cupy")
def test_primitive_call_mixing_devices_raises_clear_error():
    a, c = np.ones(3), FakeCupyArray((3,), np.float64)
    with pytest.raises(DeviceMismatchError, match=r"concatenate: .*NumPy \(cpu\).*CuPy"):
        fnp.concatenate([a, c])
    mine = fnad.extend.primitive(lambda x, y: np.add(x, y), "my_add")
    with pytest.raises(DeviceMismatchError, match=r"my_add: .*device_put") as info:
        mine(a, c)
    assert isinstance(info.value.__cause__, TypeError)  # CuPy's own error is kept as cause


@pytest.mark.usefixtures("fake_cupy")
@pytest.mark.parametrize("f", [lambda v, c: fnp.sum(fnp.multiply(v, c)),
                               lambda v, c: fnp.sum(fnp.concatenate([v, c])),
                               lambda v, c: fnp.sum(fnp.where(v > 0, v, c))],
                         ids=["ufunc", "concatenate", "where"])
def test_traced_call_mixing_devices_raises_clear_error(f):
    c = FakeCupyArray((3,), np.float64)
    with pytest.raises(DeviceMismatchError, match="device_put"):
        fnad.grad(f)(np.ones(3), c)
    with pytest.raises(DeviceMismatchError, match="device_put"):
        fnad.jvp(lambda v: f(v, c), (np.ones(3),), (np.ones(3),))


@pytest.mark.usefixtures("fake_cupy")
def test_traced_operator_mixing_devices_raises_clear_error():
    c = FakeCupyArray((3,), np.float64)
    with pytest.raises(DeviceMismatchError, match="device_put"):
        fnad.grad(lambda v: fnp.sum(v * c))(np.ones(3))


def test_other_errors_pass_through_unchanged():
    with pytest.raises(ValueError, match="dimensions except for the concatenation axis"):
        fnp.concatenate([np.ones((2, 2)), np.ones((3, 3))], axis=1)
    with pytest.raises(ValueError) as info:
        fnad.grad(lambda v: fnp.sum(fnp.matmul(v, np.ones((4, 2)))))(np.ones((2, 3)))
    assert not isinstance(info.value, DeviceMismatchError)
