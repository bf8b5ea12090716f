"""Issue 21's additions on CuPy: the complex error functions (the Faddeeva code runs on the
device as it is), gammasgn, sqrtm's complex root and the triangle-read eigh, against the
same calls on NumPy."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad.scipy.linalg as fla
import fnad.scipy.special as fsp
from fnad._core.backend import is_device_array

pytestmark = pytest.mark.gpu

Z = np.array([-0.6 - 0.12j, 0.3 + 0.4j, 1.2 - 0.5j, -2.1 + 1.7j, 4.0 + 0.0j])
S3 = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.5], [0.0, 0.5, 2.0]])


@pytest.mark.parametrize("name", ["erf", "erfc", "erfcx", "wofz", "ndtr", "log_ndtr"])
def test_complex_special_functions_on_the_device(cp, name):
    f = getattr(fsp, name)
    got = f(cp.asarray(Z))
    assert is_device_array(got)
    np.testing.assert_allclose(cp.asnumpy(got), f(Z), rtol=1e-13)
    g = fnad.grad(lambda z: fnp.sum(fnp.abs(f(z)) ** 2))(cp.asarray(Z))
    np.testing.assert_allclose(cp.asnumpy(g), fnad.grad(lambda z: fnp.sum(fnp.abs(f(z)) ** 2))(Z),
                               rtol=1e-12)


def test_gammasgn_and_refusals_on_the_device(cp):
    x = np.array([-2.5, -1.5, -0.5, 0.0, 1.5, -1.0])
    np.testing.assert_array_equal(cp.asnumpy(fsp.gammasgn(cp.asarray(x))), fsp.gammasgn(x))
    with pytest.raises(TypeError, match="gamma: complex inputs"):
        fsp.gamma(cp.asarray(Z))


def test_sqrtm_and_eigh_on_the_device(cp):
    r = fla.sqrtm(cp.asarray(S3))
    assert is_device_array(r) and r.dtype == np.complex128
    np.testing.assert_allclose(cp.asnumpy(r), fla.sqrtm(S3), atol=1e-13)
    a = np.random.default_rng(0).standard_normal((4, 4))
    f = lambda a: fnp.sum(fnp.linalg.eigvalsh(a, UPLO="U") ** 3)
    np.testing.assert_allclose(cp.asnumpy(fnad.grad(f)(cp.asarray(a))), fnad.grad(f)(a),
                               atol=1e-12)
