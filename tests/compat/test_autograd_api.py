"""fnad.autograd: autograd's API on fnad's engine. Each name against fnad's own transforms
or closed forms, autograd's conventions where a user can tell (argnum=, size-1 outputs, dict
key order, the complex convention, Python values from where), the extension API with
autograd's rule signatures, misc (flatten, optimizers, fixed_point), scipy, and the idioms
fnad cannot honour failing with a message that names the fnad way. autograd's own suite runs
in test_autograd_suite.py (compat marker)."""

import subprocess
import sys
import warnings
from collections import OrderedDict

import numpy as onp
import pytest

import fnad
import fnad.autograd.numpy as np
import fnad.autograd.numpy.random as npr
from fnad.autograd import (checkpoint, deriv, elementwise_grad, grad, grad_and_aux, hessian,
                           hessian_tensor_product, hessian_vector_product, holomorphic_grad,
                           jacobian, make_ggnvp, make_hvp, make_jvp, make_vjp, multigrad_dict,
                           tensor_jacobian_product, value_and_grad, vector_jacobian_product)
from fnad.autograd.builtins import isinstance as ag_isinstance
from fnad.autograd.extend import (Box, def_linear, defjvp, defvjp, defvjp_argnum, primitive,
                                  vspace)
from fnad.autograd.misc import flatten, flatten_func
from fnad.autograd.misc.fixed_points import fixed_point
from fnad.autograd.misc.optimizers import adam, rmsprop, sgd
from fnad.autograd.test_util import check_grads

RNG = onp.random.default_rng(0)
X = RNG.standard_normal(4)


def loss(x):
    return np.sum(np.tanh(x) ** 2)


# ---------------------------------------------------------------- differential operators

def test_grad_and_value_and_grad_match_fnad():
    onp.testing.assert_allclose(grad(loss)(X), fnad.grad(loss)(X), rtol=1e-12)
    v, g = value_and_grad(loss)(X)
    onp.testing.assert_allclose(v, loss(X))
    onp.testing.assert_allclose(g, fnad.grad(loss)(X), rtol=1e-12)


def test_argnum_int_and_tuple():
    def f(a, b, c):
        return np.sum(a * b ** 2 + c)

    a, b, c = X, X + 1, 2.0
    onp.testing.assert_allclose(grad(f, 1)(a, b, c), 2 * a * b)
    ga, gb = grad(f, (0, 1))(a, b, c)
    onp.testing.assert_allclose(ga, b ** 2)
    onp.testing.assert_allclose(gb, 2 * a * b)
    assert grad(f, 1).__name__ == "grad_of_f_wrt_argnum_1"


def test_argnums_spelling_is_refused_with_the_autograd_one():
    with pytest.raises(TypeError, match="argnum="):
        grad(loss, "x")


@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_grad_of_a_size_one_output(shape):
    g = grad(lambda x: np.reshape(np.sum(np.sin(x)), shape))(X)
    onp.testing.assert_allclose(g, onp.cos(X))


def test_grad_of_a_vector_output_names_the_alternatives():
    with pytest.raises(TypeError, match="jacobian, elementwise_grad"):
        grad(np.sin)(X)


def test_dict_gradients_keep_the_argument_key_order():
    params = {"w": 2.0, "b": 3.0, "a": onp.ones(2)}
    g = grad(lambda p: p["w"] * p["b"] + np.sum(p["a"]))(params)
    assert list(g) == ["w", "b", "a"]
    onp.testing.assert_allclose(g["w"], 3.0)
    od = OrderedDict([("z", 1.0), ("y", 2.0)])
    g = grad(lambda p: p["z"] * p["y"])(od)
    assert type(g) is OrderedDict and list(g) == ["z", "y"]


def test_list_and_tuple_gradients_keep_their_type():
    g = grad(lambda p: p[0] * p[1])([2.0, 3.0])
    assert type(g) is list
    g = grad(lambda p: p[0] * p[1])((2.0, 3.0))
    assert type(g) is tuple


def test_complex_convention_is_fnads_and_jaxs():
    z = 1.0 + 2.0j
    onp.testing.assert_allclose(grad(lambda z: np.abs(z) ** 2)(z), 2 * onp.conj(z))
    onp.testing.assert_allclose(grad(lambda z: np.abs(z) ** 2)(z),
                                fnad.grad(lambda z: fnad.numpy.abs(z) ** 2)(z))
    onp.testing.assert_allclose(holomorphic_grad(lambda z: z ** 3)(z), 3 * z ** 2)
    with pytest.raises(TypeError, match="complex"):
        grad(lambda z: z ** 2)(z)  # a complex output: holomorphic_grad


