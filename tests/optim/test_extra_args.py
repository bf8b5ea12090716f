"""Extra-args transforms (the line searches, L-BFGS): chain passes the extra keyword
arguments on, the errors say what to pass, ZeRO sharding refuses them, dtypes are kept."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad_optim as fo


def _quadratic(p):
    return fnp.sum((p["a"] - 1.0) ** 2) + 2.0 * fnp.sum(p["b"] ** 2)


def _params(dtype=np.float64):
    return {"a": np.array([3.0, -2.0], dtype), "b": np.array([[0.5, 1.5]], dtype)}


def test_chain_passes_extra_args_only_to_extra_args_transforms():
    seen = []

    def update(updates, state, params=None, **extra):
        seen.append(extra)
        return updates, state

    probe = fo.GradientTransformationExtraArgs(lambda p: fo.EmptyState(), update)
    plain_with_kwargs = fo.GradientTransformation(lambda p: fo.EmptyState(), update)
    tx = fo.chain(fo.scale(0.5), probe, fo.with_extra_args_support(fo.scale(2.0)),
                  plain_with_kwargs)
    assert isinstance(tx, fo.GradientTransformationExtraArgs)
    g = {"a": np.ones(2)}
    u, _ = tx.update(g, tx.init(g), g, value=1.0, data=3)
    assert seen == [{"value": 1.0, "data": 3}] * 2
    np.testing.assert_allclose(u["a"], np.ones(2))
    assert fo.with_extra_args_support(probe) is probe


@pytest.mark.parametrize("make, tol64", [
    (lambda: fo.lbfgs(), 1e-10),
    (lambda: fo.lbfgs(linesearch=fo.scale_by_backtracking_linesearch(10, store_grad=True)),
     1e-10),
    (lambda: fo.chain(fo.sgd(0.1), fo.scale_by_zoom_linesearch(10)), 0.02),  # as optax's
], ids=["lbfgs_zoom", "lbfgs_backtracking", "sgd_zoom"])
def test_minimises_a_quadratic_in_float32_and_float64(make, tol64):
    for dtype, tol in ((np.float64, tol64), (np.float32, max(tol64, 1e-4))):
        opt, params = make(), _params(dtype)
        state, value_and_grad = opt.init(params), fo.value_and_grad_from_state(_quadratic)
        for _ in range(15):
            v, g = value_and_grad(params, state=state)
            if float(v) < tol:  # past convergence float32 curvature pairs underflow
                break
            u, state = opt.update(g, state, params, value=v, grad=g, value_fn=_quadratic)
            params = fo.apply_updates(params, u)
        assert all(x.dtype == dtype for x in fnad.tree_leaves(params))
        assert float(_quadratic(params)) < tol


def test_line_search_errors_say_what_to_pass():
    opt, params = fo.lbfgs(), _params()
    state = opt.init(params)
    g = fnad.grad(_quadratic)(params)
    with pytest.raises(TypeError, match=r"missing the keyword arguments \['value', 'value_fn'\]"):
        opt.update(g, state, params, grad=g)
    with pytest.raises(TypeError, match=r"\['lr'\] that value_fn does not take"):
        opt.update(g, state, params, value=1.0, grad=g, value_fn=_quadratic, lr=0.1)
    with pytest.raises(ValueError, match="needs the params"):
        opt.update(g, state, value=1.0, grad=g, value_fn=_quadratic)
    with pytest.raises(ValueError, match="exactly one value and one grad"):
        fo.value_and_grad_from_state(_quadratic)(params, state=fo.adam(0.1).init(params))
    with pytest.raises(ValueError, match="initial_guess_strategy"):
        fo.scale_by_zoom_linesearch(10, initial_guess_strategy="two")


@pytest.mark.parametrize("make", [fo.lbfgs, fo.scale_by_lbfgs,
                                  lambda: fo.scale_by_backtracking_linesearch(5)])
def test_zero_sharding_refuses_whole_tree_transforms(make):
    """Refused in init or the first update (L-BFGS's stacked memory already fails the
    per-parameter check of the state's leaves in init)."""
    params = _params()
    for opt in (fo.shard_optimizer_state(make()),
                fo.data_parallel(fo.chain(fo.clip(1.0), make()), shard_state=True)):
        with pytest.raises(ValueError, match="shard_optimizer_state: .*(may not run on one "
                                             "process's rows|cannot be split by rows)"):
            opt.update(params, opt.init(params), params)


def test_data_parallel_passes_extra_args_in_one_process():
    opt, params = fo.data_parallel(fo.lbfgs()), _params()
    state = opt.init(params)
    v, g = fnad.value_and_grad(_quadratic)(params)
    u, state = opt.update(g, state, params, value=v, grad=g, value_fn=_quadratic)
    ref = fo.lbfgs()
    u_ref, _ = ref.update(g, ref.init(params), params, value=v, grad=g, value_fn=_quadratic)
    for x, y in zip(fnad.tree_leaves(u), fnad.tree_leaves(u_ref)):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("make", [
    lambda: fo.lbfgs(linesearch=fo.scale_by_backtracking_linesearch(10, store_grad=True)),
    lambda: fo.chain(fo.sgd(0.1), fo.scale_by_backtracking_linesearch(10)),
    lambda: fo.chain(fo.sgd(0.1), fo.scale_by_zoom_linesearch(10)),
], ids=["lbfgs_backtracking", "sgd_backtracking", "sgd_zoom"])
def test_a_staged_step_equals_the_eager_one(make):
    opt = make()
    value_and_grad = fnad.value_and_grad(_quadratic)

    def step(params, state):
        v, g = value_and_grad(params)
        u, state = opt.update(g, state, params, value=v, grad=g, value_fn=_quadratic)
        return fo.apply_updates(params, u), state

    jitted = fnad.jit(step)
    p_eager = p_jit = _params()
    s_eager = s_jit = opt.init(p_eager)
    for _ in range(4):
        p_eager, s_eager = step(p_eager, s_eager)
        p_jit, s_jit = jitted(p_jit, s_jit)
        for x, y in zip(fnad.tree_leaves((p_jit, s_jit)), fnad.tree_leaves((p_eager, s_eager))):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14)


