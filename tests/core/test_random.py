"""fnad.random: known answers, determinism, independence of split keys, distributions."""

import math

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad.random as jr
from fnad.random import _math as R

N = 200_000
KEY = jr.PRNGKey(0)


# ----------------------------------------------------------------------------- known answers

# Random123's known-answer vectors for threefry2x32 with 20 rounds: (key, counter, result).
KAT = [((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
       ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
       ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0))]


@pytest.mark.parametrize("key, ctr, expected", KAT, ids=["zeros", "ones", "pi"])
def test_threefry_known_answers(key, ctr, expected):
    out = jr.threefry_2x32(np.array(key, np.uint32), np.array(ctr, np.uint32))
    assert out.tolist() == list(expected)


def test_matches_jax_reference_values():
    # jax.random with jax_threefry_partitionable=False (JAX's original scheme)
    assert jr.split(KEY).tolist() == [[4146024105, 967050713], [2718843009, 1272950319]]
    assert jr.bits(KEY, (4,)).tolist() == [4146024105, 967050713, 2718843009, 1272950319]
    np.testing.assert_allclose(jr.normal(KEY, (4,)),
                               [1.8160863, -0.75488514, 0.33988908, -0.53483534], rtol=2e-6)


def test_prngkey_seeds():
    assert jr.PRNGKey(42).tolist() == [0, 42]
    assert jr.PRNGKey(np.int64(2**40 + 5)).tolist() == [256, 5]
    assert jr.PRNGKey(-1).tolist() == [0xFFFFFFFF, 0xFFFFFFFF]
    assert jr.PRNGKey(3).dtype == np.uint32
    for bad in (1.5, "a", np.ones(2, int), True):
        with pytest.raises(TypeError, match="PRNGKey"):
            jr.PRNGKey(bad)
    with pytest.raises(ValueError, match="64 bits"):
        jr.PRNGKey(2**64)


@pytest.mark.parametrize("bad", [np.zeros(2, np.int32), np.zeros(3, np.uint32),
                                 np.zeros((2, 2), np.uint32), [0, 1]],
                         ids=["int32", "len3", "batch", "list"])
def test_bad_keys_rejected(bad):
    with pytest.raises(TypeError, match=r"fnad.random.normal: key must be a uint32 array"):
        jr.normal(bad, (2,))


# ----------------------------------------------------------------------------- determinism

def _draws(key):
    return {
        "bits": jr.bits(key, (7,)), "bits64": jr.bits(key, (3,), np.uint64),
        "uniform": jr.uniform(key, (5,)), "uniform64": jr.uniform(key, (5,), np.float64),
        "normal": jr.normal(key, (2, 3)), "normal64": jr.normal(key, (3,), np.float64),
        "normal16": jr.normal(key, (3,), np.float16),
        "tn": jr.truncated_normal(key, -1.0, 2.0, (4,)),
        "bern": jr.bernoulli(key, 0.3, (9,)), "cat": jr.categorical(key, np.zeros((3, 4))),
        "randint": jr.randint(key, (6,), -5, 5), "perm": jr.permutation(key, 11),
        "gumbel": jr.gumbel(key, (3,)), "split": jr.split(key, 3), "fold": jr.fold_in(key, 7),
    }


def test_same_key_same_numbers_and_key_unchanged():
    key = jr.PRNGKey(123)
    before = key.copy()
    a, b = _draws(key), _draws(jr.PRNGKey(123))
    np.testing.assert_array_equal(key, before)
    for name in a:
        assert a[name].dtype == b[name].dtype, name
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_different_keys_different_numbers():
    a, b = _draws(jr.PRNGKey(1)), _draws(jr.PRNGKey(2))
    for name in ("bits", "uniform", "normal", "split", "fold", "perm"):
        assert not np.array_equal(a[name], b[name]), name


def test_prefix_consistency_is_not_assumed_but_shapes_are_exact():
    for shape in [(), (0,), (1,), (3,), (2, 3), (2, 0, 4), (5, 1)]:
        assert jr.normal(KEY, shape).shape == shape
        assert jr.uniform(KEY, shape, np.float64).shape == shape
        assert jr.bits(KEY, shape).shape == shape
        assert jr.randint(KEY, shape, 0, 3).shape == shape


# ----------------------------------------------------------------------------- independence

