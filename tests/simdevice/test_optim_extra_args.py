"""L-BFGS, the line searches, lookahead and fnad_optim.contrib on the simulated device: their
states are made on the params' device and stay there, with the host run's results."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad_optim as fo
from fnad._core.backend import is_device_array
from tests.simdevice import transfers

pytestmark = pytest.mark.sim_device


def _f(p):
    return fnp.sum((p["a"] - 1.0) ** 2) + 2.0 * fnp.sum(p["b"] ** 2) + fnp.sum(p["a"] ** 4)


PARAMS = {"a": np.array([3.0, -2.0], np.float32), "b": np.array([[0.5, 1.5], [1.0, -1.0]],
                                                                 np.float32)}
OPTIMIZERS = {  # name: (make, host reads allowed per step: the searches' loop conditions)
    "lbfgs": (fo.lbfgs, 8),
    "lbfgs backtracking": (lambda: fo.lbfgs(
        linesearch=fo.scale_by_backtracking_linesearch(10, store_grad=True)), 8),
    "lookahead adam": (lambda: fo.lookahead(fo.adam(1e-2), 2, 0.5), 0),
    "schedule_free_adamw": (lambda: fo.contrib.schedule_free_adamw(1e-2), 0),
    "prodigy": (fo.contrib.prodigy, 0),
    "muon": (lambda: fo.contrib.muon(0.02), 0),
}


def _run(opt, name, params, steps=4):
    searches = name.startswith("lbfgs")
    if name.startswith("lookahead"):
        params = fo.LookaheadParams.init_synced(params)
    state, reads = opt.init(params), []
    value_and_grad = fo.value_and_grad_from_state(_f)
    for _ in range(steps):
        with transfers() as log:
            if searches:
                v, g = value_and_grad(params, state=state)
                u, state = opt.update(g, state, params, value=v, grad=g, value_fn=_f)
            else:
                g = fnad.grad(_f)(params.fast if name.startswith("lookahead") else params)
                u, state = opt.update(g, state, params)
            params = fo.apply_updates(params, u)
        reads.append(log.to_host)
        assert log.to_device == 0, log
    return params, state, reads


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_state_stays_on_device_with_the_host_results(name):
    make, allowed = OPTIMIZERS[name]
    host = _run(make(), name, PARAMS)
    dev = _run(make(), name, fnad.device_put(PARAMS, "gpu"))
    assert all(is_device_array(x) for x in fnad.tree_leaves(dev[:2]))
    assert max(dev[2]) <= allowed, dev[2]
    for a, b in zip(fnad.tree_leaves(dev[:2]), fnad.tree_leaves(host[:2])):
        np.testing.assert_allclose(fnad.to_numpy(a), b, rtol=1e-5, atol=1e-6)
