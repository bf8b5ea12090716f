"""Issue 33's transforms and jit's calling forms, against jax where it is installed: jit as a
decorator factory with static_argnums/static_argnames (statics by keyword), the trace cache
shared by every jit of a function, clear_caches, block_until_ready, device_put(x),
eval_shape with ShapeDtypeStruct, make_jaxpr, jacobian, linearize and linear_transpose."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from tests.core.test_jit import Counting

S = fnad.ShapeDtypeStruct
X = np.array([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4]])


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


# ----------------------------------------------------------------------------- jit's forms


def test_jit_decorator_factory_with_static_argnums():
    @fnad.jit(static_argnums=1)
    def f(x, n):
        return x * n if n > 1 else -x

    np.testing.assert_array_equal(f(X, 3), X * 3)
    np.testing.assert_array_equal(f(X, 1), -X)
    np.testing.assert_array_equal(f(X, n=3), X * 3)  # a static parameter by keyword
    assert f.cache_size() == 3


def test_jit_static_argnames_by_keyword_position_and_default():
    body = Counting(lambda x, training=False: x * 2 if training else x)

    def g(x, training=False):
        return body(x, training)

    jg = fnad.jit(g, static_argnames="training")
    np.testing.assert_array_equal(jg(X), X)
    np.testing.assert_array_equal(jg(X, training=True), 2 * X)
    np.testing.assert_array_equal(jg(X, True), 2 * X)
    np.testing.assert_array_equal(jg(X + 1, training=True), 2 * (X + 1))
    assert body.traces == 3  # default, by keyword, by position


def test_jit_static_argnames_must_be_hashable():
    jg = fnad.jit(lambda x, cfg: x * len(cfg), static_argnames="cfg")
    with pytest.raises(TypeError, match="static argument 'cfg' is a list, which is not hashable"):
        jg(X, cfg=[1, 2])


def test_jit_option_types_are_checked():
    with pytest.raises(TypeError, match="static_argnames must be a str"):
        fnad.jit(lambda x: x, static_argnames=(1,))
    with pytest.raises(TypeError, match="donate_argnums must be an int"):
        fnad.jit(lambda x: x, donate_argnums="x")


def test_jit_donate_argnums_is_accepted():
    f = fnad.jit(lambda x, y: x + y, donate_argnums=(0,))
    x = X.copy()
    np.testing.assert_array_equal(f(x, 1.0), X + 1.0)
    np.testing.assert_array_equal(x, X)  # nothing reuses the donated buffer on NumPy


def test_inline_jit_traces_once():
    body = Counting(lambda x: fnp.sin(x) * 2)

    def f(x):
        return body(x)

    for k in range(4):
        np.testing.assert_allclose(fnad.jit(f)(X + k), np.sin(X + k) * 2)
    assert body.traces == 1
    fnad.jit(f, static_argnums=())(X)  # the same options: the same traces
    assert body.traces == 1
    fnad.jit(f, optimize=False)(X)     # other options: a trace of their own
    assert body.traces == 2
    fnad.clear_caches()
    fnad.jit(f)(X)
    assert body.traces == 3


def test_jit_factory_matches_jax():
    jax = _jax()

    def f(x, n, scale=1.0):
        return (x ** n).sum() * scale

    ours = fnad.jit(static_argnums=(1,))(f)
    theirs = jax.jit(f, static_argnums=(1,))
    np.testing.assert_allclose(ours(X, 3, scale=0.5), theirs(X, 3, scale=0.5), rtol=1e-14)


def test_block_until_ready_and_device_put_default():
    tree = {"a": X, "b": (np.ones(2), 3.0)}
    assert fnad.block_until_ready(tree) is tree
    out = fnad.device_put({"a": X, "s": 2.0, "n": np.float32(1)})
    assert out["a"] is X
    assert isinstance(out["s"], np.ndarray) and out["s"].shape == ()
    assert out["n"].dtype == np.float32
    y = fnad.grad(lambda x: fnp.sum(fnad.device_put(x) ** 2))(X)
    np.testing.assert_array_equal(y, 2 * X)


# ----------------------------------------------------------------------------- shapes, programs


def test_eval_shape_runs_nothing():
    calls = []

    def f(a, b):
        calls.append(1)
        return {"y": fnp.dot(a, b), "z": a.sum(axis=0)}

    out = fnad.eval_shape(f, S((2, 3), "float32"), np.ones(3, np.float32))
    assert out["y"] == S((2,), "float32") and out["z"] == S((3,), "float32")
    assert isinstance(out["y"], fnad.ShapeDtypeStruct) and out["y"].ndim == 1
    assert calls == [1]  # traced once, on shapes


def test_eval_shape_matches_jax():
    jax = _jax()

    def f(x, w):
        return fnp.tanh(x @ w).mean(axis=-1), (x.T, 2 * x)

    def fj(x, w):
        jnp = jax.numpy
        return jnp.tanh(x @ w).mean(axis=-1), (x.T, 2 * x)

    ours = fnad.eval_shape(f, S((4, 3), "float32"), S((3, 5), "float32"))
    theirs = jax.eval_shape(fj, jax.ShapeDtypeStruct((4, 3), "float32"),
                            jax.ShapeDtypeStruct((3, 5), "float32"))
    for a, b in zip(fnad.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        assert a.shape == b.shape and a.dtype == b.dtype


def test_eval_shape_refuses_other_leaves():
    with pytest.raises(TypeError, match="eval_shape: argument leaf 0 is a str"):
        fnad.eval_shape(lambda s: s, "text")


def test_make_jaxpr_prints_a_program():
    g = fnad.make_jaxpr(lambda x: fnp.sin(x) * 2)(np.ones(3))
    text = str(g)
    assert "sin a" in text and "multiply b 2" in text and text.startswith("{ lambda ;")
    assert g.jaxpr is g and [e.prim.name for e in g.eqns] == ["sin", "multiply"]
    assert g.in_avals[0].shape == (3,) and g.out_avals[0].shape == (3,)
    g, shapes = fnad.make_jaxpr(lambda x, n: x[:n], static_argnums=1,
                                return_shape=True)(S((5,), "float64"), 2)
    assert shapes == S((2,), "float64")


def test_make_jaxpr_of_grad_shows_the_backward_pass():
    text = str(fnad.make_jaxpr(fnad.grad(lambda x: fnp.sum(fnp.sin(x))))(np.ones(3)))
    assert "cos" in text


def test_jacobian_is_jacrev():
    jax = _jax()
    f = lambda x: fnp.sin(x) * x.sum()
    fj = lambda x: jax.numpy.sin(x) * x.sum()
    np.testing.assert_allclose(fnad.jacobian(f)(X[0]), jax.jacobian(fj)(X[0]), rtol=1e-14)


def test_linearize():
    jax = _jax()
    x, t = X[0], np.array([1.0, -0.5, 2.0])
    y, f_jvp = fnad.linearize(lambda v: fnp.sin(v) * v, x)
    yj, fj_jvp = jax.linearize(lambda v: jax.numpy.sin(v) * v, x)
    np.testing.assert_allclose(y, yj, rtol=1e-14)
    np.testing.assert_allclose(f_jvp(t), fj_jvp(t), rtol=1e-14)
    y, f_jvp, aux = fnad.linearize(lambda v: (fnp.exp(v), "aux"), x, has_aux=True)
    assert aux == "aux"
    np.testing.assert_allclose(f_jvp(t), np.exp(x) * t)
    with pytest.raises(ValueError, match="tangents' structure differs"):
        f_jvp(t, t)


def test_linearize_runs_the_forward_pass_once():
    body = Counting(lambda v: fnp.sin(v) * fnp.exp(v) if v[0] > 0 else v)
    x, t = X[0], np.array([1.0, -0.5, 2.0])
    y, f_jvp = fnad.linearize(body, x)
    for k in range(3):
        np.testing.assert_allclose(f_jvp(t * k), (np.cos(x) + np.sin(x)) * np.exp(x) * t * k,
                                   rtol=1e-14)
    assert body.traces == 2  # the value, and the trace of the linear map (Python control
    # flow on the primal values works: they are concrete while the tangents are staged)


def test_linear_transpose():
    jax = _jax()

    def f(x, y):
        return {"a": 2 * x + fnp.sum(y), "b": y[::-1] - x}

    def fj(x, y):
        return {"a": 2 * x + jax.numpy.sum(y), "b": y[::-1] - x}

    ct = {"a": np.array(1.5), "b": np.array([1.0, 2.0, 3.0])}
    ours = fnad.linear_transpose(f, S((), "float64"), np.zeros(3))(ct)
    theirs = jax.linear_transpose(fj, jax.ShapeDtypeStruct((), "float64"), np.zeros(3))(ct)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-14)
    with pytest.raises(TypeError, match="real and complex inputs only"):
        fnad.linear_transpose(lambda i: i, S((), "int32"))
