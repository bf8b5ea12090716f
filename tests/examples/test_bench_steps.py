"""benchmarks/steps.py: its hand-written NumPy baselines compute the same gradients and
updates as fnad (float64, small sizes), its JAX steps the same updates (float32), and --quick
smoke runs work (torch.compile's, ~20 s of compiling per workload, only with -m slow)."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

import fnad

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
NAMES = ["mlp", "gpt", "rnn"]   # the workloads with a hand NumPy step


@pytest.fixture
def steps(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    yield importlib.import_module("steps")
    for name in ["steps", "_hand", "_timing", "_jax_steps", "_rss", "_plain_gpt", "step_profile"]:
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
    rows = steps.main(["--quick", "--no-jit", "--no-compile", "--no-jax", "--markdown"])
    out = capsys.readouterr().out
    assert [r["name"] for r in rows] == ["mlp", "gpt", "plain_gpt", "rnn"]
    assert out.count("| MLP ") == out.count("| GPT d") == out.count("| tanh RNN ") == 1
    assert out.count("| GPT from plain array ops") == 1
    assert "jax.jit / NumPy (issue 12)" in out   # the reference column, jax not measured
    for r in rows:
        hand = {"numpy"} if r["name"] != "plain_gpt" else set()   # no hand step there
        assert set(r["med"]) == hand | {"fnad", "torch"} and r["first_s"] == {}
        assert "n/a" in out


@pytest.mark.skipif(not hasattr(fnad, "jit"), reason="fnad.jit is not there yet")
def test_quick_run_with_jit(steps):
    (row,) = steps.main(["--quick", "--only", "mlp", "--no-torch", "--no-jax"])
    assert row["notes"] == [] and "jit" in row["med"] and row["first_s"]["jit"] > 0
    assert "fast" in row["med"] and row["first_s"]["fast"] > 0   # fast math's column


def test_quick_run_with_jax(steps, capsys):
    pytest.importorskip("jax")
    (row,) = steps.main(["--quick", "--only", "mlp", "--no-compile"])
    out = capsys.readouterr().out
    assert row["notes"] == [] and "jax" in row["med"] and row["first_s"]["jax"] > 0
    assert "(issue 12)" not in out and "jit / jax.jit" in out
    assert abs(row["losses"]["jax"] - row["losses"]["numpy"]) < 1e-5


@pytest.mark.parametrize("name", NAMES)
def test_jax_steps_match_fnad_steps(steps, name):
    """Three float32 steps of the jitted JAX step and of the fnad step agree."""
    jax = pytest.importorskip("jax")
    w = steps.WORKLOADS[name](steps.QUICK[name], np.random.default_rng(1))
    run = w["jax"](jax)
    params, state, *batch = w["args"]
    jparams, jstate, *jbatch = run.args
    for _ in range(3):
        params, state, loss = w["step"](params, state, *batch)
        jparams, jstate, jloss = run.step(jparams, jstate, *jbatch)
        assert abs(float(loss) - float(jloss)) < 1e-5 * max(1.0, abs(float(loss)))
    jparams = jax.tree_util.tree_map(np.asarray, jparams)
    for blk in params["blocks"] + jparams["blocks"] if name == "gpt" else []:
        # softmax ignores a shift of the scores, so the key bias's gradient is rounding noise
        # that Adam normalises to steps of +-lr: compare everything else
        blk["attn"]["k"]["b"] = np.zeros(1)
    assert max_diff(params, jparams) < 1e-6


def test_quick_memory_run(steps, capsys):
    """--memory measures each implementation in a child process; fnad jit adds its plan."""
    steps.main(["--quick", "--only", "mlp", "--no-torch", "--no-jax", "--memory"])
    out = capsys.readouterr().out
    table = out[out.index("# mlp memory"):].splitlines()[1:]
    assert [r.split("  ")[0] for r in table][1:] == ["hand NumPy", "fnad eager", "fnad jit",
                                                     "fnad jit fast math"][:len(table) - 1]
    assert "n/a" not in "\n".join(table)
    if hasattr(fnad, "jit"):
        assert "(" in table[-1]   # the plan's peak (inputs)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")   # inductor imports torch.jit code
def test_quick_run_with_torch_compile(steps):
    pytest.importorskip("torch")
    (row,) = steps.main(["--quick", "--only", "mlp", "--no-jit", "--no-jax"])
    assert row["notes"] == [] and "compile" in row["med"] and row["first_s"]["compile"] > 0


def test_every_workload_has_both_sizes(steps):
    assert set(steps.FULL) == set(steps.QUICK) == set(steps.WORKLOADS)


def test_plain_gpt_is_the_same_model_in_fnad_torch_and_numpy(steps):
    """The plain-ops GPT: fnad's loss and gradients are PyTorch's (float64), its forward is
    NumPy's own, and the float32 first losses agree to float32 rounding."""
    torch = pytest.importorskip("torch")
    plain = importlib.import_module("_plain_gpt")
    w = workload(steps, "plain_gpt")
    params, _, ids, targets = w["args"]
    heads = steps.QUICK["plain_gpt"]["heads"]
    loss, grads = fnad.value_and_grad(w["loss"])(params, ids, targets)
    tp = fnad.tree_map(lambda a: torch.tensor(a, requires_grad=True), params)
    tloss = plain.torch_loss(torch, tp, torch.from_numpy(ids), torch.from_numpy(targets), heads)
    tloss.backward()
    assert abs(float(loss) - tloss.item()) < 1e-12
    assert max_diff(grads, fnad.tree_map(lambda t: t.grad.numpy(), tp)) < 1e-12
    lse = lambda x, axis, keepdims: np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))
    assert abs(float(loss) - plain.loss(np, lse, params, ids, targets, heads)) < 1e-12
    w32 = steps.WORKLOADS["plain_gpt"](steps.QUICK["plain_gpt"], np.random.default_rng(1))
    params, _, ids, targets = w32["args"]
    loss32 = float(w32["loss"](params, ids, targets))
    step = w32["torch"](torch)
    assert abs(loss32 - step().item()) < 1e-5 * max(1.0, abs(loss32))