def test_elementwise_grad_jacobian_hessian():
    onp.testing.assert_allclose(elementwise_grad(np.tanh)(X), 1 - onp.tanh(X) ** 2)
    J = jacobian(lambda x: np.outer(x, x))(X)
    assert J.shape == (4, 4, 4)
    onp.testing.assert_allclose(J, fnad.jacrev(lambda x: fnad.numpy.outer(x, x))(X))
    onp.testing.assert_allclose(hessian(loss)(X), fnad.hessian(loss)(X), rtol=1e-10)


def test_hessian_products():
    H = fnad.hessian(loss)(X)
    v = RNG.standard_normal(4)
    onp.testing.assert_allclose(hessian_vector_product(loss)(X, v), H @ v, rtol=1e-10)
    assert hessian_tensor_product is hessian_vector_product
    hvp, g = make_hvp(loss)(X)
    onp.testing.assert_allclose(hvp(v), H @ v, rtol=1e-10)
    onp.testing.assert_allclose(g, fnad.grad(loss)(X))
    J = fnad.jacrev(np.sin)(X)
    onp.testing.assert_allclose(tensor_jacobian_product(np.sin)(X, v), v @ J)
    assert vector_jacobian_product is tensor_jacobian_product


def test_make_vjp_and_make_jvp_in_autograds_order():
    vjp, ans = make_vjp(np.sin)(X)
    onp.testing.assert_allclose(ans, onp.sin(X))
    onp.testing.assert_allclose(vjp(onp.ones(4)), onp.cos(X))
    out, t = make_jvp(np.sin)(X)(onp.ones(4))
    onp.testing.assert_allclose(t, onp.cos(X))
    onp.testing.assert_allclose(deriv(np.sin)(0.3), onp.cos(0.3))


def test_ggnvp():
    W = RNG.standard_normal((3, 4))
    v = RNG.standard_normal(4)
    ggnvp = make_ggnvp(lambda x: W @ x, lambda y: 0.5 * np.sum(y ** 2))(X)
    onp.testing.assert_allclose(ggnvp(v), W.T @ W @ v, rtol=1e-10)


def test_grad_and_aux_multigrad_dict_checkpoint():
    g, aux = grad_and_aux(lambda x: (loss(x), np.sum(x)))(X)
    onp.testing.assert_allclose(g, fnad.grad(loss)(X))
    onp.testing.assert_allclose(aux, onp.sum(X))

    def f(a, b=2.0, *rest):
        return a * b

    gd = multigrad_dict(f)(3.0)
    assert list(gd) == ["a", "b", "rest"]
    onp.testing.assert_allclose((gd["a"], gd["b"]), (2.0, 3.0))
    onp.testing.assert_allclose(grad(checkpoint(loss))(X), fnad.grad(loss)(X))


# ---------------------------------------------------------------- numpy, builtins, test_util

def test_numpy_namespace_and_global_random():
    npr.seed(3)
    a = npr.randn(3)
    onp.random.seed(3)
    onp.testing.assert_array_equal(a, onp.random.randn(3))
    assert np.random is npr and np.float64 is onp.float64 and np.__version__ == onp.__version__
    # a NumPy function fnad.numpy lacks runs on untraced values (no derivative, as autograd)
    assert grad(lambda x: np.sum(x) * np.count_nonzero(x > 0))(onp.array([1.0, -1.0, 2.0])) \
        .tolist() == [2.0, 2.0, 2.0]


def test_where_keeps_python_values():
    assert np.where(True, 1, 2) == 1 and type(np.where(True, 1, 2)) is int
    assert np.where(True, [1, 2], [3, 4]) == [1, 2]
    assert np.where(onp.array([True, False]), onp.ones(2), onp.zeros(2)).tolist() == [1, 0]


def test_make_diagonal_inverts_diagonal():
    D = RNG.standard_normal((3, 4))
    A = np.make_diagonal(D, axis1=-1, axis2=-2)
    onp.testing.assert_allclose(onp.diagonal(A, axis1=-1, axis2=-2), D)
    check_grads(lambda D: np.make_diagonal(D, axis1=-1, axis2=-2), modes=["rev"])(D)


def test_builtins_isinstance_sees_through_tracing():
    seen = []

    def f(x):
        seen.append((isinstance(x, onp.ndarray), ag_isinstance(x, onp.ndarray),
                     isinstance(x, Box)))
        return np.sum(x)

    grad(f)(X)
    assert seen == [(False, True, True)]


def test_check_grads_is_curried():
    check_grads(loss)(X)
    check_grads(lambda a, b: np.sum(np.sin(a) * b), 1, modes=["rev"], order=1)(X, X)
    with pytest.raises(AssertionError, match="VJP"):
        bad = primitive(lambda x: x ** 2)
        defvjp(bad, lambda ans, x: lambda g: g * x)  # wrong: the factor 2 is missing
        check_grads(bad, modes=["rev"])(X)


