"""Bad input: structure mismatches name both structures; bad hyperparameters raise early."""

import numpy as np
import pytest

import fnad
import fnad_optim as fo

PARAMS = {"w": np.ones((2, 2)), "b": np.zeros(2)}
OTHER = {"w": np.ones((2, 2)), "bias": np.zeros(2)}


def test_apply_updates_structure_mismatch_names_both():
    with pytest.raises(ValueError) as e:
        fo.apply_updates(PARAMS, OTHER)
    msg = str(e.value)
    assert "apply_updates" in msg
    assert "{'b': *, 'w': *}" in msg and "{'bias': *, 'w': *}" in msg


@pytest.mark.parametrize("make", [lambda: fo.adam(0.1), lambda: fo.sgd(0.1, momentum=0.9),
                                  lambda: fo.rmsprop(0.1), lambda: fo.adagrad(0.1),
                                  lambda: fo.lion(0.1), lambda: fo.multi_steps(fo.sgd(0.1), 2)])
def test_state_from_other_params_names_both(make):
    opt = make()
    state = opt.init(PARAMS)
    with pytest.raises(ValueError) as e:
        opt.update(OTHER, state, OTHER)
    msg = str(e.value)
    assert "'bias'" in msg and "'b'" in msg and "init" in msg


def test_params_mismatching_updates_names_both():
    opt = fo.adamw(0.1, weight_decay=0.1)
    state = opt.init(PARAMS)
    with pytest.raises(ValueError, match="add_decayed_weights: updates and params") as e:
        opt.update(PARAMS, state, [np.ones((2, 2)), np.zeros(2)])
    assert "[*, *]" in str(e.value)


def test_mask_mismatch_names_both():
    opt = fo.add_decayed_weights(0.1, mask={"w": True})
    with pytest.raises(ValueError, match="masked: params and mask"):
        opt.init(PARAMS)


def test_transform_that_needs_params():
    opt = fo.adamw(0.1)
    with pytest.raises(ValueError, match="needs the params"):
        opt.update(PARAMS, opt.init(PARAMS))


@pytest.mark.parametrize("make", [
    lambda: fo.sgd(-0.1), lambda: fo.adam(-1e-3), lambda: fo.adamw(-1e-3),
    lambda: fo.rmsprop(-1e-3), lambda: fo.adagrad(-1e-3), lambda: fo.lion(-1e-3),
    lambda: fo.lamb(-1e-3), lambda: fo.scale_by_learning_rate(-1.0),
], ids=["sgd", "adam", "adamw", "rmsprop", "adagrad", "lion", "lamb", "scale_by_lr"])
def test_negative_learning_rate_raises(make):
    with pytest.raises(ValueError, match="learning_rate must be >= 0"):
        make()


@pytest.mark.parametrize("make, name", [
    (lambda: fo.adam(0.1, b1=1.0), "adam: b1"), (lambda: fo.adam(0.1, b2=-0.1), "adam: b2"),
    (lambda: fo.adamw(0.1, b1=1.5), "adamw: b1"), (lambda: fo.lamb(0.1, b2=1.0), "lamb: b2"),
    (lambda: fo.lion(0.1, b1=-0.5), "lion: b1"), (lambda: fo.lion(0.1, b2=1.0), "lion: b2"),
    (lambda: fo.sgd(0.1, momentum=1.0), "sgd: momentum"),
    (lambda: fo.rmsprop(0.1, decay=1.0), "rmsprop: decay"),
    (lambda: fo.rmsprop(0.1, momentum=2.0), "rmsprop: momentum"),
    (lambda: fo.scale_by_adam(b1=float("nan")), "scale_by_adam: b1"),
    (lambda: fo.trace(1.0), "trace: decay"),
])
def test_beta_outside_unit_interval_raises(make, name):
    with pytest.raises(ValueError, match=rf"{name} must be in \[0, 1\)"):
        make()