@pytest.mark.skipif(not hasattr(fnad, "jit"), reason="fnad.jit is not there yet")
def test_plain_gpt_jitted_step_gives_the_eager_bits(steps):
    w = steps.WORKLOADS["plain_gpt"](steps.QUICK["plain_gpt"], np.random.default_rng(1))
    eager = w["step"](*w["args"])
    jitted = fnad.jit(w["step"])(*w["args"])
    for a, b in zip(fnad.tree_leaves(eager), fnad.tree_leaves(jitted)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_plain_gpt_fast_math_step_is_close_and_computes_powers_by_products(steps):
    # fast math's gradients within its bound of the exact ones, normwise; its x ** 3 (tanh
    # GELU) and the backward's x ** 2 are products in kernels, not NumPy's power (~46 ns an
    # element). (Adam's updates are compared through the gradients: it maps a tiny
    # gradient's last-bit noise to a whole step of either sign.)
    w = steps.WORKLOADS["plain_gpt"](steps.QUICK["plain_gpt"], np.random.default_rng(1))
    params, _, ids, targets = w["args"]
    grad = fnad.value_and_grad(w["loss"])
    exact = grad(params, ids, targets)
    jgrad = fnad.jit(grad, fast_math=True)
    fast = jgrad(params, ids, targets)
    for a, b in zip(fnad.tree_leaves(exact), fnad.tree_leaves(fast)):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        assert np.linalg.norm(b - a) <= 1e-4 * np.linalg.norm(a) + 1e-12
    jstep = fnad.jit(w["step"], fast_math=True)
    np.testing.assert_allclose(jstep(*w["args"])[2], w["step"](*w["args"])[2], rtol=1e-5)
    if "numba" in fnad._jit.fusion.available_backends():
        powers = [e for e in jstep.graph(*w["args"]).eqns if e.prim.name == "power"
                  and e.outvars[0].aval.ndim]   # (Adam's 0-d b1 ** count stays)
        assert powers == []


def test_step_profile_counts_the_column_sums_left(steps):
    # benchmarks/step_profile.py --notes: sums over leading axes left in the optimised
    # program, by what made their operand (a GEMM's: not fused; a kernel's: joins it)
    import fnad.numpy as fnp
    step_profile = importlib.import_module("step_profile")
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((64, 32)), rng.standard_normal((32, 48))

    def f(x, w):
        y = x @ w
        return fnp.sum(y, axis=0), fnp.sum(fnp.tanh(x) * 2.0, axis=(0,)), fnp.sum(y, axis=1)
    graph = fnad.jit(f, optimize=set()).graph(x, w)
    assert step_profile.leading_sums(graph) == {"matmul": 1, "multiply": 1}
