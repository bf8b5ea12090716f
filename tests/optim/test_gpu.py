"""fnad_optim on CuPy arrays: same results as on NumPy, leaves stay on the GPU in their dtype,
and a GPU run checkpoints and resumes."""

import numpy as np
import pytest

import fnad
import fnad_optim as fo

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy")
try:
    cupy.cuda.runtime.getDeviceCount()
except Exception as e:  # no driver or no device
    pytest.skip(f"no usable GPU: {e}", allow_module_level=True)

OPTIMIZERS = {
    "sgd": lambda: fo.sgd(0.1, momentum=0.9, nesterov=True, weight_decay=1e-2),
    "adamw_schedule_mask": lambda: fo.adamw(fo.warmup_cosine_decay_schedule(0.0, 1e-2, 2, 10),
                                            weight_decay=0.1,
                                            mask=lambda p: fnad.tree_map(lambda x: x.ndim > 1,
                                                                         p)),
    "rmsprop": lambda: fo.rmsprop(1e-2, centered=True, momentum=0.9),
    "adagrad": lambda: fo.adagrad(0.1),
    "lion": lambda: fo.lion(1e-3),
    "lamb": lambda: fo.lamb(1e-2, weight_decay=1e-2),
    "guarded_clipped_accumulated": lambda: fo.apply_if_finite(fo.multi_steps(fo.chain(
        fo.zero_nans(), fo.clip(0.5), fo.clip_by_global_norm(1.0), fo.adam(1e-2)), 2)),
}


def _params():
    rng = np.random.default_rng(0)
    return {"w": rng.normal(size=(8, 4)).astype(np.float32),
            "b": rng.normal(size=4).astype(np.float32)}


def _grads(step):
    rng = np.random.default_rng(10 + step)
    return fnad.tree_map(lambda p: rng.normal(size=p.shape).astype(np.float32), _params())


def _gpu(tree):
    return fnad.tree_map(cupy.asarray, tree)


def _run(opt, params, state, steps, put):
    for s in steps:
        updates, state = opt.update(put(_grads(s)), state, params)
        params = fo.apply_updates(params, updates)
    return params, state


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_gpu_matches_cpu(name):
    opt = OPTIMIZERS[name]()
    cpu, _ = _run(opt, _params(), opt.init(_params()), range(6), lambda t: t)
    gpu_params = _gpu(_params())
    gpu, state = _run(opt, gpu_params, opt.init(gpu_params), range(6), _gpu)
    for g, c in zip(fnad.tree_leaves(gpu), fnad.tree_leaves(cpu)):
        assert isinstance(g, cupy.ndarray) and g.dtype == np.float32
        np.testing.assert_allclose(cupy.asnumpy(g), c, rtol=1e-5, atol=1e-6)
    for leaf in fnad.tree_leaves(state):
        assert isinstance(leaf, (cupy.ndarray, np.ndarray))


def test_gpu_checkpoint_resume(tmp_path):
    opt = OPTIMIZERS["adamw_schedule_mask"]()
    params = _gpu(_params())
    state = opt.init(params)
    straight, _ = _run(opt, params, state, range(8), _gpu)
    params, state = _run(opt, params, state, range(4), _gpu)
    like = {"params": params, "opt_state": state}
    fnad.save(tmp_path / "gpu.npz", like)
    loaded = fnad.load(tmp_path / "gpu.npz", like=like)
    resumed, _ = _run(opt, loaded["params"], loaded["opt_state"], range(4, 8), _gpu)
    for a, b in zip(fnad.tree_leaves(resumed), fnad.tree_leaves(straight)):
        assert isinstance(a, cupy.ndarray)
        assert bool((a == b).all())
