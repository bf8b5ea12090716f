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


# ----------------------------------------------------------------------------- wrappers


def _wrapped(m, kind):
    """`kind` around a Polyak step (it reads `value=`), built from module `m` (fo or optax)."""
    polyak = m.chain(m.scale_by_polyak(max_learning_rate=0.5), m.scale(-1.0))
    flags = {"w": True, "b": False, "k": True}
    return {
        "masked": lambda: m.masked(polyak, flags),
        "apply_if_finite": lambda: m.apply_if_finite(polyak, 3),
        "partition": lambda: m.partition({"p": polyak, "s": m.sgd(0.1)},
                                         {"w": "p", "b": "s", "k": "p"}),
        "named_chain": lambda: m.named_chain(("clip", m.clip(1.0)), ("polyak", polyak)),
        "conditionally_mask": lambda: m.conditionally_mask(polyak, lambda step: step % 2 == 0),
        "conditionally_transform": lambda: m.conditionally_transform(
            polyak, lambda step: step % 3 != 0),
        "MultiSteps": lambda: m.MultiSteps(polyak, 2, accumulator_dtype=np.float64)
        .gradient_transformation(),
        "inject_hyperparams": lambda: m.inject_hyperparams(m.polyak_sgd)(
            max_learning_rate=0.5),
        "polyak_sgd": lambda: m.polyak_sgd(max_learning_rate=0.5, scaling=0.7),
    }[kind]()


WRAPPERS = ["masked", "apply_if_finite", "partition", "named_chain", "conditionally_mask",
            "conditionally_transform", "MultiSteps", "inject_hyperparams", "polyak_sgd"]


@pytest.mark.parametrize("kind", [  # these two compile optax's lax.cond per step (seconds)
    pytest.param(k, marks=pytest.mark.slow) if k in ("MultiSteps", "conditionally_transform")
    else k for k in WRAPPERS])
def test_wrappers_pass_extra_args_on_as_optax(kind):
    """A wrapper around a transform reading `value=` matches optax's for 50 float64 steps
    (and is a GradientTransformationExtraArgs where optax's is)."""
    optax = pytest.importorskip("optax")
    import jax

    from tests.optim.optax_steps import run_parity

    def extra(params, grads):
        return {"value": sum(float(np.sum(p * p)) for p in params.values())}

    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)  # before optax reads dtypes
    try:
        ours, theirs = _wrapped(fo, kind), _wrapped(optax, kind)
        assert (isinstance(ours, fo.GradientTransformationExtraArgs)
                == isinstance(theirs, optax.GradientTransformationExtraArgs))
        run_parity(ours, theirs, extra=extra)
    finally:
        jax.config.update("jax_enable_x64", old)


def test_multi_steps_and_lookahead_pass_value_fn_to_lbfgs():
    opt = fo.multi_steps(fo.lbfgs(), every_k_schedule=1)
    assert isinstance(opt, fo.GradientTransformationExtraArgs)
    params = _params()
    state = opt.init(params)
    for _ in range(10):
        v, g = fnad.value_and_grad(_quadratic)(params)
        u, state = opt.update(g, state, params, value=v, grad=g, value_fn=_quadratic)
        params = fo.apply_updates(params, u)
    assert float(_quadratic(params)) < 1e-10
    la = fo.lookahead(fo.lbfgs(), 2, 0.5)
    lp = fo.LookaheadParams.init_synced(_params())
    state = la.init(lp)
    v, g = fnad.value_and_grad(_quadratic)(lp.fast)
    u, state = la.update(g, state, lp, value=v, grad=g, value_fn=_quadratic)
    assert float(_quadratic(fo.apply_updates(lp, u).fast)) < float(v)


def test_masked_passes_mask_compatible_extra_args():
    seen = []

    def update(updates, state, params=None, **extra):
        seen.append(extra)
        return updates, state

    probe = fo.GradientTransformationExtraArgs(lambda p: fo.EmptyState(), update)
    g = {"a": np.ones(2), "b": np.zeros(3)}
    tx = fo.masked(probe, {"a": True, "b": False}, mask_compatible_extra_args=True)
    tx.update(g, tx.init(g), g, tags={"a": 1, "b": 2}, value=3.0)
    assert seen == [{"tags": [1], "value": 3.0}]
