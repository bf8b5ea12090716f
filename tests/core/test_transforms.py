"""The differentiation transforms: values, nesting, argnums, has_aux, pytrees."""

import collections

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad.test_util import check_grads

RNG = np.random.default_rng(0)


def test_readme_example():
    g = fnad.grad(lambda x: fnp.sum(fnp.tanh(x) ** 2))(fnp.ones(3))
    t = np.tanh(1.0)
    np.testing.assert_allclose(g, 2 * t * (1 - t * t) * np.ones(3), rtol=1e-14)


def test_grad_scalar_python_float():
    assert fnad.grad(lambda x: x ** 3)(2.0) == pytest.approx(12.0)
    assert fnad.grad(fnad.grad(lambda x: x ** 3))(2.0) == pytest.approx(12.0)
    assert fnad.grad(fnad.grad(fnad.grad(lambda x: x ** 3)))(2.0) == pytest.approx(6.0)


def test_perturbation_confusion():
    # d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1, not 2
    f = lambda x: x * fnad.grad(lambda y: x + y)(1.0)
    assert fnad.grad(f)(2.0) == pytest.approx(1.0)
    # and the forward-mode version
    g = lambda x: x * fnad.jvp(lambda y: x * y, (1.0,), (1.0,))[1]
    assert fnad.grad(g)(3.0) == pytest.approx(6.0)  # d/dx x*x = 2x


def test_value_and_grad_argnums_and_aux():
    def f(x, y, z):
        return fnp.sum(x * y) + z, {"aux": x * 2}

    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    (v, aux), (gx, gz) = fnad.value_and_grad(f, argnums=(0, 2), has_aux=True)(x, y, 1.5)
    assert v == pytest.approx(np.sum(x * y) + 1.5)
    np.testing.assert_allclose(aux["aux"], x * 2)
    assert not isinstance(aux["aux"], fnad.extend.Tracer)
    np.testing.assert_allclose(gx, y)
    assert gz == pytest.approx(1.0)
    gy, aux2 = fnad.grad(f, argnums=1, has_aux=True)(x, y, 0.0)
    np.testing.assert_allclose(gy, x)
    # negative argnums count from the end
    np.testing.assert_allclose(fnad.grad(lambda a, b: fnp.sum(a * b), argnums=-1)(x, y), x)


def test_grad_of_pytree_keeps_structure():
    Point = collections.namedtuple("Point", "x y")
    params = {"w": RNG.standard_normal((2, 3)), "layers": [Point(np.ones(2), 2.0), None]}

    def loss(p):
        return fnp.sum(p["w"] ** 2) + fnp.sum(p["layers"][0].x * p["layers"][0].y)

    g = fnad.grad(loss)(params)
    assert fnad.tree_structure(g) == fnad.tree_structure(params)
    assert isinstance(g["layers"][0], Point)
    np.testing.assert_allclose(g["w"], 2 * params["w"])
    np.testing.assert_allclose(g["layers"][0].x, 2.0 * np.ones(2))
    assert g["layers"][0].y == pytest.approx(2.0)


def test_unused_input_gets_zeros_and_dtype_is_kept():
    x32 = np.ones(3, np.float32)
    g = fnad.grad(lambda x, y: fnp.sum(y * 2.0), argnums=(0, 1))(x32, x32)
    assert g[0].dtype == np.float32 and np.all(g[0] == 0)
    assert g[1].dtype == np.float32
    np.testing.assert_allclose(g[1], 2.0)


def test_jvp_and_vjp_agree_with_jacobian():
    A = RNG.standard_normal((4, 3))
    f = lambda x: fnp.tanh(A @ x)
    x = RNG.standard_normal(3)
    J = fnad.jacrev(f)(x)
    np.testing.assert_allclose(J, fnad.jacfwd(f)(x), rtol=1e-12)
    np.testing.assert_allclose(J, (1 - np.tanh(A @ x) ** 2)[:, None] * A, rtol=1e-12)
    v = RNG.standard_normal(3)
    y, t = fnad.jvp(f, (x,), (v,))
    np.testing.assert_allclose(t, J @ v, rtol=1e-12)
    u = RNG.standard_normal(4)
    _, f_vjp = fnad.vjp(f, x)
    np.testing.assert_allclose(f_vjp(u)[0], u @ J, rtol=1e-12)


def test_hessian_and_mixed_nesting():
    f = lambda x: fnp.sum(fnp.sin(x) * x ** 2)
    x = RNG.standard_normal(3)
    H = fnad.hessian(f)(x)
    expected = np.diag(2 * np.sin(x) + 4 * x * np.cos(x) - x ** 2 * np.sin(x))
    np.testing.assert_allclose(H, expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fnad.jacrev(fnad.jacfwd(fnad.grad(f)))(x).shape, (3, 3, 3))
    np.testing.assert_allclose(fnad.jacfwd(fnad.jacrev(f))(x), H, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fnad.jacrev(fnad.jacrev(f))(x), H, rtol=1e-12, atol=1e-14)
    # jvp of grad is a Hessian-vector product
    v = RNG.standard_normal(3)
    _, hv = fnad.jvp(fnad.grad(f), (x,), (v,))
    np.testing.assert_allclose(hv, H @ v, rtol=1e-12, atol=1e-14)