def test_vspace():
    vs = vspace({"a": onp.ones(2), "b": (1.0, 1j)})
    assert vs.size == 5
    assert vspace(onp.ones(3)) == vspace(onp.zeros(3))
    with pytest.raises(TypeError, match="vector space"):
        vspace("text")


# ---------------------------------------------------------------- extend

def test_primitive_with_autograds_rule_signatures():
    @primitive
    def logsumexp(x):
        m = onp.max(x)
        return m + onp.log(onp.sum(onp.exp(x - m)))

    defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))
    onp.testing.assert_allclose(grad(logsumexp)(X), onp.exp(X) / onp.sum(onp.exp(X)))
    check_grads(lambda x: logsumexp(x) ** 2, modes=["rev"])(X)


def test_defvjp_none_is_a_zero_cotangent_and_defjvp_same_is_linear():
    @primitive
    def scale(x, k):
        return x * k

    defvjp(scale, lambda ans, x, k: lambda g: g * k, None)
    defjvp(scale, "same", None)
    assert grad(lambda k: np.sum(scale(X, k)))(2.0) == 0.0
    onp.testing.assert_allclose(deriv(lambda x: scale(x, 3.0))(1.5), 3.0)


def test_defvjp_argnum_and_def_linear():
    @primitive
    def dot(a, b):
        return onp.dot(a, b)

    defvjp_argnum(dot, lambda i, ans, args, kwargs:
                  lambda g: g * args[1 - i])
    def_linear(dot)
    ga, gb = grad(dot, (0, 1))(X, 2 * X)
    onp.testing.assert_allclose(ga, 2 * X)
    onp.testing.assert_allclose(gb, X)


def test_deprecated_primitive_methods_warn_and_work():
    import fnad.autograd as ag

    mul = ag.primitive(lambda x, y: x * y)
    with pytest.warns(DeprecationWarning, match="deprecated"):
        mul.defgrad(lambda ans, x, y: lambda g: g * y)
    onp.testing.assert_allclose(grad(mul)(2.0, 5.0), 5.0)


def test_tracing_internals_name_the_fnad_way():
    with pytest.raises(ImportError, match="fnad.make_graph"):
        from fnad.autograd.tracer import Node  # noqa: F401

    class MyBox(Box):
        pass

    with pytest.raises(TypeError, match="register_pytree_node"):
        MyBox(1.0, None, None)
    with pytest.raises(TypeError, match="Box subclass MyBox"):
        MyBox.register(dict)  # autograd's rkhs example registers its own value type so


# ---------------------------------------------------------------- misc, scipy

def test_flatten_roundtrip_and_order():
    value = {"b": [onp.ones(2), 3.0], "a": (onp.arange(4.0).reshape(2, 2),)}
    flat, unflatten = flatten(value)
    onp.testing.assert_allclose(flat, [0, 1, 2, 3, 1, 1, 3])  # keys sorted, as autograd
    back = unflatten(flat)
    assert list(back) == ["b", "a"]
    onp.testing.assert_allclose(back["a"][0], value["a"][0])
    g = grad(lambda v: np.sum(flatten(v)[0] ** 2))(value)
    onp.testing.assert_allclose(g["b"][1], 6.0)
    f, unflat, x0 = flatten_func(lambda v, s: {"s": v["b"][1] * s}, value)
    onp.testing.assert_allclose(f(x0, 2.0), [6.0])


def _adam_by_hand(grad_fn, x, num_iters, step_size=0.001, b1=0.9, b2=0.999, eps=1e-8):
    m = onp.zeros_like(x)
    v = onp.zeros_like(x)
    for i in range(num_iters):
        g = grad_fn(x, i)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * g ** 2 + b2 * v
        x = x - step_size * (m / (1 - b1 ** (i + 1))) / (onp.sqrt(v / (1 - b2 ** (i + 1))) + eps)
    return x


def test_optimizers_with_autograds_callback():
    calls = []
    obj = grad(lambda p, i: np.sum((p["x"] - 3.0) ** 2))
    out = adam(obj, {"x": onp.zeros(2)}, callback=lambda x, i, g: calls.append(i),
               num_iters=5, step_size=0.1)
    assert calls == [0, 1, 2, 3, 4]
    ref = _adam_by_hand(lambda x, i: 2 * (x - 3.0), onp.zeros(2), 5, step_size=0.1)
    onp.testing.assert_allclose(out["x"], ref, rtol=1e-12)
    assert sgd(obj, {"x": onp.zeros(2)}, num_iters=300)["x"] == pytest.approx([3, 3], abs=1e-3)
    assert rmsprop(obj, {"x": onp.zeros(2)}, num_iters=300, step_size=0.05)["x"] == \
        pytest.approx([3, 3], abs=0.1)


