"""fnad.random beyond the basics: draws inside control flow, key data, the further
distributions (against jax.random where installed) and their gradients."""

import numpy as np

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
