"""Issue 10, section 3: misuse gets a clear error (as JAX does), and the cases that should
simply work (duplicate argnums, Python floats, keyword arguments, nondiff_argnums) do."""

import re

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad import UnexpectedTracerError

# ----------------------------------------------------------------------------- argnums


def test_duplicate_argnums_each_get_the_gradient():
    # JAX and PyTorch: (2., 2.); before the fix the first copy lost its gradient (0.)
    g = fnad.grad(lambda x, y: x * y, argnums=(0, 0))(3.0, 2.0)
    assert g == (2.0, 2.0)
    g = fnad.grad(lambda x, y: x * y, argnums=(1, 0, 1))(3.0, 2.0)
    assert g == (3.0, 2.0, 3.0)
    v, g = fnad.value_and_grad(lambda x: x ** 2, argnums=(0, 0))(3.0)
    assert v == 9.0 and g == (6.0, 6.0)
    assert fnad.jacrev(lambda x, y: x * y, argnums=(0, 0))(3.0, 2.0) == (2.0, 2.0)
    assert fnad.jacfwd(lambda x, y: x * y, argnums=(0, 1, 0))(3.0, 2.0) == (2.0, 3.0, 2.0)


@pytest.mark.parametrize("bad", [0.0, "0", None, (0, 1.0)])
def test_argnums_not_ints(bad):
    for transform in (fnad.grad, fnad.jacrev, fnad.jacfwd):
        with pytest.raises(TypeError, match="argnums must be an int or a tuple of ints"):
            transform(lambda x, y: x * y, argnums=bad)(1.0, 2.0)


# ----------------------------------------------------------------------------- grad outputs


@pytest.mark.parametrize("out, what", [
    (lambda x: x * (1 + 1j), "complex128"),
    (lambda x: None, "None"),
    (lambda x: "loss", "str"),
])
def test_grad_of_complex_none_or_string_output(out, what):
    with pytest.raises(TypeError, match=what):
        fnad.grad(out)(3.0)


# ----------------------------------------------------------------------------- jvp tangents


@pytest.mark.parametrize("tangent", [np.ones(2, np.int64), np.ones(2, np.complex128)])
def test_jvp_tangent_dtype_must_match_primal(tangent):
    with pytest.raises(TypeError, match=f"float64.*{tangent.dtype}"):
        fnad.jvp(fnp.sin, (np.ones(2),), (tangent,))


def test_jvp_tangent_of_another_float_precision_takes_primal_dtype():
    # fnad.random's float32 draws meet NumPy's float64 data (docs/coming-from-jax.md)
    _, t = fnad.jvp(fnp.sin, (np.ones(2),), (np.ones(2, np.float32),))
    assert t.dtype == np.float64


def test_jvp_python_scalar_tangent_takes_primal_dtype():
    x = np.float32(0.5)
    y, t = fnad.jvp(fnp.sin, (x,), (1.0,))
    assert t.dtype == np.float32 and t == pytest.approx(np.cos(0.5), rel=1e-6)


# ----------------------------------------------------------------------------- escaped tracers


def test_escaped_tracer_used_after_grad_raises():
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2.0

    assert fnad.grad(f)(1.0) == 2.0
    (t,) = leaked
    with pytest.raises(UnexpectedTracerError, match="multiply.*created inside grad"):
        t * 2.0
    with pytest.raises(UnexpectedTracerError, match="grad"):
        fnp.sin(t)
    with pytest.raises(UnexpectedTracerError, match="float"):
        float(t)
    with pytest.raises(UnexpectedTracerError):
        bool(t)
    # inside a later grad: before the fix this silently returned a tracer
    with pytest.raises(UnexpectedTracerError, match="grad"):
        fnad.grad(lambda y: y * t)(1.0)
    with pytest.raises(UnexpectedTracerError, match="grad"):
        fnad.grad(lambda y: t * y)(1.0)
    repr(t)  # printing it still works


def test_escaped_tracer_names_its_transform():
    leaked = []

    def f(x):
        leaked.append(x)
        return fnp.sin(x)

    fnad.jvp(f, (1.0,), (1.0,))
    fnad.vjp(f, 1.0)
    fnad.jacrev(f)(1.0)
    fnad.checkpoint(f)(1.0)  # no trace: runs f itself
    fnad.grad(fnad.checkpoint(f))(1.0)  # the last call: rerun under vjp in the backward pass
    jvp_t, vjp_t, jacrev_t, ck_t = leaked[:3] + leaked[-1:]
    for t, name in [(jvp_t, "jvp"), (vjp_t, "vjp"), (jacrev_t, "vjp"),
                    (ck_t, "checkpoint")]:
        with pytest.raises(UnexpectedTracerError, match=f"inside {name}[ (]"):
            t + 1.0


def test_escaped_tracer_into_custom_vjp_and_checkpoint():
    leaked = []
    fnad.grad(lambda x: leaked.append(x) or x)(1.0)

    @fnad.custom_vjp
    def f(x):
        return x

    f.defvjp(lambda x: (x, None), lambda _, g: (g,))
    with pytest.raises(UnexpectedTracerError):
        f(leaked[0])
    with pytest.raises(UnexpectedTracerError):
        fnad.checkpoint(fnp.sin)(leaked[0])