def test_jacobian_pytree_layout():
    def f(d):
        return {"a": d["x"] * 2, "b": fnp.sum(d["y"])}

    d = {"x": RNG.standard_normal(2), "y": RNG.standard_normal((2, 2))}
    for jac in (fnad.jacrev, fnad.jacfwd):
        J = jac(f)(d)
        assert J["a"]["x"].shape == (2, 2) and J["a"]["y"].shape == (2, 2, 2)
        assert J["b"]["x"].shape == (2,) and J["b"]["y"].shape == (2, 2)
        np.testing.assert_allclose(J["a"]["x"], 2 * np.eye(2))
        np.testing.assert_allclose(J["b"]["y"], np.ones((2, 2)))


def test_python_control_flow_on_traced_values():
    def f(x):
        y = x
        while fnp.sum(y * y) < 100.0:
            y = y * 2.0
        if y[0] > 0:
            return fnp.sum(y)
        return -fnp.sum(y)

    x = np.array([1.0, 0.5])
    # y = 8x after 3 doublings (|8x|^2 = 80 < 100, so one more: 16x)
    np.testing.assert_allclose(fnad.grad(f)(x), [16.0, 16.0])


def test_stop_gradient_all_levels():
    f = lambda x: x * fnad.stop_gradient(x)
    assert fnad.grad(f)(3.0) == pytest.approx(3.0)
    assert fnad.grad(fnad.grad(f))(3.0) == pytest.approx(0.0)
    _, t = fnad.jvp(f, (3.0,), (1.0,))
    assert t == pytest.approx(3.0)
    tree = fnad.stop_gradient({"a": 1.0, "b": [np.ones(2)]})
    assert tree["a"] == 1.0


def test_custom_vjp_is_used_and_nests():
    calls = []

    @fnad.custom_vjp
    def clip_gradient(x):
        return x

    def fwd(x):
        return x, None

    def bwd(_, g):
        calls.append(1)
        return (fnp.clip(g, -1.0, 1.0),)

    clip_gradient.defvjp(fwd, bwd)
    g = fnad.grad(lambda x: fnp.sum(clip_gradient(x) * 5.0))(np.ones(3))
    np.testing.assert_allclose(g, np.ones(3))
    assert calls
    # plain call: the primal function
    np.testing.assert_allclose(clip_gradient(np.ones(2)), np.ones(2))
    # forward mode is refused, as in JAX (custom_vjp defines only a VJP)
    with pytest.raises(TypeError, match="forward-mode.*clip_gradient"):
        fnad.jvp(clip_gradient, (np.ones(2),), (np.full(2, 3.0),))


def test_custom_vjp_higher_order_through_bwd():
    @fnad.custom_vjp
    def f(x):
        return fnp.sin(x)

    f.defvjp(lambda x: (fnp.sin(x), x), lambda x, g: (g * fnp.cos(x),))
    x = 0.7
    assert fnad.grad(f)(x) == pytest.approx(np.cos(x))
    assert fnad.grad(fnad.grad(f))(x) == pytest.approx(-np.sin(x))


def test_custom_vjp_pytree_args_and_none_cotangent():
    @fnad.custom_vjp
    def f(d, s):
        return d["a"] * s

    f.defvjp(lambda d, s: (d["a"] * s, (d, s)),
             lambda res, g: ({"a": g * res[1]}, None))
    g = fnad.grad(lambda d, s: fnp.sum(f(d, s)), argnums=(0, 1))({"a": np.ones(2)}, 3.0)
    np.testing.assert_allclose(g[0]["a"], 3.0)
    assert g[1] == 0.0


def test_checkpoint_matches_and_recomputes():
    count = []

    def block(x, w):
        count.append(1)
        return fnp.tanh(x @ w)

    x, w = RNG.standard_normal((4, 5)), RNG.standard_normal((5, 5))
    plain = fnad.grad(lambda w: fnp.sum(block(block(x, w), w) ** 2))(w)
    count.clear()
    ck = fnad.checkpoint(block)
    remat = fnad.grad(lambda w: fnp.sum(ck(ck(x, w), w) ** 2))(w)
    np.testing.assert_allclose(plain, remat, rtol=1e-13)
    assert len(count) == 4  # two forward calls, two recomputations
    # second order through a checkpoint
    f = lambda w: fnp.sum(ck(x, w) ** 2)
    check_grads(f, (w,), order=2, modes=("rev",))