def test_split_keys_are_distinct_and_streams_uncorrelated():
    keys = jr.split(KEY, 1000)
    assert keys.shape == (1000, 2) and keys.dtype == np.uint32
    assert len({tuple(k) for k in keys.tolist()}) == 1000
    a = jr.normal(keys[0], (N,), np.float64)
    b = jr.normal(keys[1], (N,), np.float64)
    c = jr.normal(jr.split(keys[0])[0], (N,), np.float64)
    for x, y in [(a, b), (a, c), (b, c)]:
        assert abs(np.corrcoef(x, y)[0, 1]) < 5 / math.sqrt(N)
    # neighbouring elements of one stream are uncorrelated too
    assert abs(np.corrcoef(a[:-1], a[1:])[0, 1]) < 5 / math.sqrt(N)


def test_split_num_default_and_nested_keys():
    k1, k2 = jr.split(KEY)
    assert not np.array_equal(k1, k2)
    sub = [jr.split(k) for k in (k1, k2)]
    flat = {tuple(x) for s in sub for x in s.tolist()} | {tuple(k1), tuple(k2)}
    assert len(flat) == 6


def test_fold_in():
    keys = [jr.fold_in(KEY, i) for i in range(100)]
    assert len({tuple(k.tolist()) for k in keys}) == 100
    np.testing.assert_array_equal(jr.fold_in(KEY, 3), jr.fold_in(KEY, np.int64(3)))
    assert jr.fold_in(KEY, 0).tolist() == jr.threefry_2x32(KEY, np.uint32([0, 0])).tolist()


def test_bit_balance():
    b = jr.bits(KEY, (N,))
    ones = np.unpackbits(b.view(np.uint8)).mean()
    assert abs(ones - 0.5) < 5 * 0.5 / math.sqrt(32 * N)
    per_bit = ((b[:, None] >> np.arange(32, dtype=np.uint32)) & 1).mean(0)
    assert np.all(np.abs(per_bit - 0.5) < 5 * 0.5 / math.sqrt(N))


# ----------------------------------------------------------------------------- distributions

def _moments(x):
    x = np.asarray(x, np.float64)
    m = x.mean()
    c = x - m
    v = (c ** 2).mean()
    return m, v, (c ** 3).mean() / v ** 1.5, (c ** 4).mean() / v ** 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_uniform_moments_and_range(dtype):
    u = jr.uniform(jr.PRNGKey(5), (N,), dtype)
    assert u.dtype == dtype and u.min() >= 0 and u.max() < 1
    m, v, s, _ = _moments(u)
    assert abs(m - 0.5) < 5 * math.sqrt(1 / 12 / N)
    assert abs(v - 1 / 12) < 0.002 and abs(s) < 0.02
    w = jr.uniform(jr.PRNGKey(5), (N,), dtype, minval=-3.0, maxval=-1.0)
    assert w.min() >= -3 and w.max() < -1 and abs(w.mean() + 2) < 0.01


def test_uniform_array_bounds_broadcast():
    lo = np.array([0.0, 10.0, -5.0], np.float32)
    u = jr.uniform(KEY, (1000, 3), minval=lo, maxval=lo + 1)
    assert np.all(u >= lo) and np.all(u < lo + 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal_moments_and_ks(dtype):
    z = jr.normal(jr.PRNGKey(7), (N,), dtype)
    assert z.dtype == dtype and np.all(np.isfinite(z))
    m, v, s, k = _moments(z)
    assert abs(m) < 5 / math.sqrt(N)
    assert abs(v - 1) < 5 * math.sqrt(2 / N)
    assert abs(s) < 5 * math.sqrt(6 / N) and abs(k - 3) < 5 * math.sqrt(24 / N)
    zs = np.sort(z.astype(np.float64))
    cdf = 0.5 * (1 + np.vectorize(math.erf)(zs / math.sqrt(2)))
    d = np.max(np.maximum(np.arange(1, N + 1) / N - cdf, cdf - np.arange(N) / N))
    assert d < 1.95 / math.sqrt(N)  # Kolmogorov-Smirnov at the 0.1% level


def test_normal_float16_and_bad_dtype():
    z = jr.normal(KEY, (1000,), np.float16)
    assert z.dtype == np.float16 and np.all(np.isfinite(z))
    with pytest.raises(TypeError, match="fnad.random.normal: dtype must be a floating"):
        jr.normal(KEY, (3,), np.int32)


def _tn_moments(a, b):
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    Phi = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))
    Z = Phi(b) - Phi(a)
    pa, pb = phi(a) if math.isfinite(a) else 0.0, phi(b) if math.isfinite(b) else 0.0
    ta, tb = (a * pa if math.isfinite(a) else 0.0), (b * pb if math.isfinite(b) else 0.0)
    mean = (pa - pb) / Z
    var = 1 + (ta - tb) / Z - mean ** 2
    return mean, var


