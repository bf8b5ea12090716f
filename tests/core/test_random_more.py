"""fnad.random beyond the basics: draws inside control flow, key data, the further
distributions (against jax.random where installed) and their gradients."""

import numpy as np
import pytest

import fnad
import fnad.lax as lax
import fnad.numpy as fnp
import fnad.random as jr

KEY = jr.PRNGKey(0)


# ----------------------------------------------------------------------------- control flow

def test_normal_with_a_loop_dependent_key_in_scan_and_fori_loop():
    # np.float32 (a class, the default dtype) was taken for an array constant of the body
    def body(c, i):
        return c + jr.normal(jr.fold_in(KEY, i), (3,)), None

    out, _ = lax.scan(body, np.zeros(3, np.float32), np.arange(4))
    want = sum(jr.normal(jr.fold_in(KEY, i), (3,)) for i in range(4))
    np.testing.assert_allclose(out, want, rtol=1e-6)
    out = lax.fori_loop(0, 4, lambda i, c: c + jr.normal(jr.fold_in(KEY, i), (3,)),
                        np.zeros(3, np.float32))
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_make_graph_and_jit_of_normal():
    text = str(fnad.make_graph(lambda k: jr.normal(k, (3,)))(KEY))
    assert "random_normal" in text and "float32" in text
    np.testing.assert_array_equal(fnad.jit(lambda k: jr.normal(k, (3,), fnp.float32))(KEY),
                                  jr.normal(KEY, (3,)))


def test_float32_draws_as_cotangents_and_tangents_of_float64_data():
    # fnad.numpy makes float64 (NumPy), fnad.random draws float32 (JAX): a draw of the other
    # float precision is taken in the primal's/output's dtype, as a Python float is
    w = np.linspace(-1.0, 1.0, 3)
    f = lambda w: fnp.tanh(w * 2.0)
    y, f_vjp = fnad.vjp(f, w)
    u = jr.normal(KEY, y.shape)
    (g,) = f_vjp(u)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, f_vjp(u.astype(np.float64))[0], rtol=1e-15)
    _, t = fnad.jvp(f, (w,), (u,))
    assert t.dtype == np.float64
    w32 = w.astype(np.float32)
    _, t = fnad.jvp(f, (w32,), (np.eye(3)[0],))
    assert t.dtype == np.float32
    (gs,) = fnad.vmap(f_vjp)(jr.normal(KEY, (4, 3)))
    assert gs.shape == (4, 3) and gs.dtype == np.float64
    with pytest.raises(TypeError, match="tangents must have their primal's dtype"):
        fnad.jvp(f, (w,), (np.ones(3, np.complex128),))


# ----------------------------------------------------------------------------- float64 normals

def test_float64_normals_match_jax_x64():
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True), jax.threefry_partitionable(False):
        want = np.asarray(jax.random.normal(jax.random.PRNGKey(7), (20000,), np.float64))
    got = jr.normal(jr.PRNGKey(7), (20000,), np.float64)
    rel = np.abs(got - want) / np.abs(want)
    # JAX's own float64 erfinv is off by up to ~1e-13 in the tails; ours by ~5e-15
    assert np.median(rel) < 1e-15 and rel.max() < 1e-12


def test_float64_erfinv_is_accurate_to_a_few_ulps():
    special = pytest.importorskip("scipy.special")
    from fnad.random import _math as R
    y = np.concatenate([np.linspace(-0.9999, 0.9999, 4001), 1 - np.logspace(-16, -1, 100),
                        -1 + np.logspace(-16, -1, 100), [0.0, 5e-324]])
    got, want = R.erfinv(np, y), special.erfinv(y)
    assert (np.abs(got - want) <= 64 * np.spacing(np.abs(want))).all()
    np.testing.assert_array_equal(R.erfinv(np, np.array([1.0, -1.0])), [np.inf, -np.inf])
    assert R.erfinv(np, np.ones((2, 0))).shape == (2, 0)
