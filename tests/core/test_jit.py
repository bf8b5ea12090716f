"""fnad.jit: the trace cache (hits and misses), static arguments, keyword arguments, errors
for Python control flow on staged values and for escaped tracers, pytrees in and out, and
composition with every transform in both orders."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp

X = np.array([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4]])
Y = np.array([0.5, -2.0, 1.0])


def f(x):
    return fnp.sum(fnp.tanh(x) ** 2 * fnp.sin(x))


class Counting:
    """A function that counts how often it is traced (each call of its body is a trace)."""

    def __init__(self, fun):
        self.fun, self.traces = fun, 0

    def __call__(self, *args, **kwargs):
        self.traces += 1
        return self.fun(*args, **kwargs)


# ----------------------------------------------------------------------------- cache


def test_same_signature_is_traced_once():
    g = Counting(lambda x, y: x * y + 1.0)
    jg = fnad.jit(g)
    for k in range(3):
        np.testing.assert_array_equal(jg(X + k, Y), (X + k) * Y + 1.0)
    assert g.traces == 1 and jg.cache_size() == 1


@pytest.mark.parametrize("other", [
    (np.ones((3, 3)), Y),                       # a new shape
    (X.astype(np.float32), Y),                  # a new dtype
    (X, Y.astype(np.float32)),
])
def test_new_shape_or_dtype_retraces(other):
    g = Counting(lambda x, y: x * y)
    jg = fnad.jit(g)
    jg(X, Y)
    out = jg(*other)
    assert g.traces == 2 and jg.cache_size() == 2
    assert out.dtype == (other[0] * other[1]).dtype
    jg(*other)
    assert g.traces == 2


def test_new_pytree_structure_retraces():
    g = Counting(lambda d: sum(fnp.sum(v) for v in fnad.tree_leaves(d)))
    jg = fnad.jit(g)
    assert jg({"a": X}) == np.sum(X)
    assert jg({"a": X, "b": Y}) == np.sum(X) + np.sum(Y)
    assert jg({"b": X}) == np.sum(X)  # a new key is a new structure
    assert jg([X]) == np.sum(X)
    assert g.traces == 4
    jg({"a": X + 1.0})
    assert g.traces == 4


def test_python_scalars_are_weakly_typed_dynamic_inputs():
    g = Counting(lambda x, s: x * s)
    jg = fnad.jit(g)
    x32 = X.astype(np.float32)
    for s in (2.0, 3.0, -1.5):
        out = jg(x32, s)
        assert out.dtype == np.float32  # weak: the scalar yields to the array's dtype
        np.testing.assert_array_equal(out, x32 * s)
    assert g.traces == 1  # a new value is not a new trace
    jg(x32, 2)  # an int is another weak type: a new trace
    assert g.traces == 2
    np.testing.assert_array_equal(jg(x32, 4), x32 * 4)
    assert g.traces == 2


def test_clear_cache():
    g = Counting(lambda x: x + 1)
    jg = fnad.jit(g)
    jg(X)
    jg.clear_cache()
    jg(X)
    assert g.traces == 2


# ----------------------------------------------------------------------------- static args


def test_static_argnums_retrace_per_value():
    def power(x, n):
        out = x
        for _ in range(n - 1):  # Python control flow on a static value
            out = out * x
        return out
    g = Counting(power)
    jg = fnad.jit(g, static_argnums=1)
    np.testing.assert_array_equal(jg(X, 3), X * X * X)
    np.testing.assert_array_equal(jg(X + 1, 3), (X + 1) * (X + 1) * (X + 1))
    assert g.traces == 1
    np.testing.assert_array_equal(jg(X, 2), X * X)
    assert g.traces == 2


def test_negative_static_argnums():
    jg = fnad.jit(lambda x, mode: fnp.sum(x) if mode == "sum" else fnp.max(x),
                  static_argnums=(-1,))
    assert jg(X, "sum") == np.sum(X)
    assert jg(X, "max") == np.max(X)


def test_static_argument_that_is_not_hashable_is_refused():
    jg = fnad.jit(lambda x, sizes: x * len(sizes), static_argnums=1)
    with pytest.raises(TypeError, match=r"static argument 1 is a list.*hashable.*tuple"):
        jg(X, [1, 2])
    np.testing.assert_array_equal(jg(X, (1, 2)), 2 * X)


def test_static_argnums_out_of_range():
    with pytest.raises(ValueError, match="static_argnums=5 is out of range"):
        fnad.jit(lambda x: x, static_argnums=5)(X)


def test_a_non_array_argument_must_be_static():
    with pytest.raises(TypeError, match="static_argnums"):
        fnad.jit(lambda x, s: x * len(s))(X, "abc")


def test_keyword_arguments():
    g = Counting(lambda x, *, scale=1.0, shift=None: x * scale + (0 if shift is None else shift))
    jg = fnad.jit(g)
    np.testing.assert_array_equal(jg(X, scale=2.0), X * 2.0)
    np.testing.assert_array_equal(jg(X, scale=3.0), X * 3.0)
    assert g.traces == 1
    np.testing.assert_array_equal(jg(X, scale=2.0, shift=Y), X * 2.0 + Y)
    assert g.traces == 2


# ----------------------------------------------------------------------------- errors


def test_control_flow_on_a_staged_value_explains_the_ways_out():
    def relu_if(x):
        if fnp.sum(x) > 0:
            return x
        return -x
    with pytest.raises(fnad.ConcretizationError) as info:
        fnad.jit(relu_if)(X)
    msg = str(info.value)
    assert "bool()" in msg and "static_argnums" in msg and "fnp.where" in msg
    for conv in (int, float):
        with pytest.raises(fnad.ConcretizationError, match=f"{conv.__name__}()"):
            fnad.jit(lambda x, c=conv: x * c(fnp.sum(x)))(X)


def test_plain_numpy_on_a_staged_value_explains_the_ways_out():
    with pytest.raises(fnad.ConcretizationError, match=r"converted to a NumPy array.*fnad.numpy"
                       r".*static_argnums.*outside the jitted function"):
        fnad.jit(lambda x: np.sin(np.asarray(x)))(X)


def test_escaped_tracer_is_an_error():
    leaked = []

    def leak(x):
        leaked.append(x * 2)
        return x + 1
    fnad.jit(leak)(X)
    with pytest.raises(fnad.UnexpectedTracerError):
        fnp.sum(leaked[0])


def test_a_non_array_output_is_refused():
    with pytest.raises(TypeError, match="output leaf 0 is a str"):
        fnad.jit(lambda x: "no")(X)


# ----------------------------------------------------------------------------- pytrees


def test_pytrees_in_and_out_and_multiple_outputs():
    def step(params, batch):
        w, b = params["w"], params["b"]
        pred = batch[0] @ w + b
        err = pred - batch[1]
        return {"loss": fnp.mean(err ** 2), "pred": pred}, (w * 2, [b])

    params = {"w": np.arange(6.0).reshape(3, 2), "b": np.array([0.5, -0.5])}
    batch = (X, np.ones((2, 2)))
    expect = step(params, batch)
    got = fnad.jit(step)(params, batch)
    assert fnad.tree_structure(got) == fnad.tree_structure(expect)
    for a, e in zip(fnad.tree_leaves(got), fnad.tree_leaves(expect)):
        np.testing.assert_array_equal(a, e)


def test_outputs_that_are_inputs_or_constants():
    out = fnad.jit(lambda x, y: (x, 3.0, y * 1.0))(X, Y)
    np.testing.assert_array_equal(out[0], X)
    assert out[1] == 3.0
    np.testing.assert_array_equal(out[2], Y)


# ----------------------------------------------------------------------------- closures


def test_closure_over_an_array_is_a_constant():
    w = np.array([1.0, 2.0, 3.0])
    jg = fnad.jit(lambda x: fnp.sum(x * w))
    assert jg(X) == np.sum(X * w)
    np.testing.assert_array_equal(fnad.grad(jg)(X), np.broadcast_to(w, X.shape))


def test_a_broadcast_constant_keeps_its_zero_strides():
    # sum's cotangent is a broadcast view; copied contiguous, the matmul in its gradient took
    # BLAS instead of NumPy's own loop, and x's gradient was 1 ulp off eager's
    rng = np.random.default_rng(0)
    x, w = (rng.standard_normal(s).astype(np.float32) for s in ((4, 6), (6, 6)))
    g = fnad.grad(lambda x, w: fnp.sum(x[0] @ w, axis=0), argnums=(0, 1))
    for opt in (False, True):
        for a, b in zip(fnad.jit(g, optimize=opt)(x, w), g(x, w)):
            assert a.tobytes() == b.tobytes()
    v = np.broadcast_to(np.float32(1), (6, 1))
    (c,) = [a for e in fnad.make_graph(lambda x: x @ v)(x[:, :6]).eqns for a in e.args
            if isinstance(a, np.ndarray)]
    assert c.strides == (0, 0) and not c.flags.writeable
    np.testing.assert_array_equal(c, v)


def test_closure_over_an_outer_tracer():
    def outer(y):
        inner = fnad.jit(lambda x: fnp.sum(fnp.sin(x * y)))  # y is grad's tracer
        return inner(X)
    expect = fnad.grad(lambda y: fnp.sum(fnp.sin(X * y)))(Y)
    np.testing.assert_allclose(fnad.grad(outer)(Y), expect, rtol=1e-14)


# ----------------------------------------------------------------------------- composition


def _eq(a, b, exact=True):
    for u, v in zip(fnad.tree_leaves(a), fnad.tree_leaves(b)):
        if exact:
            np.testing.assert_array_equal(u, v)
        else:
            np.testing.assert_allclose(u, v, rtol=1e-13, atol=1e-15)


def test_jit_of_jit():
    inner = fnad.jit(lambda x: fnp.exp(x) * 2)
    outer = fnad.jit(lambda x: fnp.sum(inner(x) + inner(x * 2)))
    assert outer(X) == f_eager(X)
    _eq(fnad.grad(outer)(X), fnad.grad(f_eager)(X))


def f_eager(x):
    return fnp.sum(fnp.exp(x) * 2 + fnp.exp(x * 2) * 2)


@pytest.mark.parametrize("transform", ["grad", "jacrev", "jacfwd", "hessian"])
def test_transforms_in_both_orders(transform):
    t = getattr(fnad, transform)
    expect = t(f)(X)
    _eq(fnad.jit(t(f))(X), expect)
    _eq(t(fnad.jit(f))(X), expect)
    _eq(fnad.jit(t(fnad.jit(f)))(X), expect)


def test_jvp_and_vjp_in_both_orders():
    tangent = np.ones_like(X)
    expect = fnad.jvp(f, (X,), (tangent,))
    _eq(fnad.jit(lambda x, t: fnad.jvp(f, (x,), (t,)))(X, tangent), expect)
    _eq(fnad.jvp(fnad.jit(f), (X,), (tangent,)), expect)
    out, back = fnad.vjp(fnad.jit(lambda x: fnp.tanh(x) * x), X)
    out2, back2 = fnad.vjp(lambda x: fnp.tanh(x) * x, X)
    _eq(out, out2)
    _eq(back(np.ones_like(X)), back2(np.ones_like(X)))


def test_value_and_grad_with_argnums_and_aux():
    def loss(w, b, x):
        pred = x @ w + b
        return fnp.mean(pred ** 2), pred
    w, b = np.arange(6.0).reshape(3, 2), np.array([0.1, -0.2])
    vg = fnad.value_and_grad(loss, argnums=(0, 1), has_aux=True)
    _eq(fnad.jit(vg)(w, b, X), vg(w, b, X))
    _eq(fnad.value_and_grad(fnad.jit(loss), argnums=(0, 1), has_aux=True)(w, b, X),
        vg(w, b, X))


def test_checkpoint_in_both_orders():
    body = fnad.checkpoint(lambda x: fnp.sin(fnp.tanh(x) * 3.0))
    g = lambda x: fnp.sum(body(x) ** 2)
    expect = fnad.grad(lambda x: fnp.sum(fnp.sin(fnp.tanh(x) * 3.0) ** 2))(X)
    _eq(fnad.jit(fnad.grad(g))(X), expect)
    _eq(fnad.grad(fnad.jit(g))(X), expect)
    _eq(fnad.grad(lambda x: fnp.sum(fnad.checkpoint(fnad.jit(
        lambda y: fnp.sin(fnp.tanh(y) * 3.0)))(x) ** 2))(X), expect)


def _clip_gradient():
    @fnad.custom_vjp
    def clip_grad(x):
        return x * 1.0

    def fwd(x):
        return x * 1.0, None

    def bwd(_, g):
        return (fnp.clip(g, -0.5, 0.5),)
    clip_grad.defvjp(fwd, bwd)
    return clip_grad


def test_custom_vjp_in_both_orders():
    clip = _clip_gradient()
    g = lambda x: fnp.sum(clip(x) * X * 3.0)
    expect = np.clip(X * 3.0, -0.5, 0.5)
    _eq(fnad.grad(g)(X), expect)
    _eq(fnad.jit(fnad.grad(g))(X), expect)  # the custom rule is used inside the trace
    _eq(fnad.grad(fnad.jit(g))(X), expect)
    assert fnad.jit(g)(X) == g(X)


def test_stop_gradient_under_jit():
    g = lambda x: fnp.sum(x * fnad.stop_gradient(x))
    _eq(fnad.jit(fnad.grad(g))(X), X)
    _eq(fnad.grad(fnad.jit(g))(X), X)


def test_make_graph_of_a_gradient_prints_and_runs():
    graph = fnad.make_graph(fnad.grad(f))(X)
    text = str(graph)
    assert text.startswith("{ lambda") and "tanh" in text
    _eq(graph(X), fnad.grad(f)(X))


def test_graph_of_the_jitted_function():
    jg = fnad.jit(f)
    graph = jg.graph(X)
    assert "sin" in str(graph) and graph.primitive_counts()