@pytest.mark.parametrize("lo, hi", [(-2.0, 2.0), (0.0, 1.0), (1.0, 3.0), (-math.inf, 0.5),
                                    (-0.1, 0.1)])
def test_truncated_normal(lo, hi):
    x = jr.truncated_normal(jr.PRNGKey(3), lo, hi, (N,), np.float64)
    assert np.all(x > lo) and np.all(x < hi)
    mean, var = _tn_moments(lo, hi)
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / N) + 1e-6
    assert abs(x.var() - var) < 0.02 * var


def test_truncated_normal_array_bounds_and_default_shape():
    lo = np.array([-1.0, 0.0, 2.0])
    x = jr.truncated_normal(KEY, lo, lo + 0.5)
    assert x.shape == (3,) and x.dtype == np.float32
    assert np.all(x > lo) and np.all(x < lo + 0.5)


def test_bernoulli():
    b = jr.bernoulli(jr.PRNGKey(2), 0.3, (N,))
    assert b.dtype == bool and abs(b.mean() - 0.3) < 5 * math.sqrt(0.21 / N)
    p = np.array([0.0, 0.5, 1.0])
    bb = jr.bernoulli(KEY, p, (1000, 3))
    assert not bb[:, 0].any() and bb[:, 2].all() and 0.4 < bb[:, 1].mean() < 0.6
    assert jr.bernoulli(KEY, p).shape == (3,)


def test_categorical_frequencies_and_shapes():
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    s = jr.categorical(jr.PRNGKey(9), np.log(probs), shape=(N,))
    freq = np.bincount(s, minlength=4) / N
    assert np.all(np.abs(freq - probs) < 5 * np.sqrt(probs * (1 - probs) / N))
    logits = np.log(np.array([[0.5, 0.5, 0.0 + 1e-300], [1e-300, 1e-300, 1.0]]))
    c = jr.categorical(KEY, logits, shape=(100, 2))
    assert c.shape == (100, 2) and np.all(c[:, 1] == 2) and np.all(c[:, 0] < 2)
    assert jr.categorical(KEY, logits).shape == (2,)
    assert jr.categorical(KEY, logits.T, axis=0).shape == (2,)
    with pytest.raises(ValueError, match="must end with the logits' batch shape"):
        jr.categorical(KEY, logits, shape=(3,))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32])
def test_randint_range_and_uniformity(dtype):
    info = np.iinfo(dtype)
    lo, hi = max(-7, int(info.min)), 9
    r = jr.randint(jr.PRNGKey(4), (N,), lo, hi, dtype)
    assert r.dtype == dtype and r.min() == lo and r.max() == hi - 1
    freq = np.bincount(r.astype(np.int64) - lo) / N
    p = 1 / (hi - lo)
    assert np.all(np.abs(freq - p) < 5 * math.sqrt(p * (1 - p) / N))


