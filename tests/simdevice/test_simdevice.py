"""The simulated device keeps CuPy's rules where they differ from NumPy's, counts every
host-device transfer, and reaches fnad through the registration CuPy goes through."""

import types

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad._core import backend
from fnad._core.devices import device_of, parse_device
from fnad._core.backend import (array_module, backend_of, describe_array, device_backend,
                                is_device_array, register_device_backend,
                                unregister_device_backend)
from tests.simdevice import (NAME, TOTALS, HostTransferError, installed, no_transfers, simcupy,
                             simcupyx, transfers)
from tests.simdevice.cupy_api import API

pytestmark = pytest.mark.sim_device

X = np.arange(6.0).reshape(2, 3)


@pytest.fixture
def x(sim):
    return sim.asarray(X)


# ----------------------------------------------------------------------------- CuPy's rules

def test_no_implicit_conversion_to_numpy(x):
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(x)
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.array([x, x])


def test_results_are_device_arrays_never_numpy_scalars(x):
    for out in (np.sum(x), x.sum(), x[0, 1], np.max(x, axis=None), np.linalg.norm(x),
                np.exp(x)[1, 2], x.mean(), np.allclose(x, x)):
        assert type(out) is simcupy.ndarray and out.ndim == 0, type(out)
    assert x.tolist() == X.tolist() and float(x[1, 2]) == 5.0


def test_numpy_arrays_are_refused_as_operands(x):
    for op in (lambda: x + X, lambda: X + x, lambda: np.add(X, x), lambda: fnp.matmul(x, X.T),
               lambda: np.concatenate([x, X]), lambda: simcupy.exp(X)):
        with pytest.raises(TypeError):
            op()
    assert float((x + np.float64(1.0))[0, 0]) == 1.0  # NumPy scalars are scalars, as on CuPy


def test_only_cupys_names_and_parameters(x):
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'where'"):
        np.sum(x, where=X > 0)
    with pytest.raises(TypeError, match="'initial'"):
        np.max(x, initial=0.0)
    with pytest.raises(TypeError, match="Wrong arguments"):
        np.add(x, x, where=True)
    with pytest.raises(TypeError, match="no implementation found for 'numpy.cumulative_sum'"):
        np.cumulative_sum(x, axis=0)
    with pytest.raises(TypeError, match="'where'"):
        x.sum(where=True)
    assert "cumulative_sum" not in API["cupy"] and "eig" not in API["cupy.linalg"]
    assert not hasattr(simcupy.special, "jn") and hasattr(simcupy.special, "erf")


def test_ufunc_methods_as_cupy_has_them(sim, x):
    z = sim.zeros(4)
    sim.add.at(z, sim.asarray(np.array([0, 0, 3])), 1.0)
    assert z.tolist() == [2.0, 0.0, 0.0, 1.0]
    with pytest.raises(NotImplementedError, match="multiply.at"):
        sim.multiply.at(z, sim.asarray(np.array([0])), 2.0)
    with pytest.raises(TypeError):  # NumPy's dispatch of add.at refuses an index tuple
        np.add.at(z, (sim.asarray(np.array([0])),), 1.0)
    with pytest.warns(DeprecationWarning, match="cupy.add.at"):  # deprecated since CuPy 12
        simcupyx.scatter_add(z, sim.asarray(np.array([1, 1])), 1.0)
    assert z.tolist() == [2.0, 2.0, 0.0, 1.0]
    assert float(np.add.reduce(x, axis=None)) == 15.0
    with pytest.raises(NotImplementedError, match="maximum.reduce"):
        sim.maximum.reduce(x)


def test_no_cuda_source(sim):
    with pytest.raises(NotImplementedError, match="runs no CUDA source"):
        sim.RawModule(code="")


# ----------------------------------------------------------------------------- transfers

