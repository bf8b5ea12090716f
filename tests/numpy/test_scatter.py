"""scatter_add (the transpose of gathers) against np.add.at, on every strategy's path."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad.numpy._scatter import scatter_add


@pytest.mark.parametrize("vocab,n", [(5000, 3000), (40, 3000), (50, 20), (3000, 1500)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_match_add_at(vocab, n, dtype):
    rng = np.random.default_rng(vocab + n)
    ids = rng.integers(-vocab, vocab, (n // 50, 50))
    v = rng.standard_normal((n // 50, 50, 3, 2)).astype(dtype)
    z = rng.standard_normal((vocab, 3, 2)).astype(dtype)
    ref = z.copy()
    np.add.at(ref, ids, v)
    np.testing.assert_allclose(scatter_add(z.copy(), (ids,), v), ref, rtol=1e-6)
    np.testing.assert_allclose(scatter_add(z.copy(), (ids, Ellipsis), v), ref, rtol=1e-6)


def test_broadcast_values_and_other_index_forms():
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 100, 2000)
    z = np.zeros((100, 4))
    ref = z.copy()
    np.add.at(ref, ids, 1.5)
    np.testing.assert_allclose(scatter_add(z.copy(), (ids,), 1.5), ref)
    cols = rng.integers(0, 4, 2000)
    ref2 = z.copy()
    np.add.at(ref2, (slice(None), cols), 2.0)
    np.testing.assert_allclose(scatter_add(z.copy(), (slice(None), cols), 2.0), ref2)


def test_out_of_bounds_raises():
    with pytest.raises(IndexError):
        scatter_add(np.zeros((10, 2)), (np.arange(2000) % 11,), 1.0)


def test_embedding_backward_large():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((300, 8))
    ids = rng.integers(0, 300, (4, 512))
    g = fnad.grad(lambda m: fnp.sum(fnp.take(m, ids, axis=0) * 2.0))(w)
    counts = np.bincount(ids.ravel(), minlength=300).astype(float)
    np.testing.assert_allclose(g, 2.0 * counts[:, None] * np.ones((1, 8)))
