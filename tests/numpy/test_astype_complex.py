"""`astype` from real to complex: the VJP hands the real input the real part of its complex
cotangent (docs/api.md's rule for real inputs meeting complex values), without NumPy's
ComplexWarning (an error in the tests). Found by the OpInfo oracle (tests/opinfo, cdouble)."""

import numpy as np

import fnad
import fnad.numpy as fnp

X = np.array([1.0, -2.0, 0.5])
W = np.array([1 + 2j, 3 - 4j, -0.5 + 1j])


def test_vjp_of_a_real_to_complex_cast_takes_the_real_part():
    out, vjp = fnad.vjp(lambda x: fnp.astype(x, np.complex128), X)
    (g,) = vjp(W)
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g, W.real)


def test_grad_through_a_real_to_complex_cast():
    g = fnad.grad(lambda x: fnp.real(fnp.sum(fnp.astype(x, np.complex64) * W)))(X)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, W.real, rtol=1e-6)
