"""Hoisted weight GEMMs of lax.scan (fnad/lax/_hoist.py): the input projection `x_t @ W` of
every step runs as one GEMM before the loop, and a weight's gradient `sum_t a_t^T g_t` as
one GEMM after the reverse loop. Checked against float64 references (Python loops in NumPy,
finite differences, torch), eager against jit bit for bit, and by the programs staged."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad import lax
from fnad.lax import _hoist, _prims
from fnad.test_util import check_grads

RNG = np.random.default_rng(30)
T, B, D_IN, H = 7, 3, 4, 5


def params(dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return {"w": (rng.normal(size=(D_IN, H)) * 0.5).astype(dtype),
            "u": (rng.normal(size=(H, H)) * 0.4).astype(dtype),
            "b": (rng.normal(size=(H,)) * 0.1).astype(dtype)}


def inputs(dtype=np.float64, seed=1):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(T, B, D_IN)).astype(dtype), rng.normal(size=(B, H)).astype(dtype)


def rnn(p, xs, h0, reverse=False):
    def step(h, x):
        h = fnp.tanh(x @ p["w"] + h @ p["u"] + p["b"])
        return h, h
    return lax.scan(step, h0, xs, reverse=reverse)


def loss(p, xs, h0, reverse=False):
    h, hs = rnn(p, xs, h0, reverse)
    return fnp.sum(hs * hs) * 0.5 + fnp.sum(fnp.sin(h))


def rnn_numpy(p, xs, h0, reverse=False):
    """Forward and gradients by hand in float64 NumPy (backpropagation through time)."""
    order = range(T - 1, -1, -1) if reverse else range(T)
    h, hs, prev = h0, np.empty((T, B, H)), np.empty((T, B, H))
    for t in order:
        prev[t] = h
        h = np.tanh(xs[t] @ p["w"] + h @ p["u"] + p["b"])
        hs[t] = h
    val = 0.5 * np.sum(hs * hs) + np.sum(np.sin(h))
    g = {k: np.zeros_like(v) for k, v in p.items()}
    gxs, gh = np.zeros_like(xs), np.cos(h)
    for t in reversed(list(order)):
        gz = (gh + hs[t]) * (1 - hs[t] ** 2)
        g["w"] += xs[t].T @ gz
        g["u"] += prev[t].T @ gz
        g["b"] += gz.sum(0)
        gxs[t] = gz @ p["w"].T
        gh = gz @ p["u"].T
    return val, g, gxs, gh


def assert_same_bits(a, b):
    for x, y in zip(fnad.tree_leaves(a), fnad.tree_leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x.reshape(-1).view(np.uint8), y.reshape(-1).view(np.uint8))


@pytest.mark.parametrize("reverse", [False, True])
def test_rnn_value_and_grads_match_float64_backprop(reverse):
    p = params()
    xs, h0 = inputs()
    val, (gp, gxs, gh0) = fnad.value_and_grad(loss, (0, 1, 2))(p, xs, h0, reverse)
    r_val, r_g, r_gxs, r_gh = rnn_numpy(p, xs, h0, reverse)
    np.testing.assert_allclose(val, r_val, rtol=1e-13)
    for k in p:
        np.testing.assert_allclose(gp[k], r_g[k], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(gxs, r_gxs, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(gh0, r_gh, rtol=1e-12, atol=1e-13)


def test_rnn_grads_by_finite_differences_to_second_order():
    p = params()
    xs, h0 = inputs()
    small = xs[:3]
    check_grads(lambda w, u, x, h: loss({"w": w, "u": u, "b": p["b"]}, x, h),
                (p["w"], p["u"], small, h0), order=2)


def test_rnn_grads_match_torch():
    torch = pytest.importorskip("torch")
    p = params()
    xs, h0 = inputs()
    gp = fnad.grad(loss)(p, xs, h0)
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}
    h = torch.tensor(h0)
    hs = []
    for t in range(T):
        h = torch.tanh(torch.tensor(xs[t]) @ tp["w"] + h @ tp["u"] + tp["b"])
        hs.append(h)
    tl = 0.5 * (torch.stack(hs) ** 2).sum() + torch.sin(h).sum()
    tl.backward()
    for k in p:
        np.testing.assert_allclose(gp[k], tp[k].grad.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eager_and_jit_agree_bit_for_bit(dtype):
    p = params(dtype)
    xs, h0 = inputs(dtype)
    eager = fnad.value_and_grad(loss, (0, 1, 2))(p, xs, h0)
    for run in (fnad.jit(fnad.value_and_grad(loss, (0, 1, 2))),
                fnad.jit(fnad.value_and_grad(loss, (0, 1, 2)), unroll=4000),
                fnad.value_and_grad(fnad.jit(loss), (0, 1, 2))):
        assert_same_bits(eager, run(p, xs, h0))
    assert_same_bits(rnn(p, xs, h0), fnad.jit(rnn)(p, xs, h0))


def test_projection_runs_once_before_the_loop():
    p = params()
    xs, h0 = inputs()
    text = str(fnad.make_graph(rnn)(p, xs, h0).pretty())
    # one (T * B, D_IN) @ (D_IN, H) GEMM outside the loop; the body keeps only h @ u
    assert f"float64[{T * B},{D_IN}]" in text
    body = _hoisted_body(p, xs, h0)
    mats = [e for e in body.eqns if e.prim.name == "matmul"]
    assert len(mats) == 1 and mats[0].args[1].aval.shape == (H, H)


def _scan_eqn(f, *args):
    return next(e for e in fnad.make_graph(f)(*args).eqns if e.prim.name == "scan")


def _hoisted_body(p, xs, h0):
    return _scan_eqn(rnn, p, xs, h0).kwargs["body"]


def test_weight_gradients_leave_the_reverse_loop():
    p = params()
    xs, h0 = inputs()
    body = _hoisted_body(p, xs, h0)
    nc = len(body.invars) - 1 - 1  # consts, then one carry, then the projection
    bwd, plan = _prims._scan_bwd_body(_prims.stacking_body(body, nc, 1), nc, 1)
    # u's cotangent h_{t-1}^T g_t: h_{t-1} is the stacked carry, g_t a stacked output
    assert len(plan) == 1
    (_, _, _, _, a_src, g_src), = plan.values()
    assert a_src == ("carry", 0) and g_src == ("y", None)
    assert not any(e.prim.name == "matmul" and e.outvars[0].aval.shape == (H, H)
                   for e in bwd.eqns)
    text = str(fnad.make_graph(fnad.grad(loss))(p, xs, h0).pretty())
    assert f"float64[{H},{T * B}]" in text  # the stacked factor's transpose in one GEMM


def test_hoisting_handles_shapes_and_unused_weights():
    # per-step inputs of one axis and of three; a weight read only by the projection is
    # dropped from the body; a concrete (lifted) weight
    rng = np.random.default_rng(2)
    w = rng.normal(size=(4, 3))
    for xs, h0 in ((rng.normal(size=(6, 4)), np.zeros(3)),
                   (rng.normal(size=(6, 2, 5, 4)), np.zeros((2, 5, 3)))):
        def f(w, xs, h0):
            return lax.scan(lambda h, x: (fnp.tanh(x @ w) + 0.5 * h, h), h0, xs)

        hT, hs = f(w, xs, h0)
        h, ref = h0, []
        for x in xs:
            ref.append(h)
            h = np.tanh(x @ w) + 0.5 * h
        np.testing.assert_allclose(hT, h, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(hs, np.stack(ref), rtol=1e-13, atol=1e-14)
        g = fnad.grad(lambda w, xs: fnp.sum(f(w, xs, h0)[0] ** 2), (0, 1))(w, xs)
        check_grads(lambda w, xs: fnp.sum(f(w, xs, h0)[0] ** 2), (w, xs), order=1)
        assert_same_bits(g, fnad.jit(fnad.grad(lambda w, xs: fnp.sum(f(w, xs, h0)[0] ** 2),
                                               (0, 1)))(w, xs))


def test_length_zero_and_vmap_and_jvp():
    p = params()
    xs, h0 = inputs()
    g0 = fnad.grad(loss)(p, xs[:0], h0)
    assert all(np.all(v == 0) for v in fnad.tree_leaves(g0))
    h0s = np.stack([h0, -h0, 2 * h0])
    batched = fnad.vmap(fnad.grad(lambda p, h: loss(p, xs, h)), in_axes=(None, 0))(p, h0s)
    for k, h in enumerate(h0s):
        for name, v in fnad.grad(lambda p, h: loss(p, xs, h))(p, h).items():
            np.testing.assert_allclose(batched[name][k], v, rtol=1e-12, atol=1e-14)
    t = {k: np.ones_like(v) for k, v in p.items()}
    _, tan = fnad.jvp(lambda p: loss(p, xs, h0), (p,), (t,))
    g = fnad.grad(loss)(p, xs, h0)
    np.testing.assert_allclose(tan, sum(np.sum(v) for v in fnad.tree_leaves(g)), rtol=1e-12)


def test_only_the_pattern_is_hoisted():
    # W @ x (weight first), a weight carried through the loop, a 1-d weight: left in the loop
    rng = np.random.default_rng(3)
    m, xs = rng.normal(size=(4, 4)), rng.normal(size=(5, 4, 4))

    def f(m, xs):
        return lax.scan(lambda c, x: (fnp.tanh(m @ x) @ c, None), np.eye(4), xs)[0]

    body, consts, kept, products = _hoist.hoist_projections(*_closed(f, m, xs))
    assert products == ()
    check_grads(f, (m, xs), order=1)


def _closed(f, *args):
    e = _scan_eqn(f, *args)
    nc = e.kwargs["num_consts"]
    return e.kwargs["body"], [None] * nc, nc, e.kwargs["num_carry"]


def test_recurrence_programs_of_the_fuzzer():
    # the fuzzer's recurrences (hoisted projections and weight gradients) under jit,
    # jit(grad), grad(jit), vmap(jit) and jit(vmap), bit for bit, on NumPy's kernels and
    # (one program) numba's
    from tests.core import jit_fuzz
    progs = (jit_fuzz.generate(seed, n_statements=3, families=["recurrences"])
             for seed in range(40))
    progs = [p for p in progs if "lax.scan(" in p.source()][:4]
    assert len(progs) == 4
    for k, prog in enumerate(progs):
        backends = ["numpy"] + (["numba"] if k < 1 and "numba" in jit_fuzz.BACKENDS else [])
        jit_fuzz.check_program(prog, backends=backends)
