"""fnad.numpy.convolve and correlate: NumPy's values for every mode and length order,
derivatives, jit and vmap, and jax.numpy's values where installed."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad.test_util import check_grads

RNG = np.random.default_rng(0)
LENGTHS = [(5, 3), (3, 5), (4, 4), (1, 3), (6, 1)]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n, m", LENGTHS, ids=str)
def test_matches_numpy(n, m, mode):
    a, v = RNG.normal(size=n), RNG.normal(size=m)
    np.testing.assert_allclose(fnp.convolve(a, v, mode), np.convolve(a, v, mode), atol=1e-14)
    np.testing.assert_allclose(fnp.correlate(a, v, mode), np.correlate(a, v, mode), atol=1e-14)
    ac, vc = a + 1j * RNG.normal(size=n), v - 2j
    np.testing.assert_allclose(fnp.correlate(ac, vc, mode), np.correlate(ac, vc, mode),
                               atol=1e-14)


def test_matches_jax_numpy():
    jnp = pytest.importorskip("jax.numpy")
    a, v = RNG.normal(size=6).astype(np.float32), RNG.normal(size=3).astype(np.float32)
    for mode in ("full", "same", "valid"):
        np.testing.assert_allclose(fnp.convolve(a, v, mode), jnp.convolve(a, v, mode), rtol=1e-5)
        np.testing.assert_allclose(fnp.correlate(a, v, mode), jnp.correlate(a, v, mode),
                                   rtol=1e-5)


def test_grads_jit_vmap():
    check_grads(lambda a, v: fnp.convolve(a, v, "same"), (RNG.normal(size=5),
                                                          RNG.normal(size=3)), order=2)
    check_grads(lambda a, v: fnp.correlate(a, v, "full"), (RNG.normal(size=3),
                                                           RNG.normal(size=5)), order=2)
    np.testing.assert_allclose(fnad.jit(fnp.convolve)(np.ones(4), np.ones(2)), [1, 2, 2, 2, 1])
    out = fnad.vmap(lambda a: fnp.convolve(a, np.ones(2)))(np.ones((3, 4)))
    np.testing.assert_allclose(out, np.tile([1.0, 2, 2, 2, 1], (3, 1)))


def test_bad_inputs():
    with pytest.raises(ValueError, match="convolve: inputs must be non-empty 1-d"):
        fnp.convolve(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="mode"):
        fnp.convolve(np.ones(3), np.ones(2), mode="circular")
