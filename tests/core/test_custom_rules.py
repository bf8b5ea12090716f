"""custom_vjp and checkpoint through every trace: each trace has its own hook for them
(reverse mode records the rule, forward mode refuses a custom VJP, vmap batches the function
and its rules, jit stages one primitive)."""

import warnings

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad.extend import (as_primitive, defabstract_eval, defbatch, defjvp, defvjp,
                         elementwise_batch, primitive, same_rule)

RNG = np.random.default_rng(7)


# A custom rule that differs from the true derivative (twice it), so a test can tell which one
# a transform used.
@fnad.custom_vjp
def sin2(x):
    return fnp.sin(x)


sin2.defvjp(lambda x: (fnp.sin(x), fnp.cos(x)), lambda c, g: (2.0 * g * c,))


def _scaled(fn, x, k):
    return fn(x) * k


scaled = fnad.custom_vjp(_scaled, nondiff_argnums=(0,))
scaled.defvjp(lambda fn, x, k: (fn(x) * k, (x, k)),
              lambda fn, res, g: (3.0 * g * res[1], fnp.sum(g * fn(res[0]))))


def _no_fallback(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error", fnad._batching.vmap.BatchingFallbackWarning)
        return call()


def test_vmap_of_custom_vjp_equals_the_loop_without_fallback():
    xs = RNG.standard_normal((5, 3))
    got = _no_fallback(lambda: fnad.vmap(sin2)(xs))
    np.testing.assert_array_equal(got, np.stack([sin2(x) for x in xs]))


def test_vmap_of_custom_vjp_with_nondiff_argnums_equals_the_loop():
    xs, ks = RNG.standard_normal((4, 3)), RNG.standard_normal(4)
    got = _no_fallback(lambda: fnad.vmap(lambda x, k: scaled(fnp.tanh, x, k))(xs, ks))
    np.testing.assert_array_equal(got, np.stack([scaled(fnp.tanh, x, k) for x, k in zip(xs, ks)]))
    got = _no_fallback(lambda: fnad.vmap(lambda x: scaled(fnp.tanh, x, 2.0))(xs))
    np.testing.assert_array_equal(got, np.stack([scaled(fnp.tanh, x, 2.0) for x in xs]))


@pytest.mark.parametrize("order", ["grad_of_vmap", "vmap_of_grad", "jit_vmap", "vmap_jit"])
def test_vmap_and_grad_use_the_custom_rule_in_either_order(order):
    xs = RNG.standard_normal((4, 3))
    want = 2.0 * np.cos(xs)  # the custom rule's (deliberately doubled) derivative
    loss = lambda x: fnp.sum(sin2(x))
    if order == "grad_of_vmap":
        got = fnad.grad(lambda xs: fnp.sum(fnad.vmap(sin2)(xs)))(xs)
    elif order == "vmap_of_grad":
        got = fnad.vmap(fnad.grad(loss))(xs)
    elif order == "jit_vmap":
        got = fnad.jit(fnad.vmap(fnad.grad(loss)))(xs)
    else:
        got = fnad.vmap(fnad.jit(fnad.grad(loss)))(xs)
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_grad_of_vmap_with_an_unbatched_argument_sums_its_cotangent():
    xs, k = RNG.standard_normal((4, 3)), 0.7
    f = lambda k, xs: fnp.sum(_no_fallback(lambda: fnad.vmap(
        lambda x: scaled(fnp.tanh, x, k))(xs)))
    gk, gx = fnad.grad(f, argnums=(0, 1))(k, xs)
    np.testing.assert_allclose(gk, np.sum(np.tanh(xs)), rtol=1e-13)
    np.testing.assert_allclose(gx, np.full_like(xs, 3.0 * k), rtol=1e-14)


def test_forward_mode_of_custom_vjp_is_refused_at_any_level():
    x = RNG.standard_normal(3)
    with pytest.raises(TypeError, match="forward-mode"):
        fnad.jvp(sin2, (x,), (x,))
    with pytest.raises(TypeError, match="forward-mode"):
        fnad.jvp(fnad.vmap(sin2), (x[None],), (x[None],))
    with pytest.raises(TypeError, match="forward-mode"):
        fnad.jvp(fnad.jit(sin2), (x,), (x,))


# ----------------------------------------------------------------------------- checkpoint

_calls = []
_counted = primitive(lambda x: (_calls.append(1), np.tanh(x))[1], "test_counted_tanh")
defvjp(_counted, lambda g, ans, x: g * (1 - ans * ans))
defjvp(_counted, lambda t, ans, x: t * (1 - ans * ans))
defabstract_eval(_counted, same_rule)
defbatch(_counted, elementwise_batch(as_primitive(_counted)))


def _block(x, w):
    return _counted(x @ w)


def _loss(ck):
    return lambda w, x: fnp.sum(ck(ck(x, w), w) ** 2)


def test_checkpoint_recomputes_under_jit_of_grad():
    x, w = RNG.standard_normal((4, 5)), RNG.standard_normal((5, 5)) * 0.5
    want = fnad.grad(_loss(_block))(w, x)
    step = fnad.jit(fnad.grad(_loss(fnad.checkpoint(_block))))
    step(w, x)  # traced and compiled
    _calls.clear()
    got = step(w, x)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert len(_calls) == 4  # two blocks, each run forward and again in the backward pass


@pytest.mark.parametrize("transform", ["grad", "grad_of_jit", "jit_of_grad", "grad_of_vmap"])
def test_checkpoint_values_and_recomputation(transform):
    x, w = RNG.standard_normal((4, 5)), RNG.standard_normal((5, 5)) * 0.5
    ck = fnad.checkpoint(_block)
    want = fnad.grad(_loss(_block))(w, x)
    if transform == "grad":
        f = fnad.grad(_loss(ck))
    elif transform == "grad_of_jit":
        f = fnad.grad(fnad.jit(_loss(ck)))
    elif transform == "jit_of_grad":
        f = fnad.jit(fnad.grad(_loss(ck)))
    else:
        want = fnad.grad(lambda w, xs: fnp.sum(fnad.vmap(lambda x: _loss(_block)(w, x))(xs)))(
            w, x[None])
        f = lambda w, x: fnad.grad(lambda w, xs: fnp.sum(fnad.vmap(
            lambda x: _loss(ck)(w, x))(xs)))(w, x[None])
    f(w, x)
    _calls.clear()
    np.testing.assert_allclose(f(w, x), want, rtol=1e-13)
    assert len(_calls) == 4


def test_checkpoint_under_jvp_and_vmap_gives_the_function_values():
    x, w = RNG.standard_normal((3, 5)), RNG.standard_normal((5, 5))
    ck = fnad.checkpoint(_block)
    t = RNG.standard_normal(w.shape)
    want = fnad.jvp(lambda w: _block(x, w), (w,), (t,))
    got = fnad.jvp(lambda w: ck(x, w), (w,), (t,))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-14)
    np.testing.assert_allclose(fnad.vmap(ck, in_axes=(0, None))(x, w), _block(x, w), rtol=1e-14)
    hvp = fnad.grad(lambda w: fnad.jvp(lambda w: fnp.sum(ck(x, w)), (w,), (t,))[1])(w)
    hvp_plain = fnad.grad(lambda w: fnad.jvp(lambda w: fnp.sum(_block(x, w)), (w,), (t,))[1])(w)
    np.testing.assert_allclose(hvp, hvp_plain, rtol=1e-12)


def test_checkpoint_staged_as_one_equation_the_optimiser_keeps():
    x, w = RNG.standard_normal((4, 5)), RNG.standard_normal((5, 5))
    g = fnad.jit(fnad.grad(_loss(fnad.checkpoint(_block)))).graph(w, x)
    counts = g.primitive_counts()
    assert counts.get("checkpoint(_block)") == 2, counts
    assert counts.get("test_counted_tanh") == 2, counts  # the two recomputations
