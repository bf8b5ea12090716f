"""Parameter groups and the small building blocks against optax (float64, 50 steps)."""

import numpy as np
import pytest

import fnad
import fnad_optim as fo
from tests.optim.optax_steps import modes, run_parity

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

LABELS = {"w": "adam", "b": "sgd", "k": "frozen"}


def _label_fn(lib):
    return lambda p: {k: ("adam" if v.ndim == 2 else "sgd" if v.ndim == 1 else "frozen")
                      for k, v in p.items()}


CASES = {
    "partition": lambda lib: lib.partition(
        {"adam": lib.adam(1e-2), "sgd": lib.sgd(0.1, momentum=0.9),
         "frozen": lib.set_to_zero()}, LABELS),
    "partition_fn": lambda lib: lib.partition(
        {"adam": lib.adam(1e-2), "sgd": lib.sgd(0.1), "frozen": lib.set_to_zero()},
        _label_fn(lib)),
    "multi_transform": lambda lib: lib.multi_transform(
        {"adam": lib.adamw(1e-2, weight_decay=0.1), "sgd": lib.sgd(0.1),
         "frozen": lib.set_to_zero()}, LABELS),
    "freeze": lambda lib: lib.chain(lib.freeze({"w": False, "b": True, "k": False}),
                                    lib.adam(1e-2)),
    "freeze_all": lambda lib: lib.chain(lib.freeze(True), lib.sgd(0.1)),
    "selective_transform": lambda lib: lib.selective_transform(
        lib.adam(1e-2), freeze_mask={"w": False, "b": True, "k": False}),
    "named_chain": lambda lib: lib.named_chain(("clip", lib.clip_by_global_norm(1.0)),
                                               ("adam", lib.adam(1e-2))),
    "stateless": lambda lib: lib.chain(lib.stateless(
        lambda u, p: {k: v + 0.1 * p[k] for k, v in u.items()}), lib.sgd(0.1)),
    "stateless_with_tree_map": lambda lib: lib.chain(lib.stateless_with_tree_map(
        lambda u, p: u - 0.01 * p), lib.sgd(0.1)),
}


# under jit in the default run (each name runs eagerly; the others under jit with -m slow)
FAST_JIT = {"partition", "named_chain"}


@pytest.mark.parametrize(("name", "jit"), modes(CASES, FAST_JIT))
def test_group_matches_optax(name, jit):
    s1, s2 = run_parity(CASES[name](fo), CASES[name](optax), jit=jit)
    if name in ("partition", "multi_transform"):
        assert type(s1).__name__ == type(s2).__name__
        assert type(s1)._fields == type(s2)._fields
        assert set(s1.inner_states) == set(s2.inner_states)


def test_named_chain_state_is_keyed_by_name():
    opt = fo.named_chain(("clip", fo.clip(1.0)), ("adam", fo.adam(1e-3)))
    state = opt.init({"x": np.zeros(2)})
    assert list(state) == ["clip", "adam"]
    assert isinstance(state["adam"][0], fo.ScaleByAdamState)


def test_group_errors_name_the_function():
    opt = fo.partition({"a": fo.sgd(0.1)}, {"x": "a", "y": "b"})
    with pytest.raises(ValueError, match=r"partition: the labels \['b'\] have no transform"):
        opt.init({"x": np.zeros(2), "y": np.zeros(2)})
    with pytest.raises(ValueError, match="named_chain: the names must be distinct"):
        fo.named_chain(("a", fo.sgd(0.1)), ("a", fo.sgd(0.1)))
    with pytest.raises(TypeError, match="partition: the transform for label"):
        fo.multi_transform({"a": "sgd"}, {"x": "a"})


def test_frozen_leaves_stay_put():
    params = {"x": np.ones(2), "y": np.ones(2)}
    opt = fo.partition({"t": fo.sgd(0.5), "f": fo.set_to_zero()}, {"x": "t", "y": "f"})
    state = opt.init(params)
    updates, _ = opt.update(fnad.tree_map(np.ones_like, params), state, params)
    np.testing.assert_array_equal(updates["y"], 0.0)
    np.testing.assert_array_equal(updates["x"], -0.5)


def test_monitoring_matches_optax():
    def build(lib):
        norm = lib.tree_utils.tree_norm
        return lib.chain(lib.snapshot("norm", norm),
                         lib.monitor({"max": lambda u: u["w"].max(),
                                      "ema": lib.measure_with_ema(norm, 0.9)}),
                         lib.sgd(0.1))

    s1, s2 = run_parity(build(fo), build(optax), steps=5)
    np.testing.assert_allclose(float(s1[0].measurement["norm"]),
                               float(s2[0].measurement["norm"]), rtol=1e-12)
    for k in ("max", "ema"):
        np.testing.assert_allclose(float(s1[1].measurements[k]),
                                   float(s2[1].measurements[k]), rtol=1e-12)
    assert type(s1[1])._fields == type(s2[1])._fields
