"""Optimizer states are pytrees of arrays: a checkpoint taken mid-run with `fnad.save`
resumes bit for bit."""

import numpy as np
import pytest

import fnad
import fnad_optim as fo

if not hasattr(fnad, "save"):
    pytest.skip("fnad.save is not available yet", allow_module_level=True)

TOTAL, CUT = 12, 5


def _params(dtype):
    rng = np.random.default_rng(0)
    return {"layer": {"w": rng.normal(size=(3, 2)).astype(dtype),
                      "b": rng.normal(size=2).astype(dtype)},
            "scale": [np.ones(2, dtype)]}


def _grads(step, dtype):
    rng = np.random.default_rng(100 + step)
    g = fnad.tree_map(lambda p: rng.normal(size=p.shape).astype(dtype), _params(dtype))
    if step == 3:  # one bad step for the NaN guard
        g["layer"]["b"] = np.full(2, np.nan, dtype)
    return g


def _no_bias(tree):
    return fnad.tree_map(lambda x: x.ndim > 1, tree)


OPTIMIZERS = {
    "sgd": lambda: fo.apply_if_finite(fo.sgd(0.1, momentum=0.9, nesterov=True,
                                             weight_decay=1e-2)),
    "adamw_schedule_mask": lambda: fo.apply_if_finite(fo.chain(
        fo.clip_by_global_norm(1.0),
        fo.adamw(fo.warmup_cosine_decay_schedule(0.0, 1e-2, 3, 20), weight_decay=0.1,
                 mask=_no_bias))),
    "rmsprop": lambda: fo.chain(fo.zero_nans(), fo.rmsprop(1e-2, centered=True, momentum=0.9)),
    "adagrad": lambda: fo.chain(fo.zero_nans(), fo.adagrad(0.1)),
    "lion": lambda: fo.chain(fo.zero_nans(), fo.lion(1e-3, b1=fo.linear_schedule(0.5, 0.9, 5))),
    "lamb_multi_steps": lambda: fo.apply_if_finite(fo.multi_steps(fo.lamb(1e-2), 3)),
}


def _steps(opt, params, state, start, stop, dtype):
    for step in range(start, stop):
        updates, state = opt.update(_grads(step, dtype), state, params)
        params = fo.apply_updates(params, updates)
    return params, state


def _identical(a, b):
    a_leaves, a_def = fnad.tree_flatten(a)
    b_leaves, b_def = fnad.tree_flatten(b)
    assert a_def == b_def, f"{a_def} != {b_def}"
    for x, y in zip(a_leaves, b_leaves):
        assert type(x) is type(y) and x.dtype == y.dtype and x.shape == y.shape
        assert np.array_equal(x, y, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_resume_from_checkpoint_is_bit_identical(tmp_path, name, dtype):
    opt = OPTIMIZERS[name]()
    params = _params(dtype)
    state = opt.init(params)
    straight = _steps(opt, params, state, 0, TOTAL, dtype)

    params, state = _steps(opt, params, state, 0, CUT, dtype)
    path = tmp_path / "ckpt.npz"
    fnad.save(path, {"params": params, "opt_state": state})
    del params, state

    opt = OPTIMIZERS[name]()  # a fresh process would rebuild the optimizer and its state
    like = {"params": _params(dtype), "opt_state": opt.init(_params(dtype))}
    loaded = fnad.load(path, like=like)  # the state's NamedTuple classes come from like
    _identical(loaded["opt_state"], _steps(opt, _params(dtype), opt.init(_params(dtype)), 0,
                                           CUT, dtype)[1])
    resumed = _steps(opt, loaded["params"], loaded["opt_state"], CUT, TOTAL, dtype)
    _identical(resumed, straight)


def test_load_with_like_keeps_state_classes(tmp_path):
    opt = fo.adamw(1e-3)
    params = _params(np.float32)
    state = opt.init(params)
    fnad.save(tmp_path / "s.npz", state)
    loaded = fnad.load(tmp_path / "s.npz", like=opt.init(params))
    assert type(loaded[0]) is fo.ScaleByAdamState
    assert loaded[0].count.dtype == np.int32 and loaded[0].count.shape == ()
    raw = fnad.load(tmp_path / "s.npz")  # without like: plain tuples, no class named by the file
    assert type(raw[0]) is tuple and len(raw[0]) == 3
    named = fnad.load(tmp_path / "s.npz", types=[fo.ScaleByAdamState, fo.EmptyState])
    assert type(named[0]) is fo.ScaleByAdamState