def test_other_bad_arguments():
    with pytest.raises(ValueError, match="adamw: weight_decay"):
        fo.adamw(0.1, weight_decay=-1.0)
    with pytest.raises(ValueError, match="sgd: nesterov=True needs a momentum"):
        fo.sgd(0.1, nesterov=True)
    with pytest.raises(ValueError, match="clip_by_global_norm: max_norm"):
        fo.clip_by_global_norm(-1.0)
    with pytest.raises(TypeError, match="chain: argument 1"):
        fo.chain(fo.scale(1.0), 0.5)
    with pytest.raises(TypeError, match="scale_by_schedule"):
        fo.scale_by_schedule(0.1)


def test_chain_state_from_another_chain():
    opt = fo.chain(fo.scale(1.0), fo.scale(2.0))
    with pytest.raises(ValueError, match="chain: expected a state tuple of 2"):
        opt.update(PARAMS, (fo.EmptyState(),))


def test_apply_updates_shape_mismatch_names_leaf_and_shapes():
    """A (2, 3) update for a (3,) param used to broadcast the param to (2, 3) silently."""
    params = {"layer": {"w": np.ones((3, 3)), "b": np.zeros(3)}}
    updates = {"layer": {"w": np.ones((3, 3)), "b": np.ones((2, 3))}}
    with pytest.raises(ValueError, match=r"apply_updates: the update at \['layer'\]\['b'\] is "
                                         r"float64\(2, 3\) but its param is float64\(3,\)"):
        fo.apply_updates(params, updates)
    with pytest.raises(ValueError, match=r"at \[1\] is float64\(\) but its param is float64\(2,"):
        fo.apply_updates([np.ones(1), np.ones(2)], [np.ones(1), np.float64(0.5)])
    opt = fo.sgd(0.1, momentum=0.9)  # through a whole optimizer step
    grads = {"layer": {"w": np.ones((3, 3)), "b": np.ones((2, 3))}}
    u, _ = opt.update(grads, opt.init(params), params)
    with pytest.raises(ValueError, match=r"\['layer'\]\['b'\]"):
        fo.apply_updates(params, u)


def test_apply_updates_float_into_int_param_raises():
    """A float update to an integer param used to be truncated silently (0.7 -> 0)."""
    params = fo.ScaleByAdamState(np.int32(1), {"w": np.zeros(2)}, [np.arange(3)])
    updates = fo.ScaleByAdamState(np.int32(1), {"w": np.ones(2)}, [np.full(3, 0.7)])
    with pytest.raises(TypeError, match=r"the update at \.nu\[0\] is float64\(3,\) but its "
                                        r"param is int64\(3,\).*truncate"):
        fo.apply_updates(params, updates)
    with pytest.raises(TypeError, match=r"complex128\(2,\) but its param is float64\(2,\)"):
        fo.apply_updates({"w": np.zeros(2)}, {"w": np.ones(2) * 1j})
    out = fo.apply_updates(params, fo.ScaleByAdamState(np.int32(2), {"w": np.ones(2)},
                                                        [np.ones(3, np.int64)]))
    assert out.count == 3 and out.nu[0].dtype == np.int64  # int + int is fine
    f32 = fo.apply_updates({"w": np.zeros(2, np.float32)}, {"w": np.ones(2)})  # float64 -> 32
    assert f32["w"].dtype == np.float32


# ----------------------------------------------------------------------------- init, load

BAD = {"layer": {"w": np.ones((2, 2)), "name": "dense"}, "b": np.zeros(2)}
NAMED = {
    "sgd": lambda: fo.sgd(0.1), "adam": lambda: fo.adam(0.1), "adamw": lambda: fo.adamw(0.1),
    "rmsprop": lambda: fo.rmsprop(0.1), "adagrad": lambda: fo.adagrad(0.1),
    "lion": lambda: fo.lion(0.1), "lamb": lambda: fo.lamb(0.1),
    "chain": lambda: fo.chain(fo.clip_by_global_norm(1.0), fo.adam(0.1)),
    "scale": lambda: fo.scale(0.5), "identity": fo.identity,
    "trace": lambda: fo.trace(0.9), "scale_by_adam": fo.scale_by_adam,
    "scale_by_rms": fo.scale_by_rms, "scale_by_stddev": fo.scale_by_stddev,
    "scale_by_adagrad": fo.scale_by_adagrad, "scale_by_lion": fo.scale_by_lion,
    "zero_nans": fo.zero_nans, "masked": lambda: fo.masked(fo.sgd(0.1), lambda p: fnad.tree_map(
        lambda x: True, p)),
    "multi_steps": lambda: fo.multi_steps(fo.adam(0.1), 2),
    "apply_if_finite": lambda: fo.apply_if_finite(fo.adam(0.1)),
}


