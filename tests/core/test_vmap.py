"""fnad.vmap: in_axes/out_axes semantics, errors, nesting, composition with grad/jvp/jacobians
in both orders, the loop fallback, custom rules, and fnad_nn's layers."""

import warnings

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad_nn as nn
from fnad._batching.vmap import BatchingFallbackWarning
from fnad.extend import defbatch, primitive

R = np.random.default_rng(0)
X = R.standard_normal((3, 4))
W = R.standard_normal((4, 5))


def loop(f, *args, in_axes=0):
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    n = next(np.shape(a)[d] for a, d in zip(args, axes) if d is not None)
    outs = [f(*[a if d is None else np.take(a, i, axis=d) for a, d in zip(args, axes)])
            for i in range(n)]
    return fnad.tree_map(lambda *xs: np.stack(xs), *outs)


def close(a, b, tol=1e-12):
    for x, y in zip(fnad.tree_leaves(a), fnad.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


def f(x, w):
    return fnp.tanh(x @ w).sum() + fnp.sum(x ** 2)


# ----------------------------------------------------------------------------- axes


@pytest.mark.parametrize("in_axes", [(0, None), (1, None), (-1, None), (0, 0)])
def test_in_axes(in_axes):
    x = np.moveaxis(X, 0, in_axes[0])
    w = W if in_axes[1] is None else np.stack([W] * 3)
    close(fnad.vmap(f, in_axes=in_axes)(x, w), loop(f, x, w, in_axes=in_axes))


def test_pytree_in_axes_and_kwargs():
    params = {"w": W, "b": R.standard_normal(5)}
    xs = {"a": X, "c": R.standard_normal((5, 3))}

    def g(p, d, scale=1.0):
        return fnp.tanh(d["a"] @ p["w"] + p["b"]) * scale + d["c"].sum()
    out = fnad.vmap(g, in_axes=(None, {"a": 0, "c": 1}))(params, xs)
    want = np.stack([g(params, {"a": X[i], "c": xs["c"][:, i]}) for i in range(3)])
    close(out, want)
    out_kw = fnad.vmap(g, in_axes=(None, {"a": 0, "c": 1}))(params, xs, scale=np.ones(3))
    close(out_kw, want)


def test_out_axes():
    g = fnad.vmap(lambda x: (x * 2, fnp.sum(x)), out_axes=(1, 0))
    a, b = g(X)
    close(a, (X * 2).T)
    close(b, X.sum(1))
    close(fnad.vmap(lambda x: x + 1, out_axes=-1)(X), (X + 1).T)


def test_unbatched_output_broadcast_and_none():
    a, b = fnad.vmap(lambda x: (W, x), out_axes=(None, 0))(X)
    assert a is W
    close(b, X)
    close(fnad.vmap(lambda x: W)(X), np.stack([W] * 3))


def test_axis_size():
    out = fnad.vmap(lambda w: w * 2, in_axes=None, axis_size=4)(W)
    assert out.shape == (4, 4, 5)


def test_nested_vmap_outer_product():
    a, b = R.standard_normal(3), R.standard_normal(4)
    out = fnad.vmap(fnad.vmap(lambda x, y: x * y, in_axes=(None, 0)), in_axes=(0, None))(a, b)
    close(out, np.outer(a, b))
    m = fnad.vmap(fnad.vmap(fnp.dot, in_axes=(None, 1)), in_axes=(0, None))(X, W)
    close(m, X @ W)


# ----------------------------------------------------------------------------- errors


def test_mismatched_sizes_name_the_shapes():
    with pytest.raises(ValueError, match=r"(?s)vmap got inconsistent sizes.*\(3, 4\).*\(5,\)"):
        fnad.vmap(lambda a, b: a)(X, np.ones(5))


def test_bad_in_axes():
    with pytest.raises(ValueError, match="in_axes has 1 entries but .* 2 positional"):
        fnad.vmap(f, in_axes=(0,))(X, W)
    with pytest.raises(TypeError, match="in_axes must be an int, None or a pytree"):
        fnad.vmap(f, in_axes="0")
    with pytest.raises(ValueError, match=r"in_axes=2 is out of range .* shape \(3, 4\)"):
        fnad.vmap(f, in_axes=(2, None))(X, W)
    with pytest.raises(ValueError, match="does not match the structure"):
        fnad.vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": X})


def test_no_mapped_argument_needs_axis_size():
    with pytest.raises(ValueError, match="axis_size"):
        fnad.vmap(lambda w: w, in_axes=None)(W)


def test_out_axes_none_for_batched_output():
    with pytest.raises(ValueError, match="out_axes=None"):
        fnad.vmap(lambda x: x, out_axes=None)(X)


def test_python_control_flow_on_batched_value():
    with pytest.raises(TypeError, match="vmap: bool.*fnp.where"):
        fnad.vmap(lambda x: x if fnp.sum(x) > 0 else -x)(X)


def test_plain_numpy_on_batched_value():
    with pytest.raises(TypeError, match="vmap: a batched value .* fnp.take"):
        fnad.vmap(lambda i: W[i])(np.array([0, 1]))


def test_escaped_tracer():
    kept = []
    fnad.vmap(lambda x: kept.append(x) or x)(X)
    with pytest.raises(fnad.UnexpectedTracerError, match="vmap"):
        kept[0] + 1


# ----------------------------------------------------------------------------- composition


def test_vmap_of_grad_and_grad_of_vmap():
    g = fnad.grad(f)
    per = fnad.vmap(g, in_axes=(0, None))(X, W)
    close(per, loop(g, X, W, in_axes=(0, None)))
    close(fnad.grad(lambda x: fnad.vmap(f, in_axes=(0, None))(x, W).sum())(X), per)
    gw = fnad.vmap(fnad.grad(f, argnums=1), in_axes=(0, None))(X, W)  # per-example weight grads
    close(gw, loop(fnad.grad(f, argnums=1), X, W, in_axes=(0, None)))


def test_jvp_both_orders():
    t = R.standard_normal(X.shape)
    h = fnad.vmap(lambda x: fnp.sin(x @ W))
    out, tan = fnad.jvp(h, (X,), (t,))
    close(tan, np.cos(X @ W) * (t @ W))
    tan2 = fnad.vmap(lambda x, u: fnad.jvp(lambda y: fnp.sin(y @ W), (x,), (u,))[1])(X, t)
    close(tan2, tan)


@pytest.mark.parametrize("jac", [fnad.jacrev, fnad.jacfwd, fnad.hessian])
def test_jacobians_both_orders(jac):
    def g(x):
        return fnp.tanh(x @ W).sum() * fnp.sum(x ** 3)
    want = loop(jac(g), X)
    close(fnad.vmap(jac(g))(X), want, 1e-10)
    inner = jac(fnad.vmap(g))(X)  # block diagonal across the batch
    for i in range(3):
        block = inner[i, i] if jac is not fnad.hessian else inner[i, i, :, i]
        close(block, want[i], 1e-10)


def test_hessian_block_of_vmap():
    def g(x):
        return fnp.sum(fnp.sin(x) * x)
    h = fnad.hessian(lambda x: fnad.vmap(g)(x).sum())(X)
    for i in range(3):
        close(h[i, :, i, :], fnad.hessian(g)(X[i]), 1e-10)


def test_jacrev_rebuilt_from_vmap_of_vjp():
    def g(x):
        return fnp.tanh(x @ W)
    y, pull = fnad.vjp(g, X[0])
    rows = fnad.vmap(lambda ct: pull(ct)[0])(np.eye(5))
    close(rows, fnad.jacrev(g)(X[0]))
    cols = fnad.vmap(lambda t: fnad.jvp(g, (X[0],), (t,))[1])(np.eye(4))
    close(cols.T, fnad.jacfwd(g)(X[0]))


def test_eigh_and_svd_match_loop():
    a = R.standard_normal((3, 4, 4))
    a = a + np.swapaxes(a, 1, 2)
    w, v = fnad.vmap(fnp.linalg.eigh)(a)
    close(w, np.linalg.eigh(a)[0], 1e-10)
    close(np.abs(v), np.abs(np.linalg.eigh(a)[1]), 1e-10)
    s = fnad.vmap(lambda m: fnp.linalg.svd(m, full_matrices=False)[1])(a[:, :, :3])
    close(s, np.linalg.svd(a[:, :, :3], compute_uv=False), 1e-10)


# ----------------------------------------------------------------------------- rules


def test_fallback_warns_once_and_is_correct():
    sq = primitive(lambda x: np.cumsum(x[::-1])[::-1], "test_vmap_revcumsum")
    with pytest.warns(BatchingFallbackWarning, match="'test_vmap_revcumsum' has no batching"):
        out = fnad.vmap(sq)(X)
    close(out, np.stack([sq(x) for x in X]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fnad.vmap(sq)(X)  # no second warning


def test_defbatch_rule_is_used():
    calls = []
    sq = primitive(lambda x: x * x, "test_vmap_square")

    def rule(args, dims):
        calls.append(dims)
        return sq(args[0]), dims[0]
    defbatch(sq, rule)
    close(fnad.vmap(sq, in_axes=1)(X), (X * X).T)
    assert calls == [(1,)]


# ----------------------------------------------------------------------------- fnad_nn


KEY = fnad.random.PRNGKey(0)


def _nn_case(name):
    k1, k2 = fnad.random.split(KEY)
    if name == "linear":
        p = nn.init_linear(k1, 4, 5, dtype=np.float64)
        return p, R.standard_normal((3, 2, 4)), nn.linear
    if name == "layer_norm":
        p = nn.init_layer_norm(4, dtype=np.float64)
        p = fnad.tree_map(lambda a: a + R.standard_normal(a.shape), p)
        return p, R.standard_normal((3, 2, 4)), nn.layer_norm
    if name == "attention":
        return None, R.standard_normal((3, 2, 5, 4)), lambda p, x: \
            nn.scaled_dot_product_attention(x, x * 0.5, x, causal=True)
    if name == "conv2d":
        p = nn.init_conv2d(k1, 2, 3, 3, dtype=np.float64)
        return p, R.standard_normal((3, 2, 2, 6, 6)), lambda p, x: nn.conv2d(p, x, padding=1)
    if name == "xent":
        return None, R.standard_normal((3, 5)), lambda p, x: \
            nn.sparse_softmax_cross_entropy(x, np.array(1))
    raise KeyError(name)


@pytest.mark.parametrize("name", ["linear", "layer_norm", "attention", "conv2d", "xent"])
def test_nn_layers(name):
    p, xs, layer = _nn_case(name)
    close(fnad.vmap(layer, in_axes=(None, 0))(p, xs), loop(layer, p, xs, in_axes=(None, 0)),
          1e-10)

    def loss(q, x):
        return fnp.sum(fnp.sin(layer(q, x)))
    if p is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BatchingFallbackWarning)  # conv's weight grads
            per = fnad.vmap(fnad.grad(loss), in_axes=(None, 0))(p, xs)
        close(per, loop(fnad.grad(loss), p, xs, in_axes=(None, 0)), 1e-10)
    gx = fnad.vmap(fnad.grad(loss, argnums=1), in_axes=(None, 0))(p, xs)
    close(gx, loop(fnad.grad(loss, argnums=1), p, xs, in_axes=(None, 0)), 1e-10)


def test_sparse_xent_with_batched_labels():
    logits, labels = R.standard_normal((3, 2, 5)), np.array([[1, 0], [4, 4], [2, 3]])

    def loss(z, y):
        return nn.sparse_softmax_cross_entropy(z, y)
    close(fnad.vmap(loss)(logits, labels), loop(loss, logits, labels), 1e-12)
    close(fnad.vmap(fnad.grad(loss))(logits, labels), loop(fnad.grad(loss), logits, labels),
          1e-12)


def test_random_keys_batch():
    keys = fnad.random.split(fnad.random.PRNGKey(0), 4)
    x = R.standard_normal((4, 5))
    out = fnad.vmap(lambda k, v: v * fnad.random.bernoulli(k, 0.5, (5,))
                    + fnad.random.normal(k, (5,), np.float64))(keys, x)
    want = [x[i] * fnad.random.bernoulli(keys[i], 0.5, (5,))
            + fnad.random.normal(keys[i], (5,), np.float64) for i in range(4)]
    np.testing.assert_array_equal(out, np.stack(want))
    assert fnad.vmap(fnad.random.split)(keys).shape == (4, 2, 2)


def test_hessian_rebuilt_from_vmap_of_jvp_of_grad():
    def g(x):
        return fnp.sum(fnp.tanh(x @ W) ** 2) + fnp.prod(x)
    x = X[0]
    h = fnad.vmap(lambda t: fnad.jvp(fnad.grad(g), (x,), (t,))[1])(np.eye(4))
    close(h, fnad.hessian(g)(x), 1e-10)


X4 = R.standard_normal((3, 4, 5, 6))
IX = np.array([[0, 2], [1, 1], [3, 0]])
LAB = np.array([1, 0, 3])
INDEXING = [
    ("slice+array", lambda a: a[1:, [0, 2]], (X4,), 0),
    ("split advanced", lambda a: a[[0, 1], :, [0, 2]], (X4,), 0),
    ("ellipsis", lambda a: a[..., 1], (X4,), 0),
    ("newaxis", lambda a: a[None, 0, 1:3], (X4,), 0),
    ("batched index", lambda a, i: a[i, 0], (X4, IX), 0),
    ("batched index 2nd", lambda a, i: a[:, i], (X4, IX), 0),
    ("batched split", lambda a, i: a[1, :, i], (X4, IX), 0),
    ("take plain x", lambda a, i: fnp.take(a, i, axis=0), (X4[0], IX), (None, 0)),
    ("take_along_axis", lambda a, lab: fnp.take_along_axis(
        a, fnp.broadcast_to(lab, (4, 1, 6)), 1), (X4, LAB), 0),
    ("at add", lambda a, i: fnp.at(a)[i].add(1.0), (X4, IX), 0),
    ("at set", lambda a, i: fnp.at(a)[:, i].set(a[0, i]), (X4, IX), 0),
    ("at add plain x", lambda a, i: fnp.at(a)[i].add(1.0), (X4[0], IX), (None, 0)),
    ("grad of gather", fnad.grad(lambda a, lab: fnp.sum(fnp.tanh(a)[lab, :2])), (X4, LAB), 0),
    ("grad, plain x", fnad.grad(lambda a, lab: fnp.sum(fnp.tanh(a)[lab, :2])), (X4[0], LAB),
     (None, 0)),
]


@pytest.mark.parametrize("name,fun,args,in_axes", INDEXING, ids=[c[0] for c in INDEXING])
def test_indexing_and_scatter(name, fun, args, in_axes):
    close(fnad.vmap(fun, in_axes=in_axes)(*args), loop(fun, *args, in_axes=in_axes))
