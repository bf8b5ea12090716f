"""Complex numbers: NumPy's values, JAX's gradient convention, holomorphic=, check_grads with
complex directions, and clear errors where a complex input is not supported.

JAX's convention: vjp is the transpose of jvp under <u, v> = Re(sum(u * v)), so for a real
f of z = x + iy, grad(f)(z) = df/dx - i df/dy (grad of |z|^2 is 2 conj(z)); PyTorch's .grad
is the conjugate of that, which the parity test below checks to 1e-10.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fnad
import fnad.numpy as fnp
from fnad.test_util import check_grads

RNG = np.random.default_rng(150)


def _c(*shape, scale=1.0):
    return scale * (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape))


Z = _c(3, 4)
W = _c(4, 2)
X = RNG.standard_normal((3, 4))
SQ = _c(3, 3)


def _herm(a):
    return (a + fnp.conj(fnp.swapaxes(a, -1, -2))) / 2


# ----------------------------------------------------------------------------- the convention


def test_grad_of_abs_squared_is_twice_the_conjugate():
    z = np.array(1.0 + 2.0j)
    for f in (lambda z: fnp.abs(z) ** 2, lambda z: fnp.real(z * fnp.conj(z)),
              lambda z: fnp.real(z) ** 2 + fnp.imag(z) ** 2):
        assert fnad.grad(f)(z) == pytest.approx(2 * np.conj(z), abs=1e-14)


def test_grad_of_a_real_function_is_df_dx_minus_i_df_dy():
    z = Z[0]

    def f(z):
        return fnp.sum(fnp.sin(fnp.real(z)) * fnp.imag(z) ** 3)

    expected = np.cos(z.real) * z.imag ** 3 - 1j * 3 * np.sin(z.real) * z.imag ** 2
    np.testing.assert_allclose(fnad.grad(f)(z), expected, atol=1e-13)


def test_holomorphic_grad_and_jacobians_give_the_complex_derivative():
    z = Z[0]
    np.testing.assert_allclose(fnad.grad(lambda z: fnp.sum(fnp.sin(z)), holomorphic=True)(z),
                               np.cos(z), atol=1e-14)
    jr = fnad.jacrev(fnp.exp, holomorphic=True)(z)
    jf = fnad.jacfwd(fnp.exp, holomorphic=True)(z)
    np.testing.assert_allclose(jr, np.diag(np.exp(z)), atol=1e-14)
    np.testing.assert_allclose(jf, np.diag(np.exp(z)), atol=1e-14)
    h = fnad.hessian(lambda z: fnp.sum(z ** 3), holomorphic=True)(z)
    np.testing.assert_allclose(h, np.diag(6 * z), atol=1e-13)
    v, g = fnad.value_and_grad(lambda z: z ** 2, holomorphic=True)(z[0])
    assert v == pytest.approx(z[0] ** 2) and g == pytest.approx(2 * z[0])


def test_real_inputs_to_complex_intermediates_get_real_gradients():
    g = fnad.grad(lambda x: fnp.sum(fnp.abs(fnp.exp(1j * x) * x) ** 2))(X)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, 2 * X, atol=1e-13)  # |e^{ix} x|^2 = x^2


def test_grad_keeps_the_input_dtype():
    z64 = Z.astype(np.complex64)
    g = fnad.grad(lambda z: fnp.sum(fnp.abs(z)))(z64)
    assert g.dtype == np.complex64


# ----------------------------------------------------------------------------- errors


def test_complex_output_without_holomorphic_is_refused_naming_the_dtype():
    with pytest.raises(TypeError, match=r"grad requires real-valued outputs.*complex128.*"
                                        r"holomorphic=True"):
        fnad.grad(fnp.sin)(Z[0, 0])
    with pytest.raises(TypeError, match=r"jacrev requires real-valued outputs.*complex128"):
        fnad.jacrev(fnp.sin)(Z[0])
    with pytest.raises(TypeError, match=r"jacfwd requires real-valued inputs.*complex128"):
        fnad.jacfwd(fnp.abs)(Z[0])


def test_holomorphic_needs_complex_inputs_and_outputs():
    with pytest.raises(TypeError, match=r"grad with holomorphic=True requires inputs with "
                                        r"complex dtype, but got float64"):
        fnad.grad(fnp.sin, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match=r"requires outputs with complex dtype, but got float64"):
        fnad.grad(fnp.abs, holomorphic=True)(Z[0, 0])
    with pytest.raises(TypeError, match=r"jacrev with holomorphic=True requires inputs"):
        fnad.jacrev(fnp.sin, holomorphic=True)(X[0])
    with pytest.raises(TypeError, match=r"jacfwd with holomorphic=True requires outputs"):
        fnad.jacfwd(fnp.abs, holomorphic=True)(Z[0])


def test_unsupported_complex_derivatives_name_the_function_and_dtype():
    with pytest.raises(NotImplementedError, match=r"linalg\.qr: derivatives for complex "
                                                  r"inputs \(dtype complex128\)"):
        fnad.jvp(lambda a: fnp.linalg.qr(a)[0], (SQ,), (SQ,))


@pytest.mark.parametrize("name", ["hypot", "arctan2", "logaddexp", "fmod", "cbrt", "floor"])
def test_ops_without_a_complex_loop_name_the_function_and_dtype(name):
    f = getattr(fnp, name)
    fun = (lambda z: f(z)) if name in ("cbrt", "floor") else (lambda z: f(fnp.abs(z), z))
    with pytest.raises(TypeError, match=rf"fnad.numpy.{name}: complex inputs are not supported "
                                        r"\(NumPy has no .*complex128"):
        fnad.grad(lambda z: fnp.sum(fnp.abs(fun(z))))(Z)


# ----------------------------------------------------------------------------- values


def test_values_match_numpy():
    for name in ("abs", "real", "imag", "conj", "conjugate", "angle", "sqrt", "exp", "log",
                 "var", "std", "mean", "sum", "prod"):
        np.testing.assert_allclose(getattr(fnp, name)(Z), getattr(np, name)(Z), atol=1e-13)
    for args in [(Z,), (Z[0], 3), (Z, "fro"), (Z, 1), (Z[0], np.inf), (Z, "nuc")]:
        expected = np.linalg.norm(*args)
        got = fnad.jvp(lambda z: fnp.linalg.norm(z, *args[1:]), args[:1], args[:1])[0]
        assert got == pytest.approx(expected, rel=1e-13)
    v = fnad.jvp(lambda z: fnp.var(z, axis=0), (Z,), (Z,))[0]
    np.testing.assert_allclose(v, np.var(Z, axis=0), atol=1e-13)
    assert v.dtype == np.float64


def test_complex_predicates_and_real_if_close():
    assert fnp.iscomplexobj(Z) and not fnp.iscomplexobj(X) and fnp.isrealobj(X)
    assert not fnp.isrealobj(1j) and fnp.isrealobj(2.0)
    near = X + 1e-16j
    assert fnp.real_if_close(near).dtype == np.float64
    assert fnp.real_if_close(Z).dtype == np.complex128
    assert fnp.real_if_close(X) is X
    np.testing.assert_array_equal(fnp.real_if_close(near), np.real_if_close(near))
    g = fnad.grad(lambda x: fnp.sum(fnp.real_if_close(x * (1 + 1e-17j)) ** 2))(X)
    np.testing.assert_allclose(g, 2 * X, atol=1e-13)


# ----------------------------------------------------------------------------- check_grads

ELEMENTWISE = ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin",
               "arccos", "arctan", "arcsinh", "arctanh", "reciprocal", "square", "log1p",
               "expm1", "exp2", "log2", "log10", "abs", "real", "imag", "conj", "angle",
               "negative", "sinc"]


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_unary_ops_check_grads_with_complex_directions(name):
    z = Z * 0.4 + (0.1 + 0.2j)  # inside the unit disc, away from the branch cuts
    # a step of 1e-5: 1 / z near |z| = 0.22 curves too fast for 1e-4 at second order
    check_grads(getattr(fnp, name), (z,), order=2, eps=1e-5)


def test_arccosh_and_deg_angle():
    check_grads(fnp.arccosh, (Z * 0.3 + 2.0,), order=2)
    check_grads(lambda z: fnp.angle(z, deg=True), (Z,), order=2)


BINARY = [("add", Z, X), ("subtract", X, Z), ("multiply", Z, Z[::-1]),
          ("divide", Z, X + 3.0), ("divide", X, Z), ("power", Z * 0.5 + 1.0, Z[:, ::-1] * 0.3),
          ("maximum", Z, Z * 0.5 + 0.1), ("where", Z, X)]


@pytest.mark.parametrize("name, a, b", BINARY, ids=[f"{b[0]}{i}" for i, b in enumerate(BINARY)])
def test_binary_ops_check_grads_with_complex_directions(name, a, b):
    f = (lambda a, b: fnp.where(X > 0, a, b)) if name == "where" else getattr(fnp, name)
    check_grads(f, (a, b), order=2)


PRODUCTS = [
    ("matmul", fnp.matmul, (Z, W)), ("matmul real-complex", fnp.matmul, (X, W)),
    ("dot", fnp.dot, (Z, W)), ("vdot", fnp.vdot, (Z, Z[::-1])),
    ("inner", fnp.inner, (Z, Z)), ("outer", fnp.outer, (Z[0], X[1])),
    ("tensordot", lambda a, b: fnp.tensordot(a, b, axes=1), (Z, W)),
    ("einsum", lambda a, b: fnp.einsum("ij,jk->ik", a, b), (Z, W)),
    ("einsum trace", lambda a: fnp.einsum("ii", a), (SQ,)),
    ("kron", fnp.kron, (Z[:2, :2], W[:2])), ("vecdot", fnp.vecdot, (Z, Z[::-1])),
    ("cross", fnp.cross, (Z[:, :3], Z[:, 1:])),
]


@pytest.mark.parametrize("name, fun, args", PRODUCTS, ids=[p[0] for p in PRODUCTS])
def test_products_check_grads_with_complex_directions(name, fun, args):
    check_grads(fun, args, order=2)


REDUCTIONS = [
    ("sum", lambda z: fnp.sum(z, axis=0)), ("mean", lambda z: fnp.mean(z, axis=1)),
    ("prod", lambda z: fnp.prod(z, axis=1)), ("cumsum", lambda z: fnp.cumsum(z, 1)),
    ("cumprod", lambda z: fnp.cumprod(z, 0)), ("var", lambda z: fnp.var(z, axis=0, ddof=1)),
    ("std", fnp.std), ("norm", fnp.linalg.norm), ("norm 3", lambda z: fnp.linalg.norm(z[0], 3)),
    ("norm 1", lambda z: fnp.linalg.norm(z, 1, axis=1)),
    ("average", lambda z: fnp.average(z, axis=0, weights=np.arange(1.0, 4.0))),
    ("trace", fnp.trace), ("getitem", lambda z: z[1:, ::2]),
    ("take", lambda z: fnp.take(z, [0, 0, 5])),
    ("at add", lambda z: fnp.at(z)[0].add(z[1])), ("pad", lambda z: fnp.pad(z, 1)),
    ("concatenate", lambda z: fnp.concatenate([z, X])), ("transpose", lambda z: z.T),
]


@pytest.mark.parametrize("name, fun", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_reductions_and_shapes_check_grads_with_complex_directions(name, fun):
    check_grads(fun, (Z,), order=2)


LINALG = [
    ("inv", fnp.linalg.inv, 2), ("det", fnp.linalg.det, 2),
    ("solve", lambda a: fnp.linalg.solve(a, W[:3]), 2),
    ("slogdet", lambda a: fnp.linalg.slogdet(a), 2),
    ("eigvalsh", lambda a: fnp.linalg.eigvalsh(_herm(a)), 2),
    ("eigh values", lambda a: fnp.linalg.eigh(_herm(a))[0], 2),
    ("eigh projectors", lambda a: fnp.abs(fnp.linalg.eigh(_herm(a))[1]) ** 2, 2),
    ("cholesky", lambda a: fnp.linalg.cholesky(_herm(a) + 4 * np.eye(3)), 2),
    ("svdvals", fnp.linalg.svdvals, 2),
    ("nuclear norm", lambda a: fnp.linalg.norm(a, "nuc"), 2),
    ("matrix_power", lambda a: fnp.linalg.matrix_power(a, 3), 2),
    ("pinv", fnp.linalg.pinv, 2), ("pinv tall", lambda a: fnp.linalg.pinv(a[:, :2]), 2),
    ("pinv wide", lambda a: fnp.linalg.pinv(a[:2]), 2),
]


@pytest.mark.parametrize("name, fun, order", LINALG, ids=[r[0] for r in LINALG])
def test_linalg_check_grads_with_complex_directions(name, fun, order):
    check_grads(fun, (SQ,), order=order)


def test_svdvals_of_a_wide_complex_matrix():
    check_grads(fnp.linalg.svdvals, (Z,), order=2)


def _svd(a):
    return fnp.linalg.svd(a, full_matrices=False)


# Functions of the SVD that do not depend on the phase of each pair of singular vectors
# (the factors themselves do, and NumPy's phases are LAPACK's convention).
SVD_FUNS = {
    "|U|": lambda a: fnp.abs(_svd(a)[0]),
    "|Vh|": lambda a: fnp.abs(_svd(a)[2]),
    "S": lambda a: _svd(a)[1],
    "U Vh": lambda a: fnp.matmul(_svd(a)[0], _svd(a)[2]),
    "rank-1 part": lambda a: (lambda u, s, vh: fnp.matmul(u[..., :1] * s[..., None, :1],
                                                          vh[..., :1, :]))(*_svd(a)),
    "nuclear norm": lambda a: fnp.linalg.norm(a, "nuc", axis=(-2, -1)),
}
SVD_SHAPES = [(3, 3), (4, 3), (3, 5), (2, 4, 3), (2, 3, 4)]


@pytest.mark.parametrize("shape", SVD_SHAPES, ids=str)
@pytest.mark.parametrize("name", list(SVD_FUNS))
def test_complex_svd_check_grads(name, shape):
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    check_grads(SVD_FUNS[name], (a,), order=2, eps=1e-5)


def test_complex_svd_gradients_are_the_conjugate_of_torch_grad():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    for m, n in [(4, 3), (3, 4), (3, 3)]:
        k = min(m, n)
        a0 = rng.standard_normal((m, n)) + 1j * rng.standard_normal((m, n))
        wu, ws, wv, wa = (rng.standard_normal(sh) for sh in ((m, k), (k,), (k, n), (m, n)))

        def run(lib, a):
            if lib == "torch":
                (u, s, vh), f = torch.linalg.svd(a, full_matrices=False), torch
                nuc = torch.linalg.matrix_norm(a, "nuc")
                wts = [torch.tensor(x) for x in (wu, ws, wv, wa)]
            else:
                (u, s, vh), f, wts = _svd(a), fnp, (wu, ws, wv, wa)
                nuc = fnp.linalg.norm(a, "nuc")
            return (f.sum(f.abs(u) ** 3 * wts[0]) + f.sum(s * wts[1])
                    + f.sum(f.abs(vh) ** 3 * wts[2]) + nuc ** 2
                    + f.sum(f.abs((u @ vh) * wts[3]) ** 2))

        g = fnad.grad(lambda a: run("fnad", a))(a0)
        t = torch.tensor(a0, requires_grad=True)
        run("torch", t).backward()
        np.testing.assert_allclose(g, np.conj(t.grad.numpy()), rtol=1e-10, atol=1e-10)


# ----------------------------------------------------------------------------- PyTorch parity


def test_gradients_are_the_conjugate_of_torch_grad():
    torch = pytest.importorskip("torch")

    def loss(z, w, lib):
        f = fnp if lib == "fnad" else torch
        lin = (lambda a: fnp.linalg.slogdet(a)[1]) if lib == "fnad" else \
            (lambda a: torch.linalg.slogdet(a)[1])
        y = f.exp(z * 0.3) @ w
        y = y / (1 + f.abs(y)) + f.sqrt(z[:, :2] + 2)
        out = f.sum(f.abs(y) ** 2) + f.sum(f.angle(z)) + f.sum(f.real(f.conj(z) * z[[2, 1, 0]]))
        fz = (fnp.fft.fft(z, axis=0) if lib == "fnad" else torch.fft.fft(z, dim=0))
        return out + f.sum(f.imag(fz) ** 2) + lin(z[:, :3] + 3 * f.eye(3))

    g = fnad.grad(lambda z, w: loss(z, w, "fnad"), argnums=(0, 1))(Z, W)
    tz, tw = (torch.tensor(a, requires_grad=True) for a in (Z, W))
    torch_loss = loss(tz, tw, "torch")
    torch_loss.backward()
    assert float(torch_loss.detach()) == pytest.approx(float(loss(Z, W, "fnad")), rel=1e-12)
    np.testing.assert_allclose(g[0], np.conj(tz.grad.numpy()), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(g[1], np.conj(tw.grad.numpy()), rtol=1e-10, atol=1e-10)


TORCH_LINALG = ["inv", "det", "slogdet", "solve", "eigvalsh", "eigh", "cholesky", "pinv",
                "pinv wide", "norm"]


@pytest.mark.parametrize("name", TORCH_LINALG)
def test_linalg_gradients_are_the_conjugate_of_torch_grad(name):
    torch = pytest.importorskip("torch")
    a0 = _c(3, 3) + 2 * np.eye(3)
    w = np.arange(1.0, 10.0).reshape(3, 3)

    def run(lib, a):
        la = fnp.linalg if lib == "fnad" else torch.linalg
        f = fnp if lib == "fnad" else torch
        h = (a + f.conj(a).transpose(-1, -2) if lib == "torch" else a + fnp.conj(a).T) / 2
        out = {"inv": lambda: la.inv(a), "det": lambda: la.det(a),
               "slogdet": lambda: la.slogdet(a)[0] * la.slogdet(a)[1],
               "solve": lambda: la.solve(a, a[:, :2] * 0.5 + 1.0),
               "eigvalsh": lambda: la.eigvalsh(h), "eigh": lambda: f.abs(la.eigh(h)[1]) ** 2,
               "cholesky": lambda: la.cholesky(h + 5 * f.eye(3)), "pinv": lambda: la.pinv(a),
               "pinv wide": lambda: la.pinv(a[:2]),
               "norm": lambda: la.norm(a) + la.norm(a[0], 3)}[name]()
        ws = w[:out.shape[0], :out.shape[1]] if out.ndim == 2 else w[0, :int(np.prod(out.shape))]
        return f.sum(f.abs(out * (ws if lib == "fnad" else torch.tensor(ws))) ** 2)

    g = fnad.grad(lambda a: run("fnad", a))(a0)
    t = torch.tensor(a0, requires_grad=True)
    run("torch", t).backward()
    np.testing.assert_allclose(g, np.conj(t.grad.numpy()), rtol=1e-10, atol=1e-10)


@settings(deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 2 ** 16))
def test_complex_svd_vjp_is_the_transpose_of_jvp(m, n, seed):
    """Random complex matrices of any shape: for the phase-invariant parts |U|, S, |Vh| and
    U Vh, <u, J t> = <J^T u, t> (the gauge term cancels in them)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, n)) + 1j * rng.standard_normal((m, n))

    def f(a):
        u, s, vh = _svd(a)
        return fnp.abs(u), s, fnp.abs(vh), fnp.real(u @ vh), fnp.imag(u @ vh)

    out, f_vjp = fnad.vjp(f, a)
    us = tuple(rng.standard_normal(np.shape(o)) for o in out)
    t = rng.standard_normal((m, n)) + 1j * rng.standard_normal((m, n))
    _, jt = fnad.jvp(f, (a,), (t,))
    lhs = sum(float(np.sum(u * j)) for u, j in zip(us, jt))
    rhs = float(np.real(np.sum(f_vjp(us)[0] * t)))
    assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs))
