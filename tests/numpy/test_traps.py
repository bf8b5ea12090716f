"""Known traps of array autodiff, one test each (conventions are listed in
docs/gradcheck.md, written by tools/gradcheck_report.py)."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad.test_util import check_grads

torch = pytest.importorskip("torch")


def tgrad(f, *arrays):
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    f(*ts).backward()
    return [t.grad.numpy() for t in ts]


def test_interior_size1_broadcast():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((4, 1, 3)), rng.standard_normal((4, 5, 3))
    for op in ("add", "multiply", "maximum", "subtract"):
        f = lambda a, b, _op=op: fnp.sum(getattr(fnp, _op)(a, b) ** 2)
        gx, gy = fnad.grad(f, argnums=(0, 1))(x, y)
        tx, ty = tgrad(lambda a, b, _op=op: (getattr(torch, _op)(a, b) ** 2).sum(), x, y)
        assert gx.shape == (4, 1, 3) and gy.shape == (4, 5, 3)
        np.testing.assert_allclose(gx, tx, rtol=1e-12)
        np.testing.assert_allclose(gy, ty, rtol=1e-12)
    check_grads(lambda a, b: fnp.where(b > 0, a, b) * a, (x, y), order=2)


def test_repeated_indices_accumulate():
    x = np.arange(4.0)
    idx = np.array([0, 0, 2, 0])
    np.testing.assert_array_equal(fnad.grad(lambda v: fnp.sum(v[idx]))(x), [3, 0, 1, 0])
    np.testing.assert_array_equal(fnad.grad(lambda v: fnp.sum(fnp.take(v, idx)))(x),
                                  [3, 0, 1, 0])
    w = np.ones((3, 2))
    ids = np.array([[1, 1], [1, 0]])
    np.testing.assert_array_equal(fnad.grad(lambda m: fnp.sum(fnp.take(m, ids, axis=0)))(w),
                                  [[1, 1], [3, 3], [0, 0]])
    # at[...].add accumulates in the forward pass too; set keeps NumPy's last-write rule.
    np.testing.assert_array_equal(fnp.at(x)[idx].add(1.0), [3, 1, 3, 3])
    gv = fnad.grad(lambda v: fnp.sum(fnp.at(x)[idx].add(v) * np.arange(4.0)))(np.ones(4))
    np.testing.assert_array_equal(gv, [0, 0, 2, 0])


def test_take_along_axis_repeats():
    x = np.random.default_rng(1).standard_normal((2, 3))
    idx = np.array([[0, 0, 0], [2, 1, 2]])
    g = fnad.grad(lambda v: fnp.sum(fnp.take_along_axis(v, idx, 1) * 2.0))(x)
    np.testing.assert_array_equal(g, [[6, 0, 0], [0, 2, 4]])


def test_max_ties_split_equally_like_torch():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    for name, tname in (("max", "amax"), ("amax", "amax"), ("min", "amin"), ("amin", "amin")):
        for axis in (None, 1, 0):
            f = lambda v, _n=name, _a=axis: fnp.sum(getattr(fnp, _n)(v, axis=_a) * 1.5)
            tdim = tuple(range(2)) if axis is None else axis
            (t,) = tgrad(lambda v, _t=tname, _d=tdim: (getattr(torch, _t)(v, dim=_d) * 1.5).sum(),
                         x)
            np.testing.assert_allclose(fnad.grad(f)(x), t, rtol=1e-14)
    np.testing.assert_allclose(fnad.grad(lambda v: fnp.max(v))(x), tgrad(torch.max, x)[0])


def test_maximum_minimum_ties_half_each_like_torch():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 3.0])
    for op in ("maximum", "minimum", "fmax", "fmin"):
        gx, gy = fnad.grad(lambda a, b, _op=op: fnp.sum(getattr(fnp, _op)(a, b)),
                           argnums=(0, 1))(x, y)
        tx, ty = tgrad(lambda a, b, _op=op: getattr(torch, _op)(a, b).sum(), x, y)
        np.testing.assert_array_equal(gx, tx)
        np.testing.assert_array_equal(gy, ty)
    np.testing.assert_array_equal(fnad.grad(lambda a: fnp.sum(fnp.maximum(a, 2.0)))(x),
                                  [0, 0.5, 1])


def test_clip_at_bounds_like_torch():
    x = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    g = fnad.grad(lambda v: fnp.sum(fnp.clip(v, -0.5, 0.5)))(x)
    np.testing.assert_array_equal(g, tgrad(lambda v: torch.clamp(v, -0.5, 0.5).sum(), x)[0])


def test_abs_sqrt_norm_at_zero(recwarn):
    z = np.zeros(3)
    np.testing.assert_array_equal(fnad.grad(lambda v: fnp.sum(fnp.abs(v)))(z), [0, 0, 0])
    np.testing.assert_array_equal(fnad.grad(lambda v: fnp.sum(fnp.sqrt(v)))(z), [np.inf] * 3)
    np.testing.assert_array_equal(fnad.grad(lambda v: fnp.linalg.norm(v))(z), [0, 0, 0])
    np.testing.assert_array_equal(fnad.grad(lambda v: fnp.sum(fnp.abs(v) ** 2))(z), [0, 0, 0])
    t = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    torch.linalg.norm(t).backward()
    np.testing.assert_array_equal(t.grad.numpy(), [0, 0, 0])
    # the gradient of sqrt at a positive point is unaffected by the zero handling
    np.testing.assert_allclose(fnad.grad(lambda v: fnp.sum(fnp.sqrt(v)))(np.full(3, 4.0)), 0.25)


def test_prod_cumprod_exact_at_zeros():
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0]])
    (t,) = tgrad(lambda v: (torch.prod(v, 1) * torch.tensor([1.0, 2.0],
                                                            dtype=torch.float64)).sum(), x)
    g = fnad.grad(lambda v: fnp.sum(fnp.prod(v, axis=1) * np.array([1.0, 2.0])))(x)
    np.testing.assert_array_equal(g, t)
    np.testing.assert_array_equal(g, [[0, 6, 0], [0, 0, 0]])
    check_grads(lambda v: fnp.prod(v, axis=1), (x,), order=2)
    check_grads(lambda v: fnp.cumprod(v, axis=1), (x,), order=2)


def _special(name):
    special = pytest.importorskip("fnad.scipy.special")
    if not hasattr(special, name):
        pytest.skip(f"fnad.scipy.special.{name} does not exist yet")
    return getattr(special, name)


@pytest.mark.parametrize("scale", [1e4, -1e4])
def test_logsumexp_softmax_stable_at_1e4(scale):
    lse = _special("logsumexp")
    softmax = _special("softmax")
    x = scale * np.array([1.0, 0.5, 1.0]) + np.array([0.0, 0.0, 1e-3])
    v, g = fnad.value_and_grad(lambda a: lse(a))(x)
    (tg,) = tgrad(lambda a: torch.logsumexp(a, 0), x)
    assert np.isfinite(v) and np.all(np.isfinite(g))
    np.testing.assert_allclose(g, tg, rtol=1e-12, atol=1e-300)
    s = softmax(x)
    assert np.all(np.isfinite(s)) and abs(np.sum(s) - 1) < 1e-12
    np.testing.assert_allclose(fnp.logsumexp(x), torch.logsumexp(torch.tensor(x), 0).item(),
                               rtol=1e-15)


def test_boolean_mask_indexing():
    x = np.random.default_rng(2).standard_normal((3, 4))
    mask = x > 0
    g = fnad.grad(lambda v: fnp.sum(v[mask] ** 2))(x)
    np.testing.assert_allclose(g, np.where(mask, 2 * x, 0.0))
    g2 = fnad.grad(lambda v: fnp.sum(v[np.array([True, False, True])] * 3.0))(x)
    np.testing.assert_array_equal(g2, [[3] * 4, [0] * 4, [3] * 4])
    check_grads(lambda v: v[mask] * v[mask], (x,), order=2)


def test_negative_strides_and_flips():
    base = np.random.default_rng(3).standard_normal((4, 6))
    x = base[::-1, ::2]  # a negative-stride view as input
    assert x.strides[0] < 0
    g = fnad.grad(lambda v: fnp.sum(v[::-1, 1::2] * np.arange(4.0)[:, None]))(x)
    expect = np.zeros((4, 3))
    expect[:, 1::2] = np.arange(4.0)[::-1, None]
    np.testing.assert_array_equal(g, expect)
    for f in (lambda v: fnp.flip(v), lambda v: fnp.flipud(v) * fnp.fliplr(v),
              lambda v: fnp.rot90(v, 3), lambda v: v[::-2, ::-1]):
        check_grads(f, (x,), order=2)


def test_einsum_repeated_and_ellipsis_like_torch():
    rng = np.random.default_rng(4)
    m, v = rng.standard_normal((3, 3)), rng.standard_normal((2, 3, 3))
    for spec, args in (("ii->i", (m,)), ("ii", (m,)), ("...ii->...i", (v,)),
                       ("bi...,bi...->b...", (v, v)), ("...ij,jk->...ik", (v, m)),
                       ("iij->j", (np.stack([m] * 2, -1),))):
        out = fnp.einsum(spec, *args)
        np.testing.assert_allclose(out, np.einsum(spec, *args), rtol=1e-13)
        gs = fnad.grad(lambda *a, _s=spec: fnp.sum(fnp.einsum(_s, *a) ** 2),
                       argnums=tuple(range(len(args))))(*args)
        ts = tgrad(lambda *a, _s=spec: (torch.einsum(_s, *a) ** 2).sum(), *args)
        for g, t in zip(gs, ts):
            np.testing.assert_allclose(g, t, rtol=1e-12)
        check_grads(lambda *a, _s=spec: fnp.einsum(_s, *a), args, order=2)


def test_real_only_rules():
    """Derivatives are defined for real inputs: real/conj pass the gradient, imag/angle
    give zero. Complex arrays still compute NumPy's forward values."""
    x = np.array([-1.5, 0.5, 2.0])
    for name, expect in (("real", 1.0), ("conj", 1.0), ("imag", 0.0), ("angle", 0.0)):
        g = fnad.grad(lambda v, _n=name: fnp.sum(getattr(fnp, _n)(v)))(x)
        np.testing.assert_array_equal(g, np.full(3, expect))
    z = np.array([1 + 2j, -3j])
    np.testing.assert_array_equal(fnp.angle(z), np.angle(z))
    np.testing.assert_array_equal(fnp.exp(z), np.exp(z))


def test_nep50_scalars_and_0d():
    x32 = np.ones(3, np.float32)
    assert (fnp.multiply(x32, 2.0)).dtype == np.float32
    assert fnad.grad(lambda v: fnp.sum(v * 2.0 + 1))(x32).dtype == np.float32
    assert fnp.sin(0.5) == np.sin(0.5)
    assert fnad.grad(fnp.sin)(0.5) == np.cos(0.5)
    g = fnad.grad(lambda v: fnp.sum(fnp.reshape(v, (1,)) * 3.0))(np.float64(2.0))
    assert np.shape(g) == () and g == 3.0
    assert fnp.sum(np.arange(3)).dtype == np.sum(np.arange(3)).dtype
