"""Fast math's batching of the weight GEMMs of Python loops that jit unrolls
(fnad/_jit/loops.py, docs/jit.md "Fast math"): one GEMM where there were T, values within
the bound of a reassociated sum, exact jit unchanged (bit for bit), and the loops family of
the program fuzzer (tests/core/jit_fuzz.py)."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad import lax
from tests.core import jit_fuzz

T, B, D, H = 6, 4, 3, 5


def _params(dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    p = {"w": rng.standard_normal((D, H)), "u": 0.5 * rng.standard_normal((H, H)),
         "b": rng.standard_normal(H)}
    xs = rng.standard_normal((B, T, D))
    return fnad.tree_map(lambda a: a.astype(dtype), p), xs.astype(dtype)


def rnn_loss(p, xs):
    """A tanh RNN written as users write it: a Python loop over time, batch first."""
    h = fnp.zeros((xs.shape[0], p["u"].shape[0]), xs.dtype)
    for t in range(xs.shape[1]):
        h = fnp.tanh(xs[:, t] @ p["w"] + h @ p["u"] + p["b"])
    return fnp.sum(h * h)


def _matmuls(f, *args, **jit_kwargs):
    g = fnad.jit(f, **jit_kwargs).graph(*args)
    return g.primitive_counts().get("matmul", 0), g


def _close(got, want, dtype, factor=16):
    """Normwise within `factor` * (number of terms) eps of the reference: the bound of a
    reassociated sum (docs/jit.md)."""
    eps = float(np.finfo(dtype).eps)
    for k in want:
        scale = max(float(np.max(np.abs(want[k]))), 1.0)
        err = float(np.max(np.abs(np.asarray(got[k], np.float64) - want[k])))
        assert err <= factor * T * B * eps * scale, (k, err, scale)


def test_one_gemm_where_there_were_t():
    p, xs = _params()
    grad = fnad.grad(rnn_loss)
    exact, ge = _matmuls(grad, p, xs)
    fast, gf = _matmuls(grad, p, xs, fast_math=True)
    # exact: T x_t @ W and T h @ U forward; T - 1 cotangents g_t @ U^T and 2 T weight
    # gradients backward (the first h @ U reads the zero state, a constant, kept)
    assert exact == 5 * T - 1
    # fast: one projection GEMM, the recurrence's T, its T - 1 cotangents, one GEMM per weight
    assert fast == 1 + T + (T - 1) + 2, gf
    assert any(n.startswith("loops: ") for n in gf.notes), gf.notes
    assert not any(n.startswith("loops: ") for n in ge.notes), ge.notes
    # the bias gradient's T column sums are one too
    assert ge.primitive_counts()["sum"] - gf.primitive_counts()["sum"] == T - 1


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_within_the_bound_and_exact_jit_keeps_the_bits(dtype):
    p, xs = _params(dtype)
    grad = fnad.grad(rnn_loss)
    want = grad(*_params(np.float64))  # the float64 reference
    eager = grad(p, xs)
    fast = fnad.jit(grad, fast_math=True)(p, xs)
    _close(fast, want, dtype)
    exact = fnad.jit(grad)(p, xs)
    for k in eager:  # exact jit: eager's bits
        assert exact[k].dtype == eager[k].dtype == dtype
        np.testing.assert_array_equal(exact[k], eager[k])
    np.testing.assert_array_equal(fnad.jit(rnn_loss)(p, xs), rnn_loss(p, xs))


def test_forward_projection_is_one_gemm_of_the_whole_input():
    p, xs = _params()

    def states(p, xs):  # every step's state: the projections alone feed no sum
        h, out = fnp.zeros((B, H)), []
        for t in range(T):
            h = fnp.tanh(xs[:, t] @ p["w"] + h @ p["u"])
            out.append(h)
        return fnp.stack(out, axis=1)
    n, g = _matmuls(states, p, xs, fast_math=True)
    assert n == 1 + T
    shapes = [np.shape(e.args[0]) if not hasattr(e.args[0], "aval") else e.args[0].aval.shape
              for e in g.eqns if e.prim.name == "matmul"]
    assert (B * T, D) in shapes
    _close({"h": fnad.jit(states, fast_math=True)(p, xs)}, {"h": states(p, xs)}, np.float64)


def test_time_major_and_a_leading_batch_of_slices():
    rng = np.random.default_rng(1)
    xs, w = rng.standard_normal((T, 2, B, D)), rng.standard_normal((D, H))

    def f(xs, w):
        return fnp.stack([fnp.tanh(xs[t] @ w) for t in range(T)])   # 3-D slices, time first
    n, _ = _matmuls(f, xs, w, fast_math=True)
    assert n == 1
    np.testing.assert_allclose(fnad.jit(f, fast_math=True)(xs, w), f(xs, w), rtol=1e-13,
                               atol=1e-13)
    gw = fnad.grad(lambda w, xs: fnp.sum(f(xs, w) ** 2))
    np.testing.assert_allclose(fnad.jit(gw, fast_math=True)(w, xs), gw(w, xs), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_stack_of_matrices_times_a_weight_is_one_gemm_of_its_rows(dtype):
    # a transformer's linear layer: NumPy runs a GEMM per matrix; fast math one of all rows
    rng = np.random.default_rng(3)
    x, w, c = (rng.standard_normal(s).astype(dtype) for s in ((2, 3, T, D), (D, H), (4, B, D)))

    def f(x, w):
        return fnp.sum(fnp.tanh(x @ w) * 0.5) + fnp.sum((c @ w) ** 2)
    for fun in (f, fnad.grad(f, argnums=(0, 1))):
        _, ge = _matmuls(fun, x, w)
        _, gf = _matmuls(fun, x, w, fast_math=True)
        dims = [np.ndim(e.args[0]) if not hasattr(e.args[0], "aval") else e.args[0].aval.ndim
                for e in gf.eqns if e.prim.name == "matmul"]
        assert dims and all(d == 2 for d in dims), gf
        assert any(d > 2 for e in ge.eqns if e.prim.name == "matmul"
                   for d in [np.ndim(e.args[0]) if not hasattr(e.args[0], "aval")
                             else e.args[0].aval.ndim]), ge
        want = fun(*(a.astype(np.float64) for a in (x, w)))
        got = fnad.jit(fun, fast_math=True)(x, w)
        _close(dict(enumerate(fnad.tree_leaves(got))),
               dict(enumerate(np.asarray(a) for a in fnad.tree_leaves(want))), dtype)
        for a, b in zip(fnad.tree_leaves(fnad.jit(fun)(x, w)), fnad.tree_leaves(fun(x, w))):
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()  # exact: eager's bits


@pytest.mark.parametrize("case", ["left", "two_weights", "last_axis", "few_rows", "read_twice"])
def test_what_is_not_batched(case):
    rng = np.random.default_rng(2)
    xs, w, v = (rng.standard_normal(s) for s in ((T, B, D), (D, D), (D, D)))
    ones = np.ones((B, 2))
    fs = {
        "left": lambda xs, w: [w @ xs[t].T for t in range(T)],          # W @ x_t
        "two_weights": lambda xs, w: [xs[t] @ (w if t % 2 else v) for t in range(2)],
        "last_axis": lambda xs, w: [xs[:, :, t] @ ones for t in range(D)],  # of d_in
        "few_rows": lambda xs, w: [xs[t] @ w for t in range(T // 2 - 1)],  # under half of X
        "read_twice": lambda xs, w: [(xs[t].T @ xs[t]) * fnp.sum(xs[t].T @ xs[t])
                                     for t in range(T)],
    }
    f = fs[case]
    exact, _ = _matmuls(f, xs, w)
    fast, g = _matmuls(f, xs, w, fast_math=True)
    assert fast == exact, g
    np.testing.assert_allclose(fnad.jit(f, fast_math=True)(xs, w), f(xs, w), rtol=1e-13)


def test_weight_gradient_sum_with_other_leaves():
    rng = np.random.default_rng(3)
    a, g, c = (rng.standard_normal(s) for s in ((T, B, D), (T, B, H), (D, H)))

    def f(a, g, c):   # sum_t a_t^T g_t + c, the sum of products reassociated with c
        s = c * 2.0
        for t in range(T):
            s = s + a[t].T @ fnp.tanh(g[t])
        return s
    n, graph = _matmuls(f, a, g, c, fast_math=True)
    assert n == 1, graph
    np.testing.assert_allclose(fnad.jit(f, fast_math=True)(a, g, c), f(a, g, c), rtol=1e-13)


def test_switched_off_by_its_pass_name_and_transforms_replay_exact_ops():
    p, xs = _params()
    grad = fnad.grad(rnn_loss)
    off, _ = _matmuls(grad, p, xs, fast_math=True,
                      optimize=set(fnad.jit.PASSES) - {"loops"})
    assert off == 5 * T - 1
    # grad of a fast jit replays the traced (exact) operations
    eager = grad(p, xs)
    via = fnad.grad(fnad.jit(rnn_loss, fast_math=True))(p, xs)
    for k in eager:
        np.testing.assert_array_equal(via[k], eager[k])


def test_scans_unrolled_by_jit_take_it_too():
    rng = np.random.default_rng(4)
    xs, w, u = rng.standard_normal((T, B, D)), rng.standard_normal((D, H)), \
        0.5 * rng.standard_normal((H, H))

    def loss(w, u, xs):   # W @ x_t^T: scan does not hoist it; unrolled, the pass batches
        def body(h, x):   # the weight gradients' sums
            return fnp.tanh((w.T @ x.T).T + h @ u), None
        h, _ = lax.scan(body, fnp.zeros((B, H)), xs)
        return fnp.sum(h * h)
    grad = fnad.grad(loss, argnums=(0, 1))
    exact, _ = _matmuls(grad, w, u, xs, unroll=4000)
    fast, g = _matmuls(grad, w, u, xs, unroll=4000, fast_math=True)
    assert fast < exact, g.notes
    for got, want in zip(fnad.jit(grad, unroll=4000, fast_math=True)(w, u, xs),
                         grad(w, u, xs)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def test_fuzz_loops_family(kernel_cache):
    # Python loops of projections, recurrences and sums of products: exact jit bit for bit,
    # fast jit and jit(grad) within the fast-math tolerance
    jit_fuzz.fuzz_loops(range(10))


@pytest.mark.slow
def test_fuzz_loops_family_many_programs(kernel_cache):
    jit_fuzz.fuzz_loops(range(100, 300), n_statements=6)
