"""Short backward programs (issue 30, item 2): logsumexp's gradient is one primitive, and the
gradients of slices that tile an axis are one concatenate; jit keeps eager's bits."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from tests.core import jit_fuzz

torch = pytest.importorskip("torch")

BACKENDS = [b for b in jit_fuzz.BACKENDS if b != "numexpr"]  # numexpr's tanh is not exact


def _bits(a):
    a = np.asarray(a)
    return a.dtype, a.shape, a.tobytes()


def _rows(dtype=np.float64, seed=0):
    """Rows with the awkward values: all -inf, some -inf, NaN, +inf, large."""
    a = np.random.default_rng(seed).standard_normal((6, 7)).astype(dtype)
    a[1] = -np.inf
    a[2, 3] = np.nan
    a[3, 2] = np.inf
    a[4, :3] = -np.inf
    a[5] *= 1e4
    return a


# ----------------------------------------------------------------------------- logsumexp


def test_logsumexp_gradient_is_one_equation():
    # before: 17 equations under jit (softmax re-derived, two full-size zero fills)
    x = np.random.default_rng(0).standard_normal((64, 65)).astype(np.float32)
    f = fnad.jit(fnad.grad(lambda x: fnp.sum(fnp.logsumexp(x, axis=-1))))
    f(x)
    assert f.graph(x).primitive_counts() == {"logsumexp_weight": 1}
    staged = fnad.make_graph(fnad.grad(lambda x: fnp.sum(fnp.logsumexp(x, axis=-1) * 2.0)))(x)
    assert "zeros_like" not in staged.primitive_counts() and len(staged.eqns) <= 6


@pytest.mark.parametrize("axis, keepdims", [(-1, False), (0, True), (None, False),
                                            ((0, 1), True), (1, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logsumexp_gradient_bits_eager_equal_jit(axis, keepdims, dtype):
    x = _rows(dtype)

    def loss(x):
        return fnp.sum(fnp.logsumexp(x, axis=axis, keepdims=keepdims) * 1.5)

    with np.errstate(invalid="ignore", over="ignore"):  # the +inf row: inf - inf, as NumPy
        want = fnad.grad(loss)(x)
        for backend in BACKENDS:
            with jit_fuzz._setting(backend):
                assert _bits(fnad.jit(fnad.grad(loss))(x)) == _bits(want), backend
                assert _bits(fnad.grad(fnad.jit(loss))(x)) == _bits(want), backend
    if axis == -1:
        assert np.all(want[1] == 0) and np.all(want[4, :3] == 0)  # no NaN from -inf rows


def test_logsumexp_gradient_is_softmax_and_zero_on_dead_rows():
    x = _rows()[[0, 1, 4, 5]]
    g = fnad.grad(lambda x: fnp.sum(fnp.logsumexp(x, axis=1)))(x)
    want = torch.softmax(torch.tensor(x), 1).numpy()
    want[1] = 0.0
    np.testing.assert_allclose(g, want, rtol=1e-15, atol=0)


@pytest.mark.parametrize("axis, keepdims", [(-1, False), (0, True), (None, False)])
def test_logsumexp_hessian_matches_torch(axis, keepdims):
    x = np.random.default_rng(1).standard_normal((3, 4)) * 3.0
    w = np.random.default_rng(2).standard_normal(
        np.shape(np.sum(x, axis=axis, keepdims=keepdims)))

    def loss(x):
        return fnp.sum(fnp.logsumexp(x, axis=axis, keepdims=keepdims) * w)

    def tloss(t):
        dims = tuple(range(t.ndim)) if axis is None else axis
        return (torch.logsumexp(t, dims, keepdim=keepdims) * torch.tensor(w)).sum()

    h = fnad.hessian(loss)(x)
    th = torch.autograd.functional.hessian(tloss, torch.tensor(x)).numpy()
    np.testing.assert_allclose(h, th, rtol=1e-12, atol=1e-14)
    assert _bits(fnad.jit(fnad.hessian(loss))(x)) == _bits(h)
    # the third derivative, against finite differences of the hessian
    t = np.random.default_rng(3).standard_normal(x.shape)
    _, dh = fnad.jvp(fnad.hessian(loss), (x,), (t,))
    eps = 1e-5
    fd = (fnad.hessian(loss)(x + eps * t) - fnad.hessian(loss)(x - eps * t)) / (2 * eps)
    np.testing.assert_allclose(dh, fd, rtol=1e-6, atol=1e-8)


def test_logsumexp_hessian_on_dead_and_infinite_rows():
    x = _rows()[[0, 1, 4]]
    h = fnad.hessian(lambda x: fnp.sum(fnp.logsumexp(x, axis=1)))(x)
    assert np.all(h[1] == 0) and np.all(h[:, :, 1] == 0)  # the all -inf row: no derivative
    th = torch.autograd.functional.hessian(
        lambda t: torch.logsumexp(t[[0, 2]], 1).sum(), torch.tensor(x)).numpy()
    np.testing.assert_allclose(h[[0, 2]][:, :, [0, 2]], th[[0, 2]][:, :, [0, 2]], rtol=1e-12,
                               atol=1e-15)


def test_logsumexp_gradient_under_vmap_and_jvp():
    x = np.random.default_rng(4).standard_normal((5, 3, 4))
    grad = fnad.grad(lambda x: fnp.sum(fnp.logsumexp(x, axis=-1)))
    batched = fnad.vmap(grad)(x)
    for i in range(5):
        assert _bits(batched[i]) == _bits(grad(x[i]))
    t = np.ones_like(x)
    _, dt = fnad.jvp(lambda x: fnp.logsumexp(x, axis=(1, 2)), (x,), (t * 0.5,))
    np.testing.assert_allclose(dt, 0.5, rtol=1e-14)


# ----------------------------------------------------------------------------- tiling slices

D = 4


def _qkv(x):
    q, k, v = x[..., :D], x[..., D:2 * D], x[..., 2 * D:]
    return q * 2.0, k * k, -v


def _split(x):
    q, k, v = fnp.split(x, 3, axis=1)
    return q * 2.0, k * k, -v


def _cotangents(shape, n=3):
    cts = []
    for i in range(n):
        c = np.random.default_rng(10 + i).standard_normal(shape)
        c[0, 0, 0] = -0.0  # eager adds zeros: -0.0 + 0.0 is +0.0, and so must jit
        c[0, 1, 1], c[1, 0, 2], c[1, 1, 1] = np.nan, -np.inf, 0.0
        cts.append(c)
    return tuple(cts)


@pytest.mark.parametrize("f, x_shape, ct_shape", [(_qkv, (2, 3, 3 * D), (2, 3, D)),
                                                  (_split, (2, 3 * D, 5), (2, D, 5))])
def test_slice_gradients_join_into_one_concatenate(f, x_shape, ct_shape):
    # before: three full-size scatters into zeros and two adds
    x = np.random.default_rng(5).standard_normal(x_shape)

    def pull(x, ct):
        return fnad.vjp(f, x)[1](ct)[0]

    ct = _cotangents(ct_shape)
    with np.errstate(invalid="ignore"):
        want = pull(x, ct)
        for backend in BACKENDS:
            with jit_fuzz._setting(backend):
                jitted = fnad.jit(pull)
                assert _bits(jitted(x, ct)) == _bits(want), backend
                counts = jitted.graph(x, ct).primitive_counts()
                assert "gather_transpose" not in counts and counts["concatenate"] == 1, counts
    assert np.signbit(want[0, 0, 0]) == 0  # the -0.0 cotangent came back as +0.0


@pytest.mark.parametrize("pieces", [
    lambda x: (x[..., :5], x[..., 4:]),                 # overlapping
    lambda x: (x[..., :4], x[..., 6:]),                 # a gap
    lambda x: (x[..., ::2], x[..., 1::2]),              # strided
    lambda x: (x[:1, :, :6], x[1:, :, 6:]),             # two axes
    lambda x: (x[..., :6], x[..., 6:], x[..., 6:]),     # one slice twice
], ids=["overlap", "gap", "strided", "two-axes", "twice"])
def test_slices_that_do_not_tile_keep_their_scatters(pieces):
    x = np.random.default_rng(6).standard_normal((2, 3, 12))

    def loss(x):
        return sum(fnp.sum(fnp.sin(p) * (i + 1.0)) for i, p in enumerate(pieces(x)))

    want = fnad.grad(loss)(x)
    jitted = fnad.jit(fnad.grad(loss))
    assert _bits(jitted(x)) == _bits(want)
    assert "concatenate" not in jitted.graph(x).primitive_counts()


def test_a_partial_sum_read_elsewhere_is_left_alone():
    x = np.random.default_rng(7).standard_normal((3, 12))

    def pull(x, ct):
        return fnad.vjp(lambda x: (x[:, :6] * 2.0, x[:, 6:] * 3.0), x)[1](ct)[0]

    ct = (np.ones((3, 6)), np.full((3, 6), -0.0))
    want = pull(x, ct)
    got = fnad.jit(lambda x, ct: (pull(x, ct), pull(x, ct) * 2.0))(x, ct)
    assert _bits(got[0]) == _bits(want) and _bits(got[1]) == _bits(want * 2.0)


def test_where_gradient_fills_no_full_size_zeros():
    # before: where's VJP (and clip's, divide's at 0, ...) wrote zeros_like(g) in full
    x = np.random.default_rng(8).standard_normal((4, 5))
    mask = np.tril(np.ones((4, 5), bool))

    def loss(x):
        return fnp.sum(fnp.exp(fnp.where(mask, x, -np.inf)) + fnp.where(mask, x * x, 1.0))

    graph = fnad.make_graph(fnad.grad(loss))(x)
    assert all(e.outvars[0].aval.shape == () for e in graph.eqns
               if e.prim.name == "zeros_like")
    want = fnad.grad(loss)(x)
    assert _bits(fnad.jit(fnad.grad(loss))(x)) == _bits(want)
    np.testing.assert_array_equal(want, np.where(mask, np.exp(x) + 2 * x, 0.0))