def test_fixed_point_gradient():
    def newton_sqrt(a):
        return lambda x: 0.5 * (x + a / x)

    def dist(x, y):
        return onp.abs(x - y)

    sqrt = lambda a: fixed_point(newton_sqrt, a, 1.0, dist, 1e-12)
    onp.testing.assert_allclose(sqrt(2.0), onp.sqrt(2.0))
    onp.testing.assert_allclose(grad(sqrt)(2.0), 0.5 / onp.sqrt(2.0), rtol=1e-8)
    # the second derivative is implicit too (the adjoint is itself a fixed_point), as autograd
    onp.testing.assert_allclose(grad(grad(sqrt))(2.0), -0.25 * 2.0 ** -1.5, rtol=1e-8)


def test_scipy_mappings():
    sps = pytest.importorskip("scipy.stats")
    ssig = pytest.importorskip("scipy.signal")
    import fnad.autograd.scipy.signal as agsig
    import fnad.autograd.scipy.special as agsp
    import fnad.autograd.scipy.stats.norm as norm
    from fnad.autograd.scipy.integrate import odeint

    onp.testing.assert_allclose(norm.logpdf(X, 0.5, 2.0), sps.norm.logpdf(X, 0.5, 2.0))
    onp.testing.assert_allclose(grad(lambda m: np.sum(norm.logpdf(X, m, 2.0)))(0.5),
                                onp.sum(X - 0.5) / 4.0)
    check_grads(lambda x: agsp.gammaln(x), modes=["rev"])(onp.abs(X) + 1)
    A, B = RNG.standard_normal((5, 6)), RNG.standard_normal((2, 3))
    for mode in ("full", "valid", "same"):
        onp.testing.assert_allclose(agsig.convolve(A, B, mode=mode),
                                    ssig.convolve(A, B, mode=mode), atol=1e-12)
    check_grads(lambda a: agsig.convolve(a, B, mode="valid"), modes=["rev"], order=1)(A)
    t = onp.linspace(0, 1, 5)
    y = odeint(lambda y, t, k: -k * y, onp.array([1.0]), t, args=(2.0,))
    onp.testing.assert_allclose(y[:, 0], onp.exp(-2 * t), rtol=1e-6)
    with pytest.raises(TypeError, match="full_output"):
        odeint(lambda y, t: -y, onp.array([1.0]), t, full_output=True)
    # SciPy's LSODA, differentiable by the adjoint method (autograd's odeint)
    g = grad(lambda k: np.sum(odeint(lambda y, t, k: -k * y, onp.array([1.0]), t, (k,))))(2.0)
    onp.testing.assert_allclose(g, onp.sum(-t * onp.exp(-2 * t)), rtol=1e-6)
    check_grads(lambda y0, t: odeint(lambda y, s: -onp.array([[0.0, 1.0], [-1.0, 0.0]]) @ y
                                     + 0.1 * np.sin(s), y0, t),
                (0, 1), modes=["rev"], order=1)(onp.array([1.0, 0.5]), t)


def test_rvs_draws_from_numpys_global_generator():
    import fnad.autograd.scipy.stats.norm as norm

    npr.seed(7)
    a = norm.rvs(size=3)
    npr.seed(7)
    onp.testing.assert_array_equal(a, onp.random.standard_normal(3))


# ---------------------------------------------------------------- fixes the suite found

def test_forward_mode_tangent_of_a_promoted_real_value_is_complex():
    # the JVP of a VJP rule that promotes (g + 0j); autograd's test_systematic::test_real
    out, t = fnad.jvp(lambda g: g + 0j, (onp.float64(0.3),), (onp.float64(0.5),))
    assert onp.iscomplexobj(out) and onp.iscomplexobj(t)
    check_grads(np.real)(0.4 + 0.1j)


def test_real_if_close_of_a_python_complex():
    assert np.real_if_close(0.4 + 1e-17j).dtype == onp.float64
    assert np.real_if_close(0.4 + 0.1j).dtype == onp.complex128
    check_grads(np.real_if_close)(0.4 + 0.1j)


def test_redirect_plugin_aliases_autograd():
    code = ("import tests.compat.autograd_redirect\nimport autograd, autograd.numpy as np\n"
            "from autograd.misc.optimizers import adam\nprint(np.__name__, adam.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=fnad.__file__.rsplit("/fnad/", 1)[0])
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["fnad.autograd.numpy", "fnad.autograd.misc.optimizers"]


def test_no_warnings_from_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grad(loss)(X)
