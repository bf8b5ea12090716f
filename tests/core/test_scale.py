"""Issue 10, section 4: scale. Deep pytrees work at any depth; the backward pass of
stack/concatenate is linear in the number of pieces."""

import time
from collections import namedtuple

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp

Pair = namedtuple("Pair", "left right")


def _deep(depth):
    """A tree `depth` containers deep, cycling list, dict, tuple and namedtuple nodes."""
    t = np.float64(1.0)
    for i in range(depth):
        t = [t, np.ones(1)] if i % 4 == 0 else {"a": t, "b": None} if i % 4 == 1 else \
            (t,) if i % 4 == 2 else Pair(t, np.float64(i))
    return t


@pytest.mark.parametrize("depth", [500, 5000])
def test_deep_pytree_flatten_unflatten_compare_print(depth):
    # before: RecursionError in flatten at 1000-ish, in unflatten and == at 500
    t = _deep(depth)
    leaves, td = fnad.tree_flatten(t)
    assert len(leaves) == td.num_leaves == depth // 2 + 1
    back = fnad.tree_unflatten(td, leaves)
    assert fnad.tree_structure(back) == td
    assert fnad.tree_structure(_deep(depth - 1)) != td
    assert "..." in repr(td)
    doubled = fnad.tree_map(lambda x, y: x + y, t, back)
    assert fnad.tree_leaves(doubled)[0] == 2.0


def test_deep_pytree_is_leaf_and_grad():
    t = _deep(600)
    leaves = fnad.tree_leaves(t, is_leaf=lambda x: x is None)  # None kept as a leaf
    assert len(leaves) == 600 // 2 + 1 + 600 // 4 and leaves.count(None) == 600 // 4
    g = fnad.grad(lambda t: fnp.sum(fnp.stack([fnp.sum(x) for x in fnad.tree_leaves(t)])))(t)
    assert all(np.all(x == 1.0) for x in fnad.tree_leaves(g))


@pytest.mark.slow
@pytest.mark.parametrize("join", [fnp.stack, fnp.concatenate])
def test_stack_concatenate_backward_is_linear(join):
    # before: quadratic, 8000 pieces took 25 s; a linear backward takes well under a second
    xs = [np.full(3, float(i)) for i in range(8000)]
    t0 = time.perf_counter()
    g = fnad.grad(lambda xs: fnp.sum(join(xs) ** 2))(xs)
    assert time.perf_counter() - t0 < 5.0
    np.testing.assert_array_equal(g[7999], 2 * 7999.0)
