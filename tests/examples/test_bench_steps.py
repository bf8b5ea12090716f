"""benchmarks/steps.py: its hand-written NumPy baselines compute the same gradients and
updates as fnad (float64, small sizes), and a --quick smoke run works."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

import fnad

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
NAMES = ["mlp", "gpt", "rnn"]


@pytest.fixture
def steps(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    yield importlib.import_module("steps")
    for name in ["steps", "_hand", "_timing"]:
        sys.modules.pop(name, None)


def workload(steps, name):
    return steps.WORKLOADS[name](steps.QUICK[name], np.random.default_rng(1), dtype=np.float64)


def max_diff(a, b):
    la, lb = fnad.tree_leaves(a), fnad.tree_leaves(b)
    assert len(la) == len(lb)
    return max(float(np.max(np.abs(np.asarray(x) - np.asarray(y)))) for x, y in zip(la, lb))


@pytest.mark.parametrize("name", NAMES)
def test_hand_gradients_match_fnad(steps, name):
    w = workload(steps, name)
    params, _, *batch = w["args"]
    loss, grads = fnad.value_and_grad(w["loss"])(params, *batch)
    hand_loss, hand_grads = w["hand_grads"](params, *batch)
    assert fnad.tree_structure(hand_grads) == fnad.tree_structure(grads)
    assert abs(float(loss) - hand_loss) < 1e-12
    assert max_diff(grads, hand_grads) < 1e-12


@pytest.mark.parametrize("name", NAMES)
def test_hand_steps_match_fnad_steps(steps, name):
    """Three optimizer steps of the pure fnad step and of the in-place hand step agree."""
    w = workload(steps, name)
    hand = w["hand"]()
    params, state, *batch = w["args"]
    for _ in range(3):
        params, state, loss = w["step"](params, state, *batch)
        assert abs(float(loss) - hand()) < 1e-12
    assert max_diff(params, hand.params) < 1e-12


def test_quick_run_prints_the_table(steps, capsys):
    rows = steps.main(["--quick", "--no-jit", "--markdown"])
    out = capsys.readouterr().out
    assert [r["name"] for r in rows] == NAMES
    assert out.count("| MLP ") == out.count("| GPT ") == out.count("| tanh RNN ") == 1
    for r in rows:
        assert set(r["med"]) == {"numpy", "fnad", "torch"} and r["compile_s"] is None
        assert "n/a" in out


@pytest.mark.skipif(not hasattr(fnad, "jit"), reason="fnad.jit is not there yet")
def test_quick_run_with_jit(steps):
    (row,) = steps.main(["--quick", "--only", "mlp", "--no-torch"])
    assert row["note"] is None and "jit" in row["med"] and row["compile_s"] > 0
