"""fnad.Array, JAX's `jax.Array`: an isinstance check over NumPy/CuPy arrays, NumPy scalars
and tracers, never constructed."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp


def test_instances():
    assert isinstance(fnp.arange(5), fnad.Array)
    assert isinstance(fnp.sum(np.ones(3)), fnad.Array)  # a NumPy scalar, JAX's 0-d array
    assert not isinstance(3.0, fnad.Array) and not isinstance([1.0], fnad.Array)


def test_tracers_are_instances():
    seen = []
    fnad.grad(lambda x: seen.append(isinstance(x, fnad.Array)) or x * 2.0)(1.0)
    fnad.jit(lambda x: seen.append(isinstance(x, fnad.Array)) or x)(np.ones(2))
    fnad.vmap(lambda x: seen.append(isinstance(x, fnad.Array)) or x)(np.ones(2))
    assert seen == [True, True, True]


def test_not_constructed():
    with pytest.raises(TypeError, match="fnad.numpy.asarray"):
        fnad.Array(np.ones(2))
