"""fnad.numpy.take's modes (NumPy's 'raise', 'clip', 'wrap'): values, gradients, jit."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp

X = np.arange(10.0).reshape(2, 5)
IDX = np.array([-7, -1, 0, 3, 12])


@pytest.mark.parametrize("mode", ["clip", "wrap"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_modes_match_numpy(mode, axis):
    np.testing.assert_array_equal(fnp.take(X, IDX, axis=axis, mode=mode),
                                  np.take(X, IDX, axis=axis, mode=mode))
    assert fnp.take(X, 17, mode=mode) == np.take(X, 17, mode=mode)


def test_clip_gradient_and_jit():
    g = fnad.grad(lambda x: fnp.sum(fnp.take(x, np.array([0, 12, 12]), mode="clip")))(
        np.arange(10.0))
    np.testing.assert_array_equal(g, [1, 0, 0, 0, 0, 0, 0, 0, 0, 2])
    assert fnad.jit(lambda x, i: fnp.take(x, i, mode="clip"))(np.arange(10.0), 11) == 9.0


def test_raise_and_bad_arguments():
    with pytest.raises(IndexError):
        fnp.take(X, 12)
    with pytest.raises(ValueError, match="mode"):
        fnp.take(X, 1, mode="fill")
    with pytest.raises(TypeError, match="out="):
        fnp.take(X, 1, out=np.zeros(()))
