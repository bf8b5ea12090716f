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


# ----------------------------------------------------------------------------- edge points
# (issue 10, section 2: derivatives that were silently wrong, NaN or refused at one point)


def _nth(f, n):
    for _ in range(n):
        f = fnad.grad(f)
    return f


def test_power_zero_exponent_at_zero_like_torch():
    for f in (lambda v: v ** 0, lambda v: v ** 0.0, lambda v: fnp.power(v, np.zeros(()))):
        for n in (1, 2, 3):
            assert _nth(f, n)(0.0) == 0.0
        assert fnad.jvp(f, (0.0,), (1.0,))[1] == 0.0
    gx, gy = fnad.grad(lambda a, b: a ** b, argnums=(0, 1))(0.0, 0.0)
    (tx, ty) = tgrad(lambda a, b: a ** b, np.float64(0.0), np.float64(0.0))
    assert (gx, gy) == (tx, ty) == (0.0, 0.0)
    assert fnad.jvp(lambda a, b: a ** b, (0.0, 0.0), (1.0, 1.0))[1] == 0.0
    # away from x == 0 the y-derivative of the x-gradient is still log-exact: d/dy y x^(y-1)
    d2 = fnad.grad(lambda b: fnad.grad(lambda a: a ** b)(2.0))(0.0)
    np.testing.assert_allclose(d2, 0.5, rtol=1e-15)
    f = lambda v: v[0] ** v[1]
    np.testing.assert_array_equal(fnad.hessian(f)(np.zeros(2)), np.zeros((2, 2)))
    h = fnad.hessian(f)(np.array([2.0, 0.0]))  # symmetric (PyTorch's has 0 for one of them)
    np.testing.assert_allclose(h, [[0.0, 0.5], [0.5, np.log(2.0) ** 2]], rtol=1e-15)


def test_polynomial_features_at_zero():
    c = np.array([1.0, 2.0, 3.0, 4.0])  # 1 + 2x + 3x^2 + 4x^3: derivatives 2, 6, 24 at 0
    f = lambda v: fnp.sum(c * v ** np.arange(4))
    assert [_nth(f, n)(0.0) for n in (1, 2, 3)] == [2.0, 6.0, 24.0]
    (t,) = tgrad(lambda v: (torch.tensor(c) * v ** torch.arange(4)).sum(), np.float64(0.0))
    assert t == 2.0
    feats = lambda v: fnp.expand_dims(v, -1) ** np.arange(4) * c
    check_grads(feats, (np.array([0.0, 1.5, -0.5]),), order=3)


def _mul_at_reference(x, idx, v):
    """x times the factors of v landing on each position, as a product over a one-hot table
    (prod's gradient is exact at zeros)."""
    hit = np.arange(x.shape[0])[:, None] == idx[None, :]
    return x * fnp.prod(fnp.where(hit, v[None, :], 1.0), axis=1)


def test_at_multiply_repeated_indices_with_zero_factors():
    x = np.array([2.0, 3.0, 4.0, 5.0])
    idx = np.array([0, 0, 1, 0, 3, 3])
    for v in (np.array([0.0, 5.0, 2.0, 7.0, 0.0, 0.0]), np.array([0.0, 0.0, 0.0, 1.5, 2.0, 0.0]),
              np.array([3.0, 5.0, 2.0, 7.0, -1.0, 0.5])):
        f = lambda a, b: fnp.at(a)[idx].multiply(b)
        ref = lambda a, b: _mul_at_reference(a, idx, b)
        np.testing.assert_array_equal(f(x, v), ref(x, v))
        u = np.arange(1.0, 5.0)
        got = fnad.vjp(f, x, v)[1](u)
        want = fnad.vjp(ref, x, v)[1](u)
        for g, w in zip(got, want):
            assert np.all(np.isfinite(g))
            np.testing.assert_allclose(g, w, rtol=1e-14)
        t = (np.ones(4), np.linspace(-1.0, 1.0, 6))
        np.testing.assert_allclose(fnad.jvp(f, (x, v), t)[1], fnad.jvp(ref, (x, v), t)[1],
                                   rtol=1e-14)
        check_grads(f, (x, v), order=3)
    # several index arrays, and a factor broadcast over the indexed rows
    m = np.arange(1.0, 7.0).reshape(3, 2)
    rows, w = np.array([1, 1, 2]), np.array([[0.0, 2.0], [3.0, 0.0], [0.0, 0.0]])
    check_grads(lambda a, b: fnp.at(a)[rows].multiply(b), (m, w), order=2)
    check_grads(lambda b: fnp.at(m)[rows, np.array([0, 0, 1])].multiply(b),
                (np.array([0.0, 4.0, 0.0]),), order=2)
    check_grads(lambda b: fnp.at(m)[rows].multiply(b), (np.array([0.0, 3.0]),), order=2)


