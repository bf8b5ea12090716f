"""fnad.lax's operations (docs/lax.md) on the simulated device: NumPy's values, every result
on the device, no host-device transfer, eagerly and under jit."""

import numpy as np
import pytest

import fnad
from fnad import lax
from fnad._core.backend import is_device_array
from tests.simdevice import transfers

pytestmark = pytest.mark.sim_device
R = np.random.default_rng(0)
X, Y = R.standard_normal((3, 4)), R.standard_normal((3, 4))
NHWC, HWIO = R.standard_normal((2, 5, 6, 4)), R.standard_normal((3, 2, 2, 4))
DN = ("NHWC", "HWIO", "NHWC")
BR = [lambda a: a + 1.0, lambda a: a * a, lambda a: -a]

CASES = {
    "elementwise": (lambda x, y: lax.clamp(-0.5, lax.logistic(x) * lax.rsqrt(y * y + 1), 0.7)
                    + lax.select_n(x > 0, x, y) + lax.integer_pow(x, 3), (X, Y)),
    "pad": (lambda x: lax.pad(x, 0.5, [(1, -1, 1), (-2, 3, 0)]), (X,)),
    "dynamic_slice": (lambda x: lax.dynamic_slice(x, (2, -3), (2, 3)), (X,)),
    "dynamic_update_slice": (lambda x, y: lax.dynamic_update_slice(x, y[:2, :2], (2, -1)),
                             (X, Y)),
    "sort_top_k": (lambda x, y: lax.sort((x, y), 1) + lax.top_k(x, 2), (X, Y)),
    "cumulative": (lambda x: lax.cummax(x, 1) + lax.cumlogsumexp(x, 0, reverse=True), (X,)),
    "reduce": (lambda x: lax.reduce(x, 1.0, lambda a, b: a * b, (0,)), (X,)),
    "reduce_window": (lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1),
                                                  (1, 2, 1, 1), "SAME"), (NHWC,)),
    "conv": (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN,
                                                   feature_group_count=2), (NHWC, HWIO)),
    "conv_transpose": (lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME"),
                       (NHWC, R.standard_normal((3, 3, 4, 2)))),
    "dot_general": (lambda x, y: lax.dot_general(x, y, (((1,), (1,)), ((), ()))), (X, Y)),
    "map_switch_scan": (lambda x: lax.map(lambda r: lax.switch(1, BR, r), x)
                        + lax.associative_scan(lax.add, x), (X,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_lax_ops_stay_on_the_device(name, jit):
    fun, args = CASES[name]
    want = fun(*args)
    run = fnad.jit(fun) if jit else fun
    if jit:
        run(*fnad.device_put(args, "gpu"))  # staged once outside the transfer count
    dargs = fnad.device_put(args, "gpu")
    with transfers() as log:
        got = run(*dargs)
    assert not log.events, log
    for g, w in zip(fnad.tree_leaves(got), fnad.tree_leaves(want)):
        assert is_device_array(g), f"{name}: a {type(g).__name__} left the device"
        np.testing.assert_allclose(fnad.to_numpy(g), w, rtol=1e-12, atol=1e-12)


def test_a_traced_start_and_switch_index_stay_on_the_device():
    # a switch on a traced index is a tree of conds: each reads its predicate back (one
    # 0-d bool, as lax.cond does on a device), here two for three branches
    f = fnad.jit(lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, 1) * lax.switch(i, BR, 2.0))
    want = f(X, np.int32(3))
    dx, di = fnad.device_put((X, np.int32(3)), "gpu")
    f(dx, di)
    with transfers() as log:
        got = f(dx, di)
    assert log.to_device == 0 and log.to_host == 2, log
    assert is_device_array(got)
    np.testing.assert_allclose(fnad.to_numpy(got), want, rtol=1e-14)