@pytest.mark.parametrize("name", list(NAMED))
def test_init_refuses_a_string_leaf_naming_its_path(name):
    """A string leaf used to pass init and fail in update with "can't multiply sequence"."""
    with pytest.raises(TypeError, match=rf"^{name}: init got a params leaf at "
                                        r"params\['layer'\]\['name'\] that is a str \('dense'\);"
                                        r".*out of the params pytree"):
        NAMED[name]().init(BAD)


def test_init_refuses_non_numeric_arrays_and_accepts_numbers():
    with pytest.raises(TypeError, match=r"params\[1\] that is an array of dtype <U3"):
        fo.adam(0.1).init([np.ones(2), np.array(["abc"])])
    with pytest.raises(TypeError, match=r"params\.nu that is an array of dtype object"):
        fo.sgd(0.1).init(fo.ScaleByAdamState(np.int32(0), np.ones(2), np.array([None])))
    state = fo.sgd(0.1, momentum=0.9).init({"w": np.ones(2), "n": 3, "s": 0.5, "flag": True,
                                            "empty": None})
    assert fnad.tree_structure(state[0].trace) == fnad.tree_structure(
        {"w": 0, "n": 0, "s": 0, "flag": 0, "empty": None})


STATEFUL = ["sgd_momentum", "adam", "adamw", "rmsprop", "adagrad", "lion", "lamb", "schedule",
            "multi_steps", "apply_if_finite", "masked", "zero_nans"]


def _stateful(name):
    return {"sgd_momentum": lambda: fo.sgd(0.1, momentum=0.9), "adam": lambda: fo.adam(0.1),
            "adamw": lambda: fo.adamw(0.1), "rmsprop": lambda: fo.rmsprop(0.1),
            "adagrad": lambda: fo.adagrad(0.1), "lion": lambda: fo.lion(0.1),
            "lamb": lambda: fo.lamb(0.1),
            "schedule": lambda: fo.sgd(fo.linear_schedule(0.1, 0.0, 10)),
            "multi_steps": lambda: fo.multi_steps(fo.sgd(0.1), 2),
            "apply_if_finite": lambda: fo.apply_if_finite(fo.sgd(0.1)),
            "masked": lambda: fo.masked(fo.adam(0.1), {"w": True, "b": False}),
            "zero_nans": fo.zero_nans}[name]()


@pytest.mark.parametrize("name", STATEFUL)
def test_state_loaded_without_like_says_to_load_with_like(name, tmp_path):
    """It used to fail with "'tuple' object has no attribute 'mu'"."""
    opt = _stateful(name)
    fnad.save(tmp_path / "s.npz", opt.init(PARAMS))
    raw = fnad.load(tmp_path / "s.npz")
    with pytest.raises(TypeError, match=r"the optimizer state is a plain tuple, not a \w+State; "
                                        r".*fnad\.load\(path, like=state\)"):
        opt.update(PARAMS, raw, PARAMS)
    loaded = fnad.load(tmp_path / "s.npz", like=opt.init(PARAMS))
    opt.update(PARAMS, loaded, PARAMS)  # with like= the same state works


def test_stateless_optimizer_state_loaded_without_like_still_works(tmp_path):
    opt = fo.chain(fo.clip_by_global_norm(1.0), fo.sgd(0.1))  # states: empty tuples
    fnad.save(tmp_path / "s.npz", opt.init(PARAMS))
    updates, _ = opt.update(PARAMS, fnad.load(tmp_path / "s.npz"), PARAMS)
    np.testing.assert_allclose(updates["w"], -0.1 * PARAMS["w"] / 2)  # global norm 2
