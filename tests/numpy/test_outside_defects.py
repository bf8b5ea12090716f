"""fnad.numpy against cases an outside corpus found wrong (issue 31): each test failed before
its fix. The reference is NumPy for values, PyTorch / central differences for derivatives."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp


def _grads(f, *args):
    return [float(g) for g in fnad.grad(f, argnums=tuple(range(len(args))))(*args)]


def _tangents(f, *args):
    return [float(fnad.jvp(f, args, tuple(1.0 * (i == k) for i in range(len(args))))[1])
            for k in range(len(args))]


# ------------------------------------------------------------------------------------- clip
# (a, a_min, a_max) -> d/d(a, a_min, a_max), checked against torch.clamp; where a_min > a_max the
# result is a_max, so the gradient is a_max's. The last case is a tie where torch gives all zeros
# (no derivative at all); fnad keeps one of the equal bounds.
@pytest.mark.parametrize("case, want", [
    ((-3.0, 0.47, -0.03), [0, 0, 1]),
    ((0.3, 0.5, 0.3), [0, 0, 1]),
    ((0.5, 0.5, 0.2), [0, 0, 1]),
    ((0.2, 0.0, 1.0), [1, 0, 0]),
    ((0.0, 0.0, 1.0), [1, 0, 0]),
    ((1.0, 0.0, 1.0), [1, 0, 0]),
    ((-1.0, 0.0, 1.0), [0, 1, 0]),
    ((2.0, 0.0, 1.0), [0, 0, 1]),
    ((0.5, 0.5, 0.5), [1, 0, 0]),
    ((-3.0, 0.5, 0.5), [0, 1, 0]),
])
def test_clip_gradient_goes_to_the_bound_that_wins(case, want):
    assert _grads(fnp.clip, *case) == want
    assert _tangents(fnp.clip, *case) == want


def test_clip_inverted_bounds_repro():
    assert float(fnad.grad(lambda lo: fnp.clip(-3.0, lo, -0.03))(0.47)) == 0.0
    lo = np.array([0.47, -1.0])
    assert np.array_equal(fnad.grad(lambda hi: fnp.sum(fnp.clip(np.array([-3.0, 2.0]), lo, hi)))(
        np.array([-0.03, 1.0])), [1.0, 1.0])