def test_inner_tracer_escaping_into_outer_grad_raises():
    leaked = []

    def outer(x):
        fnad.grad(lambda y: leaked.append(y) or y * x)(x)
        return leaked[0] * x

    with pytest.raises(UnexpectedTracerError):
        fnad.grad(outer)(2.0)


def test_values_returned_from_transforms_and_stop_gradient_are_fine():
    kept = []

    def f(x):
        kept.append(fnad.stop_gradient(x))
        return fnp.sin(x), x * 3.0

    g, aux = fnad.grad(f, has_aux=True)(0.5)
    assert g == pytest.approx(np.cos(0.5)) and float(aux) == 1.5 and kept[0] * 2 == 1.0
    assert fnad.grad(fnad.grad(fnp.sin))(0.5) == pytest.approx(-np.sin(0.5))


# ----------------------------------------------------------------------------- custom_vjp


def _sin_with_bwd(bwd):
    @fnad.custom_vjp
    def f(x):
        return fnp.sin(x)

    f.defvjp(lambda x: (fnp.sin(x), fnp.cos(x)), bwd)
    return f


@pytest.mark.parametrize("ct_shape", [(1,), (2,), (3, 1), ()])
def test_custom_vjp_bwd_wrong_cotangent_shape(ct_shape):
    f = _sin_with_bwd(lambda c, g: (np.ones(ct_shape),))
    with pytest.raises(ValueError, match=re.escape(f"shape {ct_shape}") + r".*shape \(3,\)"):
        fnad.grad(lambda x: fnp.sum(f(x)))(np.ones(3))


def test_custom_vjp_bwd_wrong_count():
    f = _sin_with_bwd(lambda c, g: (g * c, g))
    with pytest.raises(TypeError, match="one cotangent per argument"):
        fnad.grad(lambda x: fnp.sum(f(x)))(np.ones(3))


@pytest.mark.parametrize("mode", ["jvp", "jacfwd", "hessian"])
def test_custom_vjp_refuses_forward_mode(mode):
    f = _sin_with_bwd(lambda c, g: (g * c,))
    with pytest.raises(TypeError, match="forward-mode.*custom_vjp"):
        if mode == "jvp":
            fnad.jvp(f, (1.0,), (1.0,))
        else:
            getattr(fnad, mode)(f)(1.0)
    # reverse over reverse works
    assert fnad.grad(fnad.grad(f))(0.3) == pytest.approx(-np.sin(0.3))
    assert fnad.jacrev(fnad.jacrev(f))(0.3) == pytest.approx(-np.sin(0.3))


def test_custom_vjp_nondiff_argnums_jax_signature():
    seen = []

    def apply(fn, x, scale):
        return fn(x) * scale

    f = fnad.custom_vjp(apply, nondiff_argnums=(0,))

    def fwd(fn, x, scale):  # fwd receives every argument
        return fn(x) * scale, (x, scale)

    def bwd(fn, res, g):  # the nondiff arguments first, then residuals and g
        seen.append(fn)
        x, scale = res
        return (g * scale * 2 * x, g * fn(x))  # one cotangent per differentiable argument

    f.defvjp(fwd, bwd)
    sq = lambda v: v ** 2
    assert f(sq, 3.0, 2.0) == 18.0
    g = fnad.grad(lambda x, s: f(sq, x, s), argnums=(0, 1))(3.0, 2.0)
    assert g == (12.0, 9.0) and seen == [sq]


def test_custom_vjp_nondiff_argnums_refuses_tracers():
    f = fnad.custom_vjp(lambda n, x: x * n, nondiff_argnums=(0,))
    f.defvjp(lambda n, x: (x * n, None), lambda n, _, g: (g * n,))
    with pytest.raises(TypeError, match="nondiff_argnums"):
        fnad.grad(lambda n: f(n, 1.0))(2.0)


# ------------------------------------------------------------------ Python floats, kwargs


def test_jacobians_accept_python_floats():
    assert fnad.hessian(lambda x: x ** 3)(2.0) == 12.0
    assert fnad.jacrev(lambda x: x ** 3)(2.0) == 12.0
    assert fnad.jacfwd(lambda x: x ** 3)(2.0) == 12.0


def test_hessian_of_dict_of_scalars():
    h = fnad.hessian(lambda d: d["a"] ** 2 * d["b"])({"a": 1.0, "b": 2.0})
    assert h == {"a": {"a": 4.0, "b": 2.0}, "b": {"a": 2.0, "b": 0.0}}


def test_checkpoint_with_keyword_arguments():
    def block(x, *, w, mode="tanh"):
        return fnp.sum(fnp.tanh(x * w) if mode == "tanh" else x * w)

    ck = fnad.checkpoint(block)
    x, w = np.linspace(-1, 1, 4), 0.7
    want = fnad.grad(lambda x, w: block(x, w=w, mode="tanh"), argnums=(0, 1))(x, w)
    got = fnad.grad(lambda x, w: ck(x, w=w, mode="tanh"), argnums=(0, 1))(x, w)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-14)
    assert got[1] == pytest.approx(want[1], rel=1e-14)
    assert ck(x, w=w) == block(x, w=w)
