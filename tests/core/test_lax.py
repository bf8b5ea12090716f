"""fnad.lax: scan, cond, while_loop and fori_loop against Python loops, in value and in
derivatives (grad, jacrev, jvp, check_grads order 2), eagerly and under jit."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad import lax
from fnad.test_util import check_grads

RNG = np.random.default_rng(0)
W = RNG.normal(size=(3, 3)) * 0.5
H0 = RNG.normal(size=(2, 3))
XS = RNG.normal(size=(5, 2, 3))


def close(a, b, tol=1e-12):
    for x, y in zip(fnad.tree_leaves(a), fnad.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


def rnn_scan(w, h0, xs, reverse=False):
    def step(h, x):
        h = fnp.tanh(x + h @ w)
        return h, h * 2.0
    return lax.scan(step, h0, xs, reverse=reverse)


def rnn_loop(w, h0, xs, reverse=False):
    h, ys = h0, [None] * len(xs)
    for i in (range(len(xs) - 1, -1, -1) if reverse else range(len(xs))):
        h = fnp.tanh(xs[i] + h @ w)
        ys[i] = h * 2.0
    return h, fnp.stack(ys)


def loss_of(run):
    return lambda w, h0, xs: fnp.sum(run(w, h0, xs)[1] ** 2) + fnp.sum(fnp.sin(run(w, h0, xs)[0]))


# ----------------------------------------------------------------------------- scan

@pytest.mark.parametrize("reverse", [False, True])
def test_scan_matches_python_loop_in_value_and_gradient(reverse):
    close(rnn_scan(W, H0, XS, reverse), rnn_loop(W, H0, XS, reverse))
    ls = loss_of(lambda *a: rnn_scan(*a, reverse=reverse))
    ll = loss_of(lambda *a: rnn_loop(*a, reverse=reverse))
    close(fnad.grad(ls, argnums=(0, 1, 2))(W, H0, XS), fnad.grad(ll, argnums=(0, 1, 2))(W, H0, XS))
    close(fnad.jacrev(lambda w: rnn_scan(w, H0, XS, reverse)[1])(W),
          fnad.jacrev(lambda w: rnn_loop(w, H0, XS, reverse)[1])(W))
    t = tuple(RNG.normal(size=a.shape) for a in (W, H0, XS))
    close(fnad.jvp(ls, (W, H0, XS), t), fnad.jvp(ll, (W, H0, XS), t))


def test_scan_check_grads_order_2():
    check_grads(rnn_scan, (W, H0, XS), order=2)
    check_grads(lambda w, h0, xs: rnn_scan(w, h0, xs, reverse=True), (W, H0, XS), order=2)


def test_scan_hessian_matches_python_loop():
    f = lambda w: fnp.sum(rnn_scan(w, H0, XS[:3])[1] ** 2)
    g = lambda w: fnp.sum(rnn_loop(w, H0, XS[:3])[1] ** 2)
    close(fnad.hessian(f)(W), fnad.hessian(g)(W), 1e-10)
    close(fnad.jacrev(fnad.grad(f))(W), fnad.hessian(g)(W), 1e-10)


@pytest.mark.parametrize("mode", ["jit(grad)", "grad(jit)", "jit(jvp)"])
def test_scan_derivatives_under_jit(mode):
    ls, ll = loss_of(rnn_scan), loss_of(rnn_loop)
    if mode == "jit(grad)":
        got = fnad.jit(fnad.grad(ls, argnums=(0, 1, 2)))(W, H0, XS)
    elif mode == "grad(jit)":
        got = fnad.grad(fnad.jit(ls), argnums=(0, 1, 2))(W, H0, XS)
    else:
        got = fnad.jit(lambda w: fnad.jvp(ls, (w, H0, XS), (W, H0, XS)))(W)
    want = (fnad.grad(ll, argnums=(0, 1, 2))(W, H0, XS) if mode != "jit(jvp)"
            else fnad.jvp(ll, (W, H0, XS), (W, H0, XS)))
    close(got, want)


def test_scan_length_without_xs_and_pytrees():
    def step(c, _):
        a, (b, k) = c["a"], c["bk"]
        return {"a": a * 0.5 + b, "bk": (b + 1.0, k + 1)}, {"twice": a * 2, "k": k}

    init = {"a": np.ones(2), "bk": (np.zeros(2), np.array(0))}
    c, ys = lax.scan(step, init, None, length=4)
    a, b = np.ones(2), np.zeros(2)
    for k in range(4):
        np.testing.assert_array_equal(ys["twice"][k], a * 2)
        assert ys["k"][k] == k
        a, b = a * 0.5 + b, b + 1.0
    close(c, {"a": a, "bk": (b, np.array(4))})
    # pytree xs: a tuple and a dict, gradients for both
    xs = (XS, {"s": RNG.normal(size=(5,))})

    def f(xs):
        def step(h, x):
            h = h * x[1]["s"] + x[0][0]
            return h, fnp.sum(h)
        return fnp.sum(lax.scan(step, np.zeros(3), xs)[1])

    def g(xs):
        h, out = np.zeros(3), 0.0
        for i in range(5):
            h = h * xs[1]["s"][i] + xs[0][i][0]
            out = out + fnp.sum(h)
        return out

    close(f(xs), g(xs))
    close(fnad.grad(f)(xs), fnad.grad(g)(xs))


def test_scan_closes_over_traced_values_and_constants():
    c = np.arange(3.0)

    def f(w, x0):
        def step(h, x):
            return fnp.tanh(h @ w + x + c), None
        return fnp.sum(lax.scan(step, x0, XS)[0])

    def g(w, x0):
        h = x0
        for x in XS:
            h = fnp.tanh(h @ w + x + c)
        return fnp.sum(h)

    close(fnad.grad(f, argnums=(0, 1))(W, H0), fnad.grad(g, argnums=(0, 1))(W, H0))
    close(fnad.jit(fnad.grad(f, argnums=(0, 1)))(W, H0), fnad.grad(g, argnums=(0, 1))(W, H0))
    check_grads(f, (W, H0), order=2)


def test_scan_under_jit_traces_the_body_once():
    count = [0]

    def f(w, h0, xs):
        def step(h, x):
            count[0] += 1
            return fnp.tanh(x + h @ w), fnp.sum(h)
        return lax.scan(step, h0, xs)

    jf = fnad.jit(f)
    close(jf(W, H0, XS), f(W, H0, XS))
    count[0] = 0
    jf = fnad.jit(f)
    jf(W, H0, XS)
    assert count[0] == 0  # every jit of f shares the traces the first one made
    fnad.clear_caches()
    for _ in range(3):
        jf(W, H0, XS)
    assert count[0] == 1  # one trace of f, one of its body: not unrolled, not retraced
    count[0] = 0
    jg = fnad.jit(fnad.grad(lambda w: fnp.sum(f(w, H0, XS)[1])))
    jg(W)
    jg(W)
    assert count[0] == 1
    assert jf.graph(W, H0, XS).primitive_counts().get("scan") == 1  # staged once


def test_scan_zero_length_and_python_scalar_carry():
    c, ys = lax.scan(lambda c, x: (c + x, c * x), np.ones(2), np.zeros((0, 2)))
    np.testing.assert_array_equal(c, np.ones(2))
    assert ys.shape == (0, 2)
    # a Python float carry takes the dtype the body gives it (as JAX's weak types do)
    xs = np.arange(4, dtype=np.float32)
    c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, xs)
    assert c.dtype == np.float32 and float(c) == 6.0
    np.testing.assert_array_equal(ys, [0, 0, 1, 3])


def test_scan_errors():
    with pytest.raises(TypeError, match=r"carry must keep its type.*float64\[2\].*float64\[3\]"):
        lax.scan(lambda c, x: (fnp.concatenate([c, x[:1]]), None), np.ones(2), np.ones((3, 2)))
    with pytest.raises(TypeError, match=r"carry.*float64\[2\].*int64\[2\]"):
        lax.scan(lambda c, x: (c.astype(int), None), np.ones(2), np.ones((3, 2)))
    with pytest.raises(TypeError, match="different structure from init"):
        lax.scan(lambda c, x: ((c, c), None), np.ones(2), np.ones((3, 2)))
    with pytest.raises(TypeError, match=r"pair \(carry, y\)"):
        lax.scan(lambda c, x: c, np.ones(2), np.ones((3, 2)))
    with pytest.raises(ValueError, match="pass length="):
        lax.scan(lambda c, x: (c, x), np.ones(2), None)
    with pytest.raises(ValueError, match="length=4 but"):
        lax.scan(lambda c, x: (c, x), np.ones(2), np.ones((3, 2)), length=4)
    with pytest.raises(ValueError, match="different leading axis sizes"):
        lax.scan(lambda c, x: (c, x), np.ones(2), (np.ones((3, 2)), np.ones((4, 2))))


# ----------------------------------------------------------------------------- cond

def branchy(x, y):
    return lax.cond(fnp.sum(x) > 0, lambda a, b: (fnp.sin(a) * b, a @ W),
                    lambda a, b: (a * b, fnp.cos(a) @ W), x, y)


def branchy_py(x, y):
    if fnp.sum(x) > 0:  # Python control flow (float() of it would raise)
        return fnp.sin(x) * y, x @ W
    return x * y, fnp.cos(x) @ W


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_both_branches_values_and_gradients(sign):
    x, y = sign * np.abs(H0), RNG.normal(size=H0.shape)
    close(branchy(x, y), branchy_py(x, y))
    loss = lambda f: lambda x, y: fnp.sum(f(x, y)[0] ** 2) + fnp.sum(fnp.tanh(f(x, y)[1]))
    close(fnad.grad(loss(branchy), argnums=(0, 1))(x, y),
          fnad.grad(loss(branchy_py), argnums=(0, 1))(x, y))
    check_grads(branchy, (x, y), order=2)
    # pred staged under jit: both branches compiled, the value chooses at run time
    jf = fnad.jit(branchy)
    close(jf(x, y), branchy_py(x, y))
    close(fnad.jit(fnad.grad(loss(branchy), argnums=(0, 1)))(x, y),
          fnad.grad(loss(branchy_py), argnums=(0, 1))(x, y))
    close(fnad.grad(fnad.jit(loss(branchy)), argnums=(0, 1))(x, y),
          fnad.grad(loss(branchy_py), argnums=(0, 1))(x, y))


def test_cond_pred_traced_under_jit_one_trace_two_values():
    count = [0]

    def f(p, x):
        def t(x):
            count[0] += 1
            return x + 1
        return lax.cond(p, t, lambda x: x - 1, x)

    jf = fnad.jit(f)
    assert float(jf(np.array(True), np.array(1.0))) == 2.0
    assert float(jf(np.array(False), np.array(1.0))) == 0.0
    assert count[0] == 1 and jf.cache_size() == 1


def test_cond_closes_over_traced_values():
    def f(w, x):
        return fnp.sum(lax.cond(fnp.sum(x) > 0, lambda x: x @ w, lambda x: x * 2.0, x))

    def g(w, x):
        return fnp.sum(x @ w if fnp.sum(x) > 0 else x * 2.0)

    for x in (np.abs(H0), -np.abs(H0)):
        close(fnad.grad(f, argnums=(0, 1))(W, x), fnad.grad(g, argnums=(0, 1))(W, x))
        close(fnad.jvp(f, (W, x), (W, x)), fnad.jvp(g, (W, x), (W, x)))


def test_cond_errors():
    with pytest.raises(TypeError, match="same structure"):
        lax.cond(True, lambda x: (x, x), lambda x: x, np.ones(2))
    with pytest.raises(TypeError, match=r"same shapes and dtypes.*float64\[2\].*float32\[2\]"):
        lax.cond(True, lambda x: x, lambda x: x.astype(np.float32), np.ones(2))
    with pytest.raises(TypeError, match="pred must be a boolean"):
        lax.cond(np.ones(2) > 0, lambda x: x, lambda x: x, np.ones(2))


# ----------------------------------------------------------------------------- while / fori

def halving(x):
    return lax.while_loop(lambda s: fnp.sum(s[1] ** 2) > 0.01,
                          lambda s: (s[0] + 1, s[1] * 0.5 + fnp.sin(s[1]) * 0.1), (0, x))


def test_while_loop_values_and_jvp():
    x = np.array([1.0, -2.0, 0.5])
    n, y = halving(x)
    k, z = 0, x
    while np.sum(z ** 2) > 0.01:
        k, z = k + 1, z * 0.5 + np.sin(z) * 0.1
    assert int(n) == k and k > 3
    close(y, z)
    f = lambda x: halving(x)[1]
    check_grads(f, (x,), order=2, modes=("fwd",))
    close(fnad.jit(f)(x), z)
    close(fnad.jacfwd(f)(x), fnad.jacfwd(fnad.jit(f))(x))


def test_while_loop_reverse_mode_raises_clearly():
    with pytest.raises(TypeError, match="while_loop: reverse-mode differentiation"):
        fnad.grad(lambda x: fnp.sum(halving(x)[1]))(np.ones(3))
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        lax.while_loop(lambda s: s, lambda s: s, np.ones(2))
    with pytest.raises(TypeError, match="body_fun's output must keep its type"):
        lax.while_loop(lambda s: fnp.sum(s) < 3, lambda s: s[:1], np.ones(2))


def test_fori_loop_static_bounds_is_reverse_differentiable():
    def f(w, x):
        return fnp.sum(lax.fori_loop(1, 4, lambda i, h: fnp.tanh(h @ w) * i, x))

    def g(w, x):
        h = x
        for i in range(1, 4):
            h = fnp.tanh(h @ w) * i
        return fnp.sum(h)

    close(f(W, H0), g(W, H0))
    close(fnad.grad(f, argnums=(0, 1))(W, H0), fnad.grad(g, argnums=(0, 1))(W, H0))
    check_grads(f, (W, H0), order=2)
    assert float(lax.fori_loop(3, 1, lambda i, v: v + i, 1.0)) == 1.0  # empty range


def test_fori_loop_traced_bounds_is_a_while_loop():
    def f(n, x):
        return lax.fori_loop(0, n, lambda i, v: v * 2.0 + i, x)

    jf = fnad.jit(f)
    np.testing.assert_allclose(jf(np.array(3), np.array(1.0)), ((1 * 2 + 0) * 2 + 1) * 2 + 2)
    np.testing.assert_allclose(jf(np.array(0), np.array(1.0)), 1.0)
    assert jf.cache_size() == 1
    assert "while" in jf.graph(np.array(3), np.array(1.0)).primitive_counts()
    _, t = fnad.jit(lambda x: fnad.jvp(lambda x: f(np.array(3), x), (x,), (np.array(1.0),)))(
        np.array(1.0))
    assert float(t) == 8.0


# ----------------------------------------------------------------------------- composition

def nested(w, xs):
    """A scan whose body runs a scan and a cond, with an integer counter in the carry."""
    def outer(c, x):
        k, h = c

        def inner(h, x_row):
            return fnp.tanh(h @ w + x_row), fnp.sum(h)

        h, sums = lax.scan(inner, h, x)
        h = lax.cond(fnp.sum(h) > 0, lambda h: h * 0.5, lambda h: fnp.sin(h), h)
        return (k + 1, h), sums * k
    (k, h), ys = lax.scan(outer, (0, np.ones(3) * 0.1), xs)
    return fnp.sum(h) + fnp.sum(ys ** 2), k


def nested_py(w, xs):
    k, h, ys = 0, np.ones(3) * 0.1, []
    for x in xs:
        sums = []
        for row in x:
            sums.append(fnp.sum(h))
            h = fnp.tanh(h @ w + row)
        h = h * 0.5 if fnp.sum(h) > 0 else fnp.sin(h)
        ys.append(fnp.stack(sums) * k)
        k += 1
    return fnp.sum(h) + fnp.sum(fnp.stack(ys) ** 2), k


def test_nested_scan_cond_and_integer_carry_under_grad_and_jit():
    xs = RNG.normal(size=(4, 3, 3)) * 0.5
    v, k = nested(W, xs)
    close(v, nested_py(W, xs)[0])
    assert int(k) == 4
    f, g = (lambda w, xs: nested(w, xs)[0]), (lambda w, xs: nested_py(w, xs)[0])
    want = fnad.grad(g, argnums=(0, 1))(W, xs)
    close(fnad.grad(f, argnums=(0, 1))(W, xs), want)
    close(fnad.jit(fnad.grad(f, argnums=(0, 1)))(W, xs), want)
    close(fnad.grad(fnad.jit(f), argnums=(0, 1))(W, xs), want)
    t = (RNG.normal(size=W.shape), RNG.normal(size=xs.shape))
    close(fnad.jvp(f, (W, xs), t), fnad.jvp(g, (W, xs), t))
    check_grads(f, (W, xs), order=2, eps=1e-5)


def test_bodies_are_shared_across_calls():
    # a body traced again on each call, closing over new arrays, reuses its derived programs
    from fnad.lax._graphs import close as close_graph
    from fnad.lax._graphs import trace_flat
    from fnad._core.abstract import aval_of

    def body_closing_over(w):
        return trace_flat(lambda h: fnp.tanh(h @ w), [aval_of(H0)], "body")

    (g1, c1), (g2, c2) = close_graph(body_closing_over(W), "b"), close_graph(
        body_closing_over(W + 1), "b")
    assert g1 is g2 and c1[0] is W and c2[0] is not W
    g3, _ = close_graph(body_closing_over(W[:, :2]), "b")  # another shape: another program
    assert g3 is not g1


def _rnn_loss(w, h0, xs):
    def step(h, x):
        h = fnp.tanh(x + h @ w)
        return h, fnp.sum(h)
    h, ys = lax.scan(step, h0, xs, reverse=True)
    return fnp.sum(ys) + fnp.sum(h)


def test_jit_unrolls_short_scans_bit_identically_and_keeps_long_ones():
    vg = fnad.value_and_grad(_rnn_loss)
    want = fnad.jit(vg, optimize=False)(W, H0, XS)
    assert "scan" in fnad.jit(vg).graph(W, H0, XS).primitive_counts()  # off by default
    got = fnad.jit(vg, unroll=4000)(W, H0, XS)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    unrolled = fnad.jit(vg, unroll=4000).graph(W, H0, XS)
    assert "scan" not in unrolled.primitive_counts()
    assert any(n.startswith("unroll: 2 scans") for n in unrolled.notes)
    np.testing.assert_array_equal(fnad.grad(fnad.jit(_rnn_loss, unroll=4000))(W, H0, XS), want[1])
    kept = fnad.jit(vg, unroll=1)  # too long to unroll: the scans stay
    np.testing.assert_array_equal(kept(W, H0, XS)[1], want[1])
    assert kept.graph(W, H0, XS).primitive_counts()["scan"] == 2
    off = fnad.jit(vg, unroll=4000, optimize=set(fnad.jit.PASSES) - {"unroll"})
    assert off.graph(W, H0, XS).primitive_counts()["scan"] == 2


@pytest.mark.parametrize("bad, error", [(-1, ValueError), (2.5, TypeError), (True, TypeError)])
def test_jit_unroll_must_be_a_non_negative_int(bad, error):
    with pytest.raises(error, match="unroll is the most body equations"):
        fnad.jit(_rnn_loss, unroll=bad)