def test_cumprod_with_zeros_and_tiny_values():
    x = np.array([[2.0, 0.0, 3.0, 0.0, 0.5], [0.0, 1.5, -2.0, 4.0, 1.0]])
    for axis in (0, 1):
        jac = fnad.jacfwd(lambda v, _a=axis: fnp.cumprod(v, axis=_a))(x)
        tx = torch.tensor(x, requires_grad=True)
        tjac = torch.autograd.functional.jacobian(lambda v, _a=axis: torch.cumprod(v, _a), tx)
        assert np.all(np.isfinite(jac))
        np.testing.assert_allclose(jac, tjac.numpy(), rtol=1e-14)
        check_grads(lambda v, _a=axis: fnp.cumprod(v, axis=_a), (x,), order=3)
    # tiny factors: the quotient form's second derivative cancelled to errors of 1e51 here
    for v in (np.full(3, 6e-69), np.array([1e-230, 2.0, 1e-230])):
        check_grads(fnp.cumprod, (v,), order=3)
        check_grads(lambda a: fnp.prod(a) * a, (v,), order=3)


def test_sinc_every_order_at_zero():
    # sinc(x) = sum_k (-1)^k (pi x)^(2k) / (2k + 1)!: f''(0) = -pi^2/3, f''''(0) = pi^4/5
    c = [1.0, 0.0, -np.pi ** 2 / 3, 0.0, np.pi ** 4 / 5, 0.0, -np.pi ** 6 / 7, 0.0]
    for n in (1, 2, 3, 4):
        np.testing.assert_allclose(_nth(fnp.sinc, n)(0.0), c[n], rtol=1e-15)
        # stable next to 0 too (the closed form's cancellation gave garbage at 1e-6)
        for x in (1e-6, 1e-4):
            taylor = c[n] + c[n + 1] * x + c[n + 2] * x ** 2 / 2 + c[n + 3] * x ** 3 / 6
            np.testing.assert_allclose(_nth(fnp.sinc, n)(x), taylor, rtol=1e-8, atol=1e-12)
    check_grads(fnp.sinc, (np.array([0.0, 0.25, -1.0]),), order=3)
    t = torch.tensor([0.5], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(torch.sinc(t).sum(), t)
    np.testing.assert_allclose(fnad.grad(fnp.sinc)(0.5), g.item(), rtol=1e-14)


def test_point_conventions_at_orders_2_and_3(recwarn):
    """Rules that special-case a point keep their higher orders right there: the norm's
    Hessian at 0 is 0 (as abs''), not the identity; xlogy's y-gradient x / y has the
    x-derivative 1 / y at x == 0 (as PyTorch); sqrt'' at 0 is -inf; std at no spread,
    arctan2 and hypot at (0, 0) and p < 1 norms at a zero entry give 0, not NaN."""
    z = np.zeros(3)
    np.testing.assert_array_equal(fnad.hessian(lambda v: fnp.linalg.norm(v))(z),
                                  np.zeros((3, 3)))
    np.testing.assert_array_equal(fnad.hessian(lambda v: fnp.linalg.norm(v, 3))(z),
                                  np.zeros((3, 3)))
    assert _nth(fnp.abs, 2)(0.0) == 0.0 and _nth(fnp.abs, 3)(0.0) == 0.0
    assert _nth(fnp.sqrt, 2)(0.0) == -np.inf
    # 0 rather than NaN (inf * 0) where the spread or the radius is 0, to every order
    for f, tf, x0 in ((lambda v: fnp.std(v), lambda v: torch.std(v, correction=0), np.ones(3)),
                      (lambda v: fnp.sum(fnp.arctan2(v, v)), lambda v: torch.atan2(v, v).sum(),
                       np.zeros(2)),
                      (lambda v: fnp.linalg.norm(v, 0.5), lambda v: torch.linalg.vector_norm(
                          v, 0.5), np.array([0.0, 1.0]))):
        np.testing.assert_array_equal(fnad.grad(f)(x0), tgrad(tf, x0)[0])
        assert np.all(np.isfinite(fnad.hessian(f)(x0)))
    np.testing.assert_array_equal(fnad.grad(lambda v: fnp.sum(fnp.hypot(v, v)))(z), z)
    np.testing.assert_array_equal(fnad.grad(lambda v: fnp.nanstd(v))(np.array([1.0, np.nan])),
                                  [0, 0])
    special = pytest.importorskip("fnad.scipy.special")
    x, y = np.array([0.0, 0.0, 2.0]), np.array([0.0, 3.0, 3.0])
    for f, tf, shift in ((special.xlogy, torch.special.xlogy, 0.0),
                         (special.xlog1py, torch.special.xlog1py, -1.0)):
        gy = lambda a, b, _f=f: fnad.grad(lambda c: fnp.sum(_f(a, c)))(b)
        hyx = fnad.jacrev(gy)(x, y + shift)
        tx = torch.tensor(x, requires_grad=True)
        ty = torch.tensor(y + shift, requires_grad=True)
        (tgy,) = torch.autograd.grad(tf(tx, ty).sum(), ty, create_graph=True)
        thyx = [torch.autograd.grad(tgy[i], tx, retain_graph=True)[0].numpy()[1:]
                for i in (1, 2)]  # (PyTorch's entry at x == 0 == y is NaN)
        np.testing.assert_allclose(hyx[1:, 1:], thyx, rtol=1e-14)
        assert hyx[0, 0] == 0.0  # x == 0 == y (1 + y): the term vanishes, no inf
        check_grads(lambda a, b, _f=f: _f(a, b), (np.array([0.5, 2.0]), np.array([3.0, 3.0])),
                    order=3)


def _cofactor_matrix(a):
    n = a.shape[-1]
    c = np.zeros_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, -2), j, -1)
            c[..., i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return c


def test_det_at_singular_matrices():
    rng = np.random.default_rng(5)
    mats = [np.ones((2, 2)), np.outer([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]),
            np.arange(1.0, 10.0).reshape(3, 3), np.diag([1.0, 2.0, 0.0]),
            np.stack([np.eye(3), np.zeros((3, 3)), np.diag([1.0, 2.0, 0.0])]), np.zeros((1, 1))]
    for a in mats:
        assert np.all(np.linalg.det(a) == 0) or a.ndim == 3
        g = fnad.grad(lambda m: fnp.sum(fnp.linalg.det(m)))(a)
        np.testing.assert_allclose(g, _cofactor_matrix(a), atol=1e-12)
        t = rng.standard_normal(a.shape)
        _, jv = fnad.jvp(fnp.linalg.det, (a,), (t,))
        np.testing.assert_allclose(jv, np.sum(_cofactor_matrix(a) * t, axis=(-1, -2)),
                                   atol=1e-12)
        check_grads(fnp.linalg.det, (a,), order=3)
    # larger singular matrices take the SVD-based cofactors
    big = np.diag(np.arange(10.0)) @ rng.standard_normal((10, 10))
    assert np.linalg.det(big) == 0
    g = fnad.grad(fnp.linalg.det)(big)
    np.testing.assert_allclose(g, _cofactor_matrix(big), rtol=1e-9, atol=1e-9 * np.abs(g).max())
    # PyTorch agrees away from exact singularity (there it returns zeros, not the cofactors)
    near = np.ones((2, 2)) + np.diag([1e-3, 0.0])
    (t,) = tgrad(torch.linalg.det, near)
    np.testing.assert_allclose(fnad.grad(fnp.linalg.det)(near), t, rtol=1e-12)


def test_slogdet_inv_refuse_singular_matrices_clearly():
    a = np.ones((2, 3, 3))
    with pytest.raises(np.linalg.LinAlgError, match=r"slogdet.*singular.*\(2, 3, 3\)"):
        fnad.grad(lambda m: fnp.sum(fnp.linalg.slogdet(m)[1]))(a)
    with pytest.raises(np.linalg.LinAlgError, match=r"inv.*\(2, 3, 3\).*singular"):
        fnp.linalg.inv(a)
    sign, logdet = fnp.linalg.slogdet(a)  # the forward values stay NumPy's
    np.testing.assert_array_equal(sign, [0, 0])
    np.testing.assert_array_equal(logdet, [-np.inf, -np.inf])


def test_logsumexp_all_minus_inf():
    lse = _special("logsumexp")
    a = np.full((2, 3), -np.inf)
    for kw in ({}, {"axis": 1}, {"axis": 0, "keepdims": True}, {"b": np.ones(3)},
               {"b": np.ones(3), "axis": 1}):
        np.testing.assert_array_equal(lse(a, **kw), sc_logsumexp(a, **kw))
        g = fnad.grad(lambda v, _k=kw: fnp.sum(lse(v, **_k)))(a)
        np.testing.assert_array_equal(g, np.zeros((2, 3)))  # 0, not NaN (see its docstring)
    assert lse(np.full(3, -np.inf, np.float32)) == -np.inf
    np.testing.assert_array_equal(lse(a, b=np.ones(3), return_sign=True), (-np.inf, 0.0))


def sc_logsumexp(a, **kw):
    return pytest.importorskip("scipy.special").logsumexp(a, **kw)


def test_sort_ties_follow_the_stable_argsort():
    for x in (np.array([1.0, 1.0, 0.0, 0.0]), np.array([0.0, 1.0, 1.0, 1.0, 0.0]),
              np.random.default_rng(6).integers(0, 3, (3, 40)).astype(float)):
        w = np.arange(float(x.shape[-1]))
        g = fnad.grad(lambda v: fnp.sum(fnp.sort(v) * w))(x)
        order = np.argsort(x, axis=-1, kind="stable")
        np.testing.assert_array_equal(g, _placed(x, order, w))
        (t,) = tgrad(lambda v: (torch.sort(v, stable=True)[0] * torch.tensor(w)).sum(), x)
        np.testing.assert_array_equal(g, t)
        for kind in ("quicksort", "heapsort", "stable"):
            np.testing.assert_array_equal(
                fnad.grad(lambda v, _k=kind: fnp.sum(fnp.sort(v, kind=_k) * w))(x), g)
    g0 = fnad.grad(lambda v: fnp.sum(fnp.sort(v, axis=0) * np.arange(3.0)[:, None]))(
        np.zeros((3, 2)))
    np.testing.assert_array_equal(g0, [[0, 0], [1, 1], [2, 2]])


def _placed(x, order, w):
    """w[k] put where the k-th sorted entry came from."""
    out = np.zeros_like(x)
    np.put_along_axis(out, order, np.broadcast_to(w, x.shape), -1)
    return out
