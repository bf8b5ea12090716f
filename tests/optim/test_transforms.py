"""Transforms and wrappers against closed forms; dtypes; schedules as hyperparameters;
differentiating through an update."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad_optim as fo


def _params(dtype=np.float64):
    rng = np.random.default_rng(0)
    return {"w": rng.normal(size=(3, 2)).astype(dtype), "b": rng.normal(size=2).astype(dtype),
            "norm": {"scale": np.ones(2, dtype)}}


def _grads(seed=1, dtype=np.float64, scale=1.0):
    rng = np.random.default_rng(seed)
    return fnad.tree_map(lambda p: (scale * rng.normal(size=p.shape)).astype(dtype), _params())


def _run(opt, params, grads_list):
    state = opt.init(params)
    for g in grads_list:
        updates, state = opt.update(g, state, params)
        params = fo.apply_updates(params, updates)
    return params, state


def _close(a, b, **kw):
    for x, y in zip(fnad.tree_leaves(a), fnad.tree_leaves(b)):
        np.testing.assert_allclose(x, y, **kw)


# ----------------------------------------------------------------------------- closed forms


def test_scale_and_learning_rate_sign():
    g = _grads()
    u, _ = fo.scale(0.5).update(g, fo.scale(0.5).init(g))
    _close(u, fnad.tree_map(lambda x: 0.5 * x, g))
    tx = fo.scale_by_learning_rate(0.1)
    u, _ = tx.update(g, tx.init(g))
    _close(u, fnad.tree_map(lambda x: -0.1 * x, g))
    tx = fo.scale_by_learning_rate(0.1, flip_sign=False)
    u, _ = tx.update(g, tx.init(g))
    _close(u, fnad.tree_map(lambda x: 0.1 * x, g))


def test_scheduled_learning_rate_uses_count_before_step():
    tx = fo.scale_by_learning_rate(lambda count: 0.1 * (count + 1))
    g = {"x": np.ones(2)}
    state = tx.init(g)
    for k in range(4):
        u, state = tx.update(g, state)
        np.testing.assert_allclose(u["x"], -0.1 * (k + 1))
    assert int(state.count) == 4 and state.count.dtype == np.int32


def test_trace_momentum_and_nesterov():
    gs = [_grads(s) for s in range(4)]
    for nesterov in (False, True):
        tx = fo.trace(0.9, nesterov=nesterov)
        state = tx.init(gs[0])
        t = fnad.tree_map(np.zeros_like, gs[0])
        for g in gs:
            u, state = tx.update(g, state)
            t = fnad.tree_map(lambda gi, ti: gi + 0.9 * ti, g, t)
            want = fnad.tree_map(lambda gi, ti: gi + 0.9 * ti, g, t) if nesterov else t
            _close(u, want, rtol=1e-15)


def test_clip():
    g = {"x": np.array([-3.0, -0.5, 0.0, 0.7, 9.0])}
    tx = fo.clip(1.0)
    u, _ = tx.update(g, tx.init(g))
    np.testing.assert_array_equal(u["x"], [-1.0, -0.5, 0.0, 0.7, 1.0])


def test_global_norm_and_clip_by_global_norm():
    g = _grads(scale=3.0)
    flat = np.concatenate([x.ravel() for x in fnad.tree_leaves(g)])
    norm = np.linalg.norm(flat)
    assert float(fo.global_norm(g)) == pytest.approx(norm, rel=1e-14)
    tx = fo.clip_by_global_norm(1.0)
    u, _ = tx.update(g, tx.init(g))
    _close(u, fnad.tree_map(lambda x: x / norm, g), rtol=1e-14)
    assert float(fo.global_norm(u)) == pytest.approx(1.0)
    tx = fo.clip_by_global_norm(2 * norm)  # below the threshold: unchanged
    u, _ = tx.update(g, tx.init(g))
    _close(u, g, rtol=0)
    zeros = fnad.tree_map(np.zeros_like, g)
    u, _ = fo.clip_by_global_norm(1.0).update(zeros, fo.EmptyState())
    _close(u, zeros, rtol=0)


def test_zero_nans():
    g = {"a": np.array([1.0, np.nan, 2.0]), "b": np.array([3.0])}
    tx = fo.zero_nans()
    u, state = tx.update(g, tx.init(g))
    np.testing.assert_array_equal(u["a"], [1.0, 0.0, 2.0])
    assert bool(state.found_nan["a"]) and not bool(state.found_nan["b"])


def test_scale_by_adam_first_step_and_eps_root():
    g = {"x": np.array([2.0, -0.5])}
    tx = fo.scale_by_adam(eps=0.0)
    u, _ = tx.update(g, tx.init(g))
    np.testing.assert_allclose(u["x"], np.sign(g["x"]), rtol=1e-15)  # m_hat/sqrt(v_hat) = sign
    tx = fo.scale_by_adam(eps=0.0, eps_root=1.0)
    u, _ = tx.update(g, tx.init(g))
    np.testing.assert_allclose(u["x"], g["x"] / np.sqrt(g["x"] ** 2 + 1.0), rtol=1e-15)


def test_scale_by_adam_nesterov():
    g1, g2 = {"x": np.array([1.0])}, {"x": np.array([3.0])}
    b1, b2 = 0.9, 0.999
    tx = fo.scale_by_adam(b1, b2, eps=0.0, nesterov=True)
    state = tx.init(g1)
    _, state = tx.update(g1, state)
    u, _ = tx.update(g2, state)
    m = (1 - b1) * (b1 * 1.0 + 3.0)
    v = (1 - b2) * (b2 * 1.0 + 9.0)
    m_hat = b1 * m / (1 - b1**3) + (1 - b1) * 3.0 / (1 - b1**2)
    np.testing.assert_allclose(u["x"], m_hat / np.sqrt(v / (1 - b2**2)), rtol=1e-14)


def test_scale_by_rms_bias_correction():
    g = {"x": np.array([2.0, -0.5])}
    tx = fo.scale_by_rms(0.9, eps=0.0, bias_correction=True)
    u, _ = tx.update(g, tx.init(g))
    np.testing.assert_allclose(u["x"], np.sign(g["x"]), rtol=1e-15)


def test_adagrad_optax_default_is_zero_where_sum_is_zero():
    g = {"x": np.array([0.0, 2.0])}
    tx = fo.scale_by_adagrad(initial_accumulator_value=0.0, eps=1e-7)
    u, _ = tx.update(g, tx.init(g))
    np.testing.assert_allclose(u["x"], [0.0, 2.0 / np.sqrt(4.0 + 1e-7)], rtol=1e-15)


def test_lion_two_steps():
    g1, g2 = {"x": np.array([1.0, -2.0])}, {"x": np.array([-0.05, 0.5])}
    p = {"x": np.array([0.5, 0.5])}
    opt = fo.lion(0.1, b1=0.9, b2=0.99, weight_decay=0.1)
    state = opt.init(p)
    u1, state = opt.update(g1, state, p)
    np.testing.assert_allclose(u1["x"], -0.1 * (np.sign(g1["x"]) + 0.1 * p["x"]))
    u2, state = opt.update(g2, state, p)
    mu = 0.01 * g1["x"]
    np.testing.assert_allclose(u2["x"], -0.1 * (np.sign(0.1 * g2["x"] + 0.9 * mu)
                                                 + 0.1 * p["x"]))


def test_lamb_trust_ratio():
    p = {"w": np.array([3.0, 4.0]), "z": np.zeros(2)}
    g = {"w": np.array([1.0, -1.0]), "z": np.array([1.0, 1.0])}
    opt = fo.lamb(0.1, eps=0.0, weight_decay=0.0)
    u, _ = opt.update(g, opt.init(p), p)
    # Adam's first direction is sign(g) (norm sqrt 2); ||w|| = 5 -> ratio 5 / sqrt 2.
    np.testing.assert_allclose(u["w"], -0.1 * np.sign(g["w"]) * 5 / np.sqrt(2), rtol=1e-14)
    np.testing.assert_allclose(u["z"], -0.1 * np.sign(g["z"]), rtol=1e-14)  # zero param: ratio 1


# ----------------------------------------------------------------------------- weight decay mask


def test_add_decayed_weights_mask_tree_and_function():
    p, g = _params(), _grads()
    mask = {"w": True, "b": False, "norm": {"scale": False}}
    by_fn = lambda tree: fnad.tree_map(lambda x: x.ndim > 1, tree)
    for m in (mask, by_fn):
        tx = fo.add_decayed_weights(0.5, m)
        state = tx.init(p)
        u, state = tx.update(g, state, p)
        np.testing.assert_allclose(u["w"], g["w"] + 0.5 * p["w"])
        np.testing.assert_array_equal(u["b"], g["b"])
        np.testing.assert_array_equal(u["norm"]["scale"], g["norm"]["scale"])


def test_masked_keeps_state_for_selected_leaves_only():
    p = _params()
    tx = fo.masked(fo.adam(0.1), {"w": True, "b": False, "norm": {"scale": True}})
    state = tx.init(p)
    adam_state = state.inner_state[0]
    assert len(adam_state.mu) == 2  # w and norm.scale
    u, state = tx.update(_grads(), state, p)
    np.testing.assert_array_equal(u["b"], _grads()["b"])


def test_adamw_mask_leaves_biases_undecayed():
    p = _params()
    zero = fnad.tree_map(np.zeros_like, p)
    opt = fo.adamw(0.1, weight_decay=0.5, mask=lambda t: fnad.tree_map(lambda x: x.ndim > 1, t))
    u, _ = opt.update(zero, opt.init(p), p)
    np.testing.assert_allclose(u["w"], -0.1 * 0.5 * p["w"])
    np.testing.assert_array_equal(u["b"], 0.0)


# ----------------------------------------------------------------------------- wrappers


def test_multi_steps_equals_one_step_on_the_mean():
    p = _params()
    gs = [_grads(s) for s in range(6)]
    inner = fo.adam(0.1)
    acc = fo.multi_steps(fo.adam(0.1), every_k_schedule=3)
    state = acc.init(p)
    ours = p
    for i, g in enumerate(gs):
        u, state = acc.update(g, state, ours)
        if i % 3 < 2:
            assert all(np.all(x == 0) for x in fnad.tree_leaves(u))
            assert int(state.mini_step) == i % 3 + 1
        ours = fo.apply_updates(ours, u)
    assert int(state.gradient_step) == 2 and int(state.mini_step) == 0
    means = [fnad.tree_map(lambda *xs: sum(xs) / 3, *gs[k:k + 3]) for k in (0, 3)]
    want, _ = _run(inner, p, means)
    _close(ours, want, rtol=1e-13)


def test_multi_steps_sum_and_schedule():
    p = {"x": np.zeros(1)}
    g = {"x": np.ones(1)}
    opt = fo.multi_steps(fo.sgd(1.0), every_k_schedule=lambda step: 1 if step < 1 else 2,
                         use_grad_mean=False)
    state = opt.init(p)
    seen = []
    for _ in range(5):
        u, state = opt.update(g, state, p)
        seen.append(float(u["x"][0]))
    assert seen == [-1.0, 0.0, -2.0, 0.0, -2.0]
    with pytest.raises(ValueError, match="multi_steps"):
        fo.multi_steps(fo.sgd(1.0), every_k_schedule=0)


def test_apply_if_finite_skips_and_counts():
    p = {"x": np.array([1.0, 2.0])}
    good, bad = {"x": np.array([0.5, 0.5])}, {"x": np.array([np.inf, 0.5])}
    opt = fo.apply_if_finite(fo.adam(0.1))
    state = opt.init(p)
    u, state = opt.update(good, state, p)
    inner_before = state.inner_state
    for k in range(1, 3):
        u, state = opt.update(bad, state, p)
        np.testing.assert_array_equal(u["x"], 0.0)
        assert int(state.notfinite_count) == k and int(state.total_notfinite) == k
        assert not bool(state.last_finite)
        assert state.inner_state is inner_before
    u, state = opt.update(good, state, p)
    assert int(state.notfinite_count) == 0 and int(state.total_notfinite) == 2
    assert int(state.inner_state[0].count) == 2 and np.all(np.isfinite(u["x"]))
    nan = {"x": np.array([np.nan, 0.0])}
    assert not fo.all_finite(nan) and fo.all_finite(good)


def test_apply_if_finite_gives_up_after_max_consecutive_errors():
    p = {"x": np.array([1.0])}
    opt = fo.apply_if_finite(fo.sgd(0.1), max_consecutive_errors=1)
    state = opt.init(p)
    u, state = opt.update({"x": np.array([np.nan])}, state, p)
    assert u["x"][0] == 0.0
    u, state = opt.update({"x": np.array([np.nan])}, state, p)
    assert np.isnan(u["x"][0])


# ----------------------------------------------------------------------------- dtypes


OPTIMIZERS = {
    "sgd": lambda lr: fo.sgd(lr, momentum=0.9, nesterov=True, weight_decay=1e-2),
    "adam": lambda lr: fo.adam(lr),
    "adamw": lambda lr: fo.adamw(lr, weight_decay=1e-2),
    "rmsprop": lambda lr: fo.rmsprop(lr, centered=True, momentum=0.9),
    "adagrad": lambda lr: fo.adagrad(lr),
    "lion": lambda lr: fo.lion(lr),
    "lamb": lambda lr: fo.lamb(lr, weight_decay=1e-2),
    "clipped_guarded": lambda lr: fo.apply_if_finite(fo.chain(
        fo.zero_nans(), fo.clip(1.0), fo.clip_by_global_norm(1.0), fo.adam(lr))),
    "multi_steps": lambda lr: fo.multi_steps(fo.adamw(lr), every_k_schedule=2),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_float32_params_stay_float32(name, dtype):
    lr = fo.warmup_cosine_decay_schedule(0.0, 1e-2, 2, 10)
    opt = OPTIMIZERS[name](lr)
    params = _params(dtype)
    state = opt.init(params)
    for s in range(3):
        updates, state = opt.update(_grads(s, dtype), state, params)
        for u, p in zip(fnad.tree_leaves(updates), fnad.tree_leaves(params)):
            assert u.dtype == dtype, (name, u.dtype)
        params = fo.apply_updates(params, updates)
    for leaf in fnad.tree_leaves(params):
        assert leaf.dtype == dtype
    for leaf in fnad.tree_leaves(state):
        assert isinstance(leaf, np.ndarray), type(leaf)  # no Python scalars: checkpointable
        assert leaf.dtype in (dtype, np.int32, np.bool_), leaf.dtype


# ----------------------------------------------------------------- schedules as hyperparameters


SCHEDULABLE = [
    (fo.sgd, dict(learning_rate=0.1, momentum=0.9, weight_decay=0.01)),
    (fo.adam, dict(learning_rate=0.1, b1=0.8, b2=0.99, eps=1e-3)),
    (fo.adamw, dict(learning_rate=0.1, b1=0.8, b2=0.99, eps=1e-3, weight_decay=0.1)),
    (fo.rmsprop, dict(learning_rate=0.1, decay=0.8, eps=1e-3, momentum=0.5)),
    (fo.rmsprop, dict(learning_rate=0.1, decay=0.8, eps=1e-3, centered=True)),
    (fo.adagrad, dict(learning_rate=0.1, eps=1e-3)),
    (fo.lion, dict(learning_rate=0.1, b1=0.8, b2=0.95, weight_decay=0.1)),
    (fo.lamb, dict(learning_rate=0.1, b1=0.8, b2=0.95, eps=1e-3, weight_decay=0.1)),
    (fo.clip, dict(max_delta=0.5)),
    (fo.clip_by_global_norm, dict(max_norm=0.5)),
    (fo.scale, dict(step_size=0.5)),
]


@pytest.mark.parametrize("make, kwargs", SCHEDULABLE,
                         ids=[f"{m.__name__}-{i}" for i, (m, _) in enumerate(SCHEDULABLE)])
def test_every_float_hyperparameter_takes_a_schedule(make, kwargs):
    params = _params()
    gs = [_grads(s) for s in range(3)]
    want, _ = _run(make(**kwargs), params, gs)
    for key, value in kwargs.items():
        if isinstance(value, float):
            got, _ = _run(make(**{**kwargs, key: fo.constant_schedule(value)}), params, gs)
            _close(got, want, rtol=1e-15, err_msg=f"{make.__name__}({key}=schedule)")


def test_scheduled_beta_changes_over_time():
    g = {"x": np.array([1.0])}
    opt = fo.trace(lambda count: 0.0 if count < 2 else 0.5)
    state = opt.init(g)
    out = []
    for _ in range(4):
        u, state = opt.update(g, state)
        out.append(float(u["x"][0]))
    assert out == [1.0, 1.0, 1.5, 1.75]


# ----------------------------------------------------------------------------- traced updates


def test_gradient_with_respect_to_learning_rate():
    p = {"x": np.array([1.0, -2.0])}
    g = {"x": np.array([0.5, 0.25])}

    def loss_after_step(lr, make):
        opt = make(lr)
        u, _ = opt.update(g, opt.init(p), p)
        new = fo.apply_updates(p, u)
        return fnp.sum(new["x"] ** 2)

    sgd = lambda lr: fo.sgd(lr)
    lr = np.asarray(0.1)
    d = fnad.grad(loss_after_step)(lr, sgd)
    np.testing.assert_allclose(d, -2 * np.sum((p["x"] - 0.1 * g["x"]) * g["x"]), rtol=1e-14)
    for make in (lambda lr: fo.adam(lr), lambda lr: fo.adamw(lr, weight_decay=0.1),
                 lambda lr: fo.chain(fo.clip_by_global_norm(0.1), fo.sgd(lr, momentum=0.9))):
        d = fnad.grad(loss_after_step)(lr, make)
        h = 1e-5
        fd = (loss_after_step(0.1 + h, make) - loss_after_step(0.1 - h, make)) / (2 * h)
        np.testing.assert_allclose(d, fd, rtol=1e-6, atol=1e-9)


def test_gradient_through_adam_update_with_respect_to_grads():
    p = {"x": np.array([1.0, -2.0])}

    def f(gx):
        opt = fo.chain(fo.clip_by_global_norm(1.0), fo.adam(0.1, eps=0.1))
        u, _ = opt.update({"x": gx}, opt.init(p), p)
        return fnp.sum(u["x"] * np.array([1.0, 3.0]))

    gx = np.array([0.3, -0.4])
    d = fnad.grad(f)(gx)
    h = 1e-6
    fd = [(f(gx + h * e) - f(gx - h * e)) / (2 * h) for e in np.eye(2)]
    np.testing.assert_allclose(d, fd, rtol=1e-6)
