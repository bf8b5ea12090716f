"""fnad.remat / fnad.checkpoint with policies (issue 33): nothing_saveable, everything_saveable,
dots_saveable, save_only_these_names with fnad.ad_checkpoint.checkpoint_name; the gradients
equal plain grad's bit for bit under grad, jit, vmap and second order, and the residual
bytes the vjp keeps (vjp_fun.residual_bytes) shrink as the policy says."""

import functools

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad.ad_checkpoint import checkpoint_name

P = fnad.checkpoint_policies
RNG = np.random.default_rng(0)
WS = [RNG.standard_normal((32, 32)) / 6 for _ in range(3)]
X = RNG.standard_normal((16, 32))
ACT = X.nbytes  # one activation (16 x 32 float64)


def block(x, w):
    h = checkpoint_name(x @ w, "pre")
    return fnp.tanh(fnp.sin(h) * 2.0 + h)  # four elementwise results after the product


def net(x, blk=block):
    for w in WS:
        x = blk(x, w)
    return fnp.sum(x ** 2)


POLICIES = {"nothing": P.nothing_saveable, "dots": P.dots_saveable,
            "names": P.save_only_these_names("pre"), "everything": P.everything_saveable,
            "no_batch_dots": P.dots_with_no_batch_dims_saveable,
            "all_but_pre": P.save_anything_except_these_names("pre"), "default": None}


@pytest.mark.parametrize("name", list(POLICIES))
def test_gradients_are_plain_grad_s(name):
    blk = fnad.remat(block, policy=POLICIES[name])
    want = fnad.grad(net)(X)
    np.testing.assert_array_equal(fnad.grad(lambda x: net(x, blk))(X), want)
    np.testing.assert_array_equal(fnad.jit(fnad.grad(lambda x: net(x, blk)))(X), want)
    per_row = fnad.vmap(fnad.grad(lambda r: net(r[None], blk)))(X)
    np.testing.assert_allclose(per_row, fnad.vmap(fnad.grad(lambda r: net(r[None])))(X),
                               rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", ["nothing", "dots"])
def test_second_order(name):
    w = WS[0][:3, :3]

    def f(x):
        return fnp.sum(fnp.tanh(x @ w) ** 2)

    g = fnad.checkpoint(f, policy=POLICIES[name])
    x = X[0, :3]
    np.testing.assert_allclose(fnad.hessian(g)(x), fnad.hessian(f)(x), rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(fnad.jacrev(fnad.grad(g))(x), fnad.hessian(f)(x), rtol=1e-13,
                               atol=1e-16)


def _residuals(blk):
    _, f_vjp = fnad.vjp(lambda x: net(x, blk), X)
    return f_vjp.residual_bytes()


def test_memory_saved():
    """Per block, plain grad keeps its input, the weight, the product and three elementwise
    results (the fourth is the next block's input); a checkpoint keeps the input and the
    weight, and dots_saveable / save_only_these_names("pre") the product besides."""
    weights = sum(w.nbytes for w in WS)
    plain = _residuals(block)
    kept = {name: _residuals(fnad.remat(block, policy=p)) for name, p in POLICIES.items()}
    tail = 2 * ACT + 8  # outside the blocks: the last block's result, its square, the sum
    inputs = 3 * ACT + weights + tail  # each block's input and weight
    assert kept["nothing"] == kept["default"] == inputs
    assert kept["dots"] == kept["names"] == kept["no_batch_dots"] == inputs + 3 * ACT
    assert kept["everything"] == plain
    assert plain == inputs + 3 * 4 * ACT  # the product and three more results per block
    # the tag is the product itself, which this policy keeps as the product's result
    assert kept["all_but_pre"] == plain


def test_policy_under_jit_of_grad():
    """The jitted gradient recomputes the products only where the policy does not keep
    them; the forward pass is one staged operation per block."""
    counts = {}
    for name in ("nothing", "dots", "names"):
        blk = fnad.remat(block, policy=POLICIES[name])
        graph = fnad.jit(fnad.grad(lambda x: net(x, blk))).graph(X)
        counts[name] = graph.primitive_counts().get("matmul", 0)
    # outside the staged forward passes: the recomputed products and the backward ones
    assert counts["nothing"] == 2 * len(WS)
    assert counts["dots"] == counts["names"] == len(WS)  # no product recomputed


def test_decorator_forms_and_errors():
    @functools.partial(fnad.checkpoint, policy=P.dots_saveable)
    def f(x):
        return fnp.sum(fnp.sin(x @ WS[0]))

    @fnad.checkpoint
    def g(x):
        return fnp.sum(fnp.sin(x @ WS[0]))

    np.testing.assert_array_equal(fnad.grad(f)(X), fnad.grad(g)(X))
    with pytest.raises(TypeError, match="policy must be a function"):
        fnad.checkpoint(g, policy="dots")
    np.testing.assert_array_equal(checkpoint_name(X, "a"), X)
    assert fnad.ad_checkpoint.checkpoint is fnad.checkpoint is fnad.remat


def test_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    from jax.ad_checkpoint import checkpoint_name as checkpoint_name_j

    def block_j(x, w):
        h = checkpoint_name_j(x @ w, "pre")
        return jnp.tanh(jnp.sin(h) * 2.0 + h)

    def net_j(x, blk):
        for w in WS:
            x = blk(x, w)
        return jnp.sum(x ** 2)

    pol = jax.checkpoint_policies.save_only_these_names("pre")
    theirs = jax.grad(lambda x: net_j(x, jax.checkpoint(block_j, policy=pol)))(X)
    ours = fnad.grad(lambda x: net(x, fnad.checkpoint(block, policy=POLICIES["names"])))(X)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


def test_print_saved_residuals_names_arguments_and_checkpoint_saves(capsys):
    def g(w, x):
        return fnp.sin(fnp.dot(w, x))

    w1, w2 = np.ones((5, 4), np.float32), np.ones((6, 5), np.float32)
    x = np.ones(4, np.float32)
    plain = fnad.ad_checkpoint.saved_residuals(lambda w1, w2, x: g(w2, g(w1, x)), w1, w2, x)
    kept = fnad.ad_checkpoint.saved_residuals(
        lambda w1, w2, x: fnad.checkpoint(g)(w2, fnad.checkpoint(g)(w1, x)), w1, w2, x)
    assert ("from the argument w1" in [d for _, d in plain]
            and (5,) in [s.shape for s, d in plain if d == "output of sin"])
    assert not any("sin" in d or "matmul" in d for _, d in kept)  # checkpoint keeps its inputs
    assert sum(1 for _, d in kept if d.startswith("output of checkpoint")) == 2
    fnad.ad_checkpoint.print_saved_residuals(lambda w, x: g(w, x), w1, x)
    out = capsys.readouterr().out.splitlines()
    assert "f32[5,4] from the argument w" in out and "f32[4] from the argument x" in out
    assert (fnad.checkpoint_policies.save_any_names_but_these
            is fnad.checkpoint_policies.save_anything_except_these_names)
