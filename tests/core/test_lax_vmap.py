"""vmap of fnad.lax's control flow equals the loop over examples, with grad and jit."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad import lax

rng = np.random.default_rng(0)
W = rng.normal(size=(3, 3)) * 0.5
H0 = rng.normal(size=(4, 3))
XS = rng.normal(size=(5, 4, 3))
WS = rng.normal(size=(4, 3, 3)) * 0.5


def rnn(h0, xs, w):
    def body(h, x):
        h = fnp.tanh(h @ w + x)
        return h, fnp.sum(h)
    return lax.scan(body, h0, xs)


def loop(h0, xs, w):
    ys, h = [], h0
    for x in xs:
        h = fnp.tanh(h @ w + x)
        ys.append(fnp.sum(h))
    return h, fnp.stack(ys)


@pytest.mark.parametrize("axes", [(0, None, None), (None, 1, None), (0, 1, 0), (None, None, 0)])
def test_vmap_scan_matches_loop(axes):
    args = (H0 if axes[0] is not None else H0[0], XS if axes[1] is not None else XS[:, 0],
            WS if axes[2] is not None else W)
    got = fnad.vmap(rnn, in_axes=axes)(*args)
    want = fnad.vmap(loop, in_axes=axes)(*args)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


def test_vmap_grad_scan_and_jit():
    def g(w, h0, xs):
        return fnp.sum(rnn(h0, xs, w)[1])

    def g_loop(w, h0, xs):
        return fnp.sum(loop(h0, xs, w)[1])

    want = fnad.vmap(fnad.grad(g_loop), in_axes=(0, 0, 1))(WS, H0, XS)
    got = fnad.vmap(fnad.grad(g), in_axes=(0, 0, 1))(WS, H0, XS)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    jitted = fnad.jit(fnad.vmap(fnad.grad(g), in_axes=(0, 0, 1)))(WS, H0, XS)
    np.testing.assert_allclose(jitted, want, rtol=1e-12, atol=1e-12)


def _branchy(p, x):
    return lax.cond(p, lambda x: fnp.sin(x), lambda x: x * 2, x)


def test_vmap_cond_batched_and_unbatched_predicate():
    ps, xs = np.array([True, False, True]), np.arange(3.0)
    np.testing.assert_allclose(fnad.vmap(_branchy)(ps, xs),
                               [_branchy(p, x) for p, x in zip(ps, xs)])
    np.testing.assert_allclose(fnad.vmap(_branchy, in_axes=(None, 0))(True, xs), np.sin(xs))
    grads = fnad.vmap(fnad.grad(lambda x, p: _branchy(p, x)))(xs, ps)
    np.testing.assert_allclose(grads, [np.cos(0.0), 2.0, np.cos(2.0)])


def test_vmap_while_loop_runs_each_example_its_own_trip_count():
    def f(n):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0), (0, 1.0))
    counts, values = fnad.vmap(f)(np.array([1, 3, 0]))
    np.testing.assert_array_equal(counts, [1, 3, 0])
    np.testing.assert_array_equal(values, [2.0, 8.0, 1.0])
