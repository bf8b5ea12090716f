"""jit is bit-identical to eager for complex elementwise ops whose argument buffer dies:
NumPy's complex multiply rounds differently when its output aliases an input (`out=`), so
the in-place pass must not hand a complex result an argument's buffer. Found by the OpInfo
oracle (tests/opinfo, linalg.vecdot)."""

import numpy as np

import fnad
import fnad.numpy as fnp

X = np.array([-4.826984902407649 - 7.582430495695129j])
Y = np.array([-0.6046891126565539 - 1.5411692216498662j])


def test_multiply_of_a_dying_complex_temporary_is_bit_identical():
    f = lambda a, b: fnp.multiply(fnp.conj(a), b)   # conj(a)'s buffer dies at the multiply
    np.testing.assert_array_equal(fnad.jit(f)(X, Y), f(X, Y), strict=True)


def test_vecdot_under_jit_is_bit_identical():
    f = lambda a, b: fnp.sum(fnp.multiply(fnp.conj(a), b), axis=-1)
    rng = np.random.default_rng(0)
    for n in (1, 2, 5):
        a = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        b = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        for x, y in ((X, Y), (a, b)):
            np.testing.assert_array_equal(fnad.jit(f)(x, y), f(x, y), strict=True)