CHECKPOINTED = {
    "lbfgs": fo.lbfgs,
    "backtracking": lambda: fo.chain(fo.sgd(0.1), fo.scale_by_backtracking_linesearch(5)),
    "lookahead": lambda: fo.lookahead(fo.adam(0.1), 2, 0.5),
    "schedule_free": fo.contrib.schedule_free_adamw,
    "prodigy": fo.contrib.prodigy,
    "muon": lambda: fo.contrib.muon(0.1),
}


@pytest.mark.parametrize("name", list(CHECKPOINTED))
def test_states_round_trip_through_a_checkpoint(name, tmp_path):
    opt, params = CHECKPOINTED[name](), {"a": np.arange(3.0), "m": np.ones((2, 3))}
    if name == "lookahead":
        params = fo.LookaheadParams.init_synced(params)
    state = opt.init(params)
    fnad.save(tmp_path / "ck.npz", {"opt_state": state})
    back = fnad.load(tmp_path / "ck.npz", like={"opt_state": state})["opt_state"]
    assert fnad.tree_structure(back) == fnad.tree_structure(state)
    for x, y in zip(fnad.tree_leaves(back), fnad.tree_leaves(state)):
        np.testing.assert_array_equal(x, y)


def test_muon_without_matrices_is_adamw():
    params, g = {"b": np.arange(3.0)}, {"b": np.ones(3)}
    opt, ref = fo.contrib.muon(0.1), fo.adamw(0.1, eps=1e-8, weight_decay=0.0, nesterov=True)
    u, _ = opt.update(g, opt.init(params), params)
    u_ref, _ = ref.update(g, ref.init(params), params)
    np.testing.assert_allclose(u["b"], u_ref["b"], rtol=1e-15)


def test_a_refused_transform_behind_a_wrapper_is_refused_when_it_runs():
    """masked does not keep the declaration: the search itself refuses to run on rows."""
    search = fo.scale_by_backtracking_linesearch(5)
    opt = fo.shard_optimizer_state(fo.masked(search, {"a": True, "b": True}))
    params = _params()
    with pytest.raises(ValueError, match="evaluates the objective at whole trial params"):
        opt.update(params, opt.init(params), params)


@pytest.mark.parametrize("search", [lambda: fo.scale_by_backtracking_linesearch(3, verbose=True),
                                    lambda: fo.scale_by_zoom_linesearch(3, verbose=True)],
                         ids=["backtracking", "zoom"])
def test_verbose_search_says_why_it_failed(search, capsys):
    opt, params = fo.chain(fo.scale(+1.0), search()), _params()  # an ascent direction
    v, g = fnad.value_and_grad(_quadratic)(params)
    opt.update(g, opt.init(params), params, value=v, grad=g, value_fn=_quadratic)
    out = capsys.readouterr().out
    assert "no step size met the criteria" in out and "not a descent direction" in out