def test_every_transfer_is_counted(sim, x):
    expected = [
        (lambda: sim.asarray(X), "to_device"), (lambda: sim.array([1.0, 2.0]), "to_device"),
        (lambda: x[np.array([0, 1])], "to_device"), (lambda: x.get(), "to_host"),
        (lambda: sim.asnumpy(x), "to_host"), (lambda: float(x[0, 0]), "to_host"),
        (lambda: bool(x[0, 0] > 0), "to_host"), (lambda: x[0, 0].item(), "to_host"),
        (lambda: repr(x), "to_host"), (lambda: x[x > 2], "to_host"),
        (lambda: np.nonzero(x), "to_host")]
    for fn, direction in expected:
        before = dict(TOTALS)
        with transfers() as log:
            fn()
        assert len(log) == 1 and getattr(log, direction) == 1, (direction, log)
        assert TOTALS[direction] == before[direction] + 1
    with transfers() as log:  # on the device: no transfer
        y = np.exp(x) @ x.T + 2.0
        y[0] = 0.0
        sim.zeros(3)[1] = 1.0
        x.sum(axis=0).reshape(3, 1)
    assert not log.events, log


def test_no_transfers_raises_at_the_transfer(x):
    with pytest.raises(HostTransferError, match=r"device -> host: float\(\).*test_simdevice"):
        with no_transfers():
            float(x[0, 0])
    with simcupyx.allow_synchronize(False), pytest.raises(HostTransferError):
        x.get()


# ----------------------------------------------------------------------------- registration

def test_fnad_sees_the_simulated_device_as_a_gpu(x):
    assert fnad.devices() == ["cpu", "gpu:0"] and device_of(x) == "gpu:0"
    assert is_device_array(x) and array_module(x) is simcupy and backend_of(x).name == NAME
    assert describe_array(x) == "a simulated CuPy (gpu:0) float64 array of shape (2, 3)"
    assert device_backend().xpx is simcupyx and fnad.numpy.fft.fftfreq(4, device="gpu").shape
    moved = fnad.device_put(X, "gpu")
    assert type(moved) is simcupy.ndarray and fnad.device_put(moved, "gpu") is moved
    assert str(fnad.devices("gpu")[0]) == "gpu:0" and str(parse_device("gpu")) == "gpu"
    np.testing.assert_array_equal(fnad.to_numpy(moved), X)
    with pytest.raises(backend.DeviceMismatchError, match=r"NumPy \(cpu\).*simulated CuPy"):
        fnp.concatenate([X, x])


def test_registration_is_undone_on_exit():
    n = len(backend._BACKENDS)  # the test's own installation is one
    with installed() as b:
        assert device_backend() is b and len(backend._BACKENDS) == n + 1
    assert len(backend._BACKENDS) == n and device_backend().name == NAME


def test_cupy_is_registered_through_the_same_registry(monkeypatch, sim):
    """CuPy, found on first use, goes through register_device_backend (behind a backend
    registered before it: the simulated device keeps "gpu" until it is uninstalled)."""
    class ndarray:  # CuPy's name, found by its module
        pass
    ndarray.__module__ = "cupy._core.core"
    fake = types.SimpleNamespace(ndarray=ndarray, cuda=types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDeviceCount=lambda: 1)))
    calls = []
    monkeypatch.setattr(backend, "_cupy", False)
    monkeypatch.setattr(backend, "_BACKENDS", list(backend._BACKENDS))
    monkeypatch.setattr(backend, "_BY_TYPE", dict(backend._BY_TYPE))
    monkeypatch.setattr(backend, "cupy_module", lambda: fake)
    real = backend.register_device_backend
    monkeypatch.setattr(backend, "register_device_backend",
                        lambda *a, **k: calls.append((a, k)) or real(*a, **k))
    assert backend_of(ndarray()).name == "CuPy" and array_module(ndarray()) is fake
    assert calls == [((fake, ndarray), dict(name="CuPy", xpx=backend._import_cupyx,
                                           fallback=True))]
    assert device_backend().name == NAME  # the simulated device keeps "gpu"


def test_register_and_unregister():
    class Arr:
        shape, dtype = (2,), np.dtype(np.float32)
    xp = types.SimpleNamespace()
    b = register_device_backend(xp, Arr, name="Mine")
    try:
        assert array_module(Arr()) is xp and device_backend() is b and is_device_array(Arr())
    finally:
        unregister_device_backend(b)
    assert not is_device_array(Arr())
