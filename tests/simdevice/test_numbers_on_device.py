"""Numbers given next to device values (a select default, a linspace endpoint, a logspace
base, a plain item of a list of traced values or device arrays, an r_ item) are filled in on
the device, not made on the host, and no op reads a device value back for a check: no
host-device transfer, eagerly and under jit, and NumPy's values. Device arrays that are
not traced take fnad's own code where CuPy lacks the function (geomspace) or refuses the
arguments (a number among select's choices, lists for asarray and r_)."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad.scipy.integrate as fint
import fnad.scipy.special as fsp
from fnad._core.backend import is_device_array
from tests.simdevice import no_transfers

pytestmark = pytest.mark.sim_device
A = np.array([0.5, 1.5, 2.0])
Z = np.array([0.3 + 0.4j, -1.2 - 0.5j, 2.0 + 0.0j])

CASES = {
    "select, number choice and int default": lambda a: fnp.select(
        [a < 1.0, a > 1.8], [a * a, 3.0], 0),
    "linspace, int stop": lambda a: fnp.linspace(a, 4, 5, axis=-1),
    "linspace, number start, retstep": lambda a: fnp.linspace(1.0, a, 4, retstep=True)[0],
    "logspace, float32 base": lambda a: fnp.logspace(a, 1.0, 3, base=np.float32(2.0)),
    "geomspace, number stop": lambda a: fnp.geomspace(a, 8.0, 4),
    "asarray, list with NumPy numbers": lambda a: fnp.asarray([a[0], np.float32(2.0), 3]),
    "array, nested list with numbers": lambda a: fnp.array([[a[0], 1.0], [2, a[2]]]),
    "r_, numbers and ranges": lambda a: fnp.r_[a, 0, 1:3, -1:1:3j],
    "c_": lambda a: fnp.c_[a, a * 2.0],
    "erfc of complex, one on the real axis": lambda z: fsp.erfc(z),
    "log_ndtr of complex": lambda z: fsp.log_ndtr(z),
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_numbers_are_made_on_the_device(name, jit):
    f = CASES[name]
    x = Z if "complex" in name else A
    g = fnad.jit(f) if jit else f
    dx = fnad.device_put(x, "gpu")
    with no_transfers():
        out = g(dx)
        vjp_out = fnad.vjp(g, dx)[1](fnp.ones_like(out))[0]
    assert is_device_array(out) and is_device_array(vjp_out)
    np.testing.assert_allclose(fnad.to_numpy(out), f(x), rtol=1e-13)
    np.testing.assert_allclose(fnad.to_numpy(vjp_out),
                               fnad.vjp(f, x)[1](np.ones_like(f(x)))[0], rtol=1e-13)


def test_geomspace_reads_no_device_value_for_its_zero_check():
    dx = fnad.device_put(np.array([0.0, 1.0]), "gpu")
    with no_transfers(), np.errstate(all="ignore"):
        out = fnp.geomspace(dx, 2.0, 3)
    assert is_device_array(out)
    with pytest.raises(ValueError, match="cannot include zero"):  # on the host: checked
        fnad.grad(lambda a: fnp.sum(fnp.geomspace(a, 2.0, 3)))(np.array([0.0, 1.0]))


def test_odeint_with_number_args_differentiates_on_the_device():
    """Python-number args of odeint stay numbers in its adjoint (a vjp would make them host
    arrays, which the device state cannot mix with: issue 31's pendulum case)."""
    def f(y, t, a, b):
        return fnp.stack([a * y[1], -b * fnp.sin(y[0])])

    def loss(y0):
        return fnp.sum(fint.odeint(f, y0, fnp.linspace(y0[0] * 0, 0.5, 3), 1.0, 0.8))

    y0 = np.array([0.3, -0.2])
    got = fnad.grad(loss)(fnad.device_put(y0, "gpu"))  # was a DeviceMismatchError
    assert is_device_array(got)
    np.testing.assert_allclose(fnad.to_numpy(got), fnad.grad(loss)(y0), rtol=1e-10)