def test_randint_edges():
    assert np.all(jr.randint(KEY, (10,), 5, 5) == 5)
    assert np.all(jr.randint(KEY, (10,), 5, 2) == 5)
    full = jr.randint(KEY, (N,), -2**31, 2**31, np.int32)  # the whole int32 range
    assert full.min() < -2**30 and full.max() > 2**30
    big = jr.randint(KEY, (1000,), -2**62, 2**62, np.int64)
    assert big.min() >= -2**62 and big.max() < 2**62 and big.std() > 2**60
    clipped = jr.randint(KEY, (1000,), -1000, 1000, np.uint8)  # bounds clip to [0, 255]
    assert clipped.min() >= 0 and clipped.max() <= 255
    lo = np.array([0, 100, -50])
    arr = jr.randint(KEY, (500, 3), lo, lo + 3)
    assert np.all(arr >= lo) and np.all(arr < lo + 3)
    with pytest.raises(TypeError, match="integer type"):
        jr.randint(KEY, (2,), 0, 3, np.float32)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_randint_64bit_reaches_the_maximum(dtype):
    """maxval one past the dtype's maximum (as the docstring allows) can return the maximum."""
    top = int(np.iinfo(dtype).max)
    cases = [(top - 3, top + 1)]
    if dtype == np.int64:  # an array bound one past the maximum needs a wider dtype (uint64)
        cases.append((np.array([top - 3]), np.array([top + 1], np.uint64)))
    for lo, hi in cases:
        r = jr.randint(KEY, (2000,), lo, hi, dtype)
        assert r.dtype == dtype and set(r.tolist()) == {top - 3, top - 2, top - 1, top}
    info = np.iinfo(dtype)  # the whole range: every 64-bit pattern is possible
    full = jr.randint(KEY, (N,), int(info.min), top + 1, dtype)
    if dtype == np.int64:
        same = jr.randint(KEY, (N,), np.array(int(info.min)), np.array([top + 1], np.uint64),
                          dtype)
        np.testing.assert_array_equal(full, same)
    assert full.astype(np.float64).std() > 2**61

def test_permutation():
    p = jr.permutation(KEY, 100)
    assert sorted(p.tolist()) == list(range(100)) and p.tolist() != list(range(100))
    x = np.arange(20).reshape(4, 5)
    rows = jr.permutation(KEY, x)  # whole rows move
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, x.tolist()))
    cols = jr.permutation(KEY, x, axis=1)
    assert sorted(map(tuple, cols.T.tolist())) == sorted(map(tuple, x.T.tolist()))
    ind = jr.permutation(KEY, np.tile(np.arange(50), (6, 1)), axis=1, independent=True)
    assert all(sorted(r) == list(range(50)) for r in ind.tolist())
    assert len({tuple(r) for r in ind.tolist()}) == 6  # rows shuffled independently
    assert jr.permutation(KEY, 1).tolist() == [0] and jr.permutation(KEY, 0).shape == (0,)
    with pytest.raises(TypeError, match="0-d array"):
        jr.permutation(KEY, np.array(3.0))


def test_permutation_is_uniform():
    counts = np.zeros((4, 4))
    key = jr.PRNGKey(11)
    for k in jr.split(key, 4000):
        counts[np.arange(4), jr.permutation(k, 4)] += 1
    assert np.all(np.abs(counts / 4000 - 0.25) < 5 * math.sqrt(0.1875 / 4000))


def test_gumbel_moments():
    g = jr.gumbel(jr.PRNGKey(8), (N,), np.float64)
    assert abs(g.mean() - np.euler_gamma) < 0.01
    assert abs(g.var() - math.pi ** 2 / 6) < 0.03


def test_uniform_is_differentiable_in_bounds():
    f = lambda lo, hi: fnp.sum(jr.uniform(KEY, (1000,), np.float64, lo, hi))
    u = jr.uniform(KEY, (1000,), np.float64)
    glo, ghi = fnad.grad(f, argnums=(0, 1))(np.float64(-1.0), np.float64(2.0))
    np.testing.assert_allclose(glo, np.sum(1 - u))
    np.testing.assert_allclose(ghi, np.sum(u))


# ----------------------------------------------------------------------------- the math kernels

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reproducible_log_exp_are_accurate(dtype):
    x = np.geomspace(np.finfo(dtype).tiny, np.finfo(dtype).max / 16, 20001).astype(dtype)
    ref = np.log(x.astype(np.float64))
    err = np.abs(R.log(np, x) - ref) / np.maximum(1, np.abs(ref))
    assert err.max() < 2 * np.finfo(dtype).eps
    z = np.linspace(-80, 80, 20001).astype(dtype)
    ref = np.exp(z.astype(np.float64))
    assert (np.abs(R.exp(np, z) - ref) / ref).max() < 3 * np.finfo(dtype).eps


def test_erfinv_and_erf_accuracy():
    x = np.linspace(-6, 6, 2001)
    ref = np.vectorize(math.erf)(x)
    assert np.abs(R.erf(np, x) - ref).max() < 2e-7
    y = np.linspace(-0.999999, 0.999999, 2001)
    back = np.vectorize(math.erf)(R.erfinv(np, y))
    assert np.abs(back - y).max() < 1e-6
    assert R.erfinv(np, np.array([-1.0, 1.0])).tolist() == [-np.inf, np.inf]