def test_checkpoint_saves_memory():
    import tracemalloc

    x = RNG.standard_normal((64, 256))
    w = RNG.standard_normal((256, 256)) * 0.05

    def stack(x, w):
        for _ in range(8):
            x = fnp.tanh(x @ w)
        return x

    def peak(f):
        tracemalloc.start()
        out, f_vjp = fnad.vjp(f, w)
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        f_vjp(np.ones_like(out))
        return held

    plain = peak(lambda w: stack(x, w))
    ck = fnad.checkpoint(stack)
    remat = peak(lambda w: ck(x, w))
    # the plain tape holds 16 activations of 64x256 float64 (2 MiB); the checkpointed one
    # holds only the inputs and the output
    assert remat < plain / 4, (plain, remat)


def test_vjp_with_multiple_outputs_and_partial_cotangents():
    f = lambda x: (x * 2, {"s": fnp.sum(x)})
    x = RNG.standard_normal(3)
    out, f_vjp = fnad.vjp(f, x)
    (g,) = f_vjp((np.ones(3), {"s": np.float64(2.0)}))
    np.testing.assert_allclose(g, 2 + 2 * np.ones(3))


def test_integer_inputs_to_vjp_are_refused_and_closed_over_instead():
    # issue 31: vjp gave an integer input a zero cotangent while grad refused it
    with pytest.raises(TypeError, match=r"^vjp requires real- or complex-valued inputs, but "
                                        r"n \(argument 1\) has dtype int64"):
        fnad.vjp(lambda x, n: x * n, np.ones(2), np.int64(3))
    out, f_vjp = fnad.vjp(lambda x: x * np.int64(3), np.ones(2))
    (gx,) = f_vjp(np.ones(2))
    np.testing.assert_allclose(gx, 3.0)


def test_constant_function_grad_is_zero():
    assert fnad.grad(lambda x: 1.0)(2.0) == 0.0
    np.testing.assert_allclose(fnad.grad(lambda x: fnp.sum(fnp.ones(3)))(np.ones(3)), 0.0)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_check_grads_orders(order):
    x = RNG.standard_normal((2, 3))
    y = RNG.standard_normal((3,))
    check_grads(lambda x, y: fnp.tanh(x * y) @ fnp.exp(y), (x, y), order=order)


def test_check_grads_catches_a_wrong_rule():
    from fnad.extend import defjvp, defvjp, primitive

    bad = primitive(np.sin, "bad_sin")
    defvjp(bad, lambda g, ans, x: g * 2 * fnp.cos(x))
    defjvp(bad, lambda t, ans, x: t * 2 * fnp.cos(x))
    with pytest.raises(AssertionError, match="mismatch"):
        check_grads(bad, (np.ones(3),), order=1, modes=("rev",))
    with pytest.raises(AssertionError, match="mismatch"):
        check_grads(bad, (np.ones(3),), order=1, modes=("fwd",))


def test_check_grads_takes_python_scalars():
    """JAX's check_grads(jnp.sin, (1.0,), 1) works; fnad's crashed reading .dtype (issue 21)."""
    check_grads(fnp.sin, (1.0,), order=2)
    check_grads(lambda x, y: x * fnp.exp(y), (1.5, -0.5), order=2)
    check_grads(fnp.exp, (1.0 + 0.5j,), order=2)
    check_grads(lambda x, n: x ** n, (1.5, 3), order=1)  # an int argument is not perturbed


def _wrong_second_order(kind):
    """foo(x) = 2x whose first-order rule is right, but whose rule calls `bar`, an identity
    whose own rule is off by 0.1%: only a second-order check in the cotangent (tangent) can
    see it (autograd's test_check_vjp_2nd_order_fail)."""
    from fnad.extend import defjvp, defvjp, primitive

    bar = primitive(lambda x: x, f"bar_{kind}")
    foo = primitive(lambda x: x * 2.0, f"foo_{kind}")
    if kind == "rev":
        defvjp(bar, lambda g, ans, x: g * 1.001)
        defjvp(bar, lambda t, ans, x: t)
        defvjp(foo, lambda g, ans, x: bar(g) * 2.0)
        defjvp(foo, lambda t, ans, x: t * 2.0)
    else:
        defvjp(bar, lambda g, ans, x: g)
        defjvp(bar, lambda t, ans, x: t * 1.001)
        defvjp(foo, lambda g, ans, x: g * 2.0)
        defjvp(foo, lambda t, ans, x: bar(t) * 2.0)
    return foo


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_check_grads_order_2_catches_a_wrong_derivative_of_a_rule(mode):
    foo = _wrong_second_order(mode)
    x = np.array([1.0, -2.0])
    check_grads(foo, (x,), order=1, modes=(mode,))  # first order is right
    with pytest.raises(AssertionError, match=r"(?s)mismatch.*\[checking the (VJP|JVP) of the "):
        check_grads(foo, (x,), order=2, modes=(mode,))
