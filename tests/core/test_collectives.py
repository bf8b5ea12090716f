"""fnad.lax.psum / pmean / pmax / pmin / all_gather / axis_index over vmap(axis_name=...)
(issue 33): values, under grad (inside and outside the vmap), jit in both orders and nested
named vmaps, against jax.lax where jax is installed; and the unbound-name error."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp

L = fnad.lax
XS = np.arange(6.0).reshape(3, 2) - 1.5
W = np.arange(6.0).reshape(3, 2)


def _cases(lax, np_):
    return {
        "psum": lambda x: x / lax.psum(x * x, "i"),
        "pmean": lambda x: x - lax.pmean(x, "i"),
        "pmax": lambda x: x - lax.pmax(x, "i"),
        "pmin": lambda x: x - lax.pmin(x, "i"),
        "psum_const": lambda x: x * lax.psum(1.0, "i"),
        "psum_tree": lambda x: lax.psum({"a": x, "b": (2 * x,)}, "i")["b"][0],
        "all_gather": lambda x: lax.all_gather(x, "i"),
        "all_gather_axis1": lambda x: lax.all_gather(x, "i", axis=1),
        "all_gather_tiled": lambda x: lax.all_gather(x, "i", tiled=True),
        "axis_index": lambda x: x * lax.axis_index("i"),
        "grad_inside": lambda x: _grad(np_)(lambda v: np_.sum(v * lax.psum(v, "i")))(x),
        "grad_pmean": lambda x: _grad(np_)(lambda v: np_.sum(v * lax.pmean(v, "i")))(x),
        "grad_gather": lambda x: _grad(np_)(lambda v: np_.sum(lax.all_gather(v, "i") * W))(x),
    }


def _grad(np_):
    return fnad.grad if np_ is fnp else __import__("jax").grad


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


@pytest.mark.parametrize("name", list(_cases(L, fnp)))
@pytest.mark.parametrize("wrap", ["vmap", "jit(vmap)"])
def test_collectives_match_jax(name, wrap):
    jax = _jax()
    ours = fnad.vmap(_cases(L, fnp)[name], axis_name="i")
    theirs = jax.vmap(_cases(jax.lax, jax.numpy)[name], axis_name="i")
    if wrap == "jit(vmap)":
        ours, theirs = fnad.jit(ours), jax.jit(theirs)
    np.testing.assert_allclose(ours(XS), theirs(XS), rtol=1e-14, atol=1e-15)


def test_grad_outside_the_vmap():
    def loss(xs):
        return fnp.sum(fnad.vmap(lambda x: fnp.sum(x * L.pmean(x, "i")), axis_name="i")(xs))
    want = 2 * XS.mean(0) * np.ones_like(XS)
    np.testing.assert_allclose(fnad.grad(loss)(XS), want, rtol=1e-14)
    np.testing.assert_allclose(fnad.jit(fnad.grad(loss))(XS), want, rtol=1e-14)


def test_jvp_of_psum():
    f = fnad.vmap(lambda x: L.psum(x, "i"), axis_name="i")
    out, t = fnad.jvp(f, (XS,), (np.ones_like(XS),))
    np.testing.assert_allclose(out, np.broadcast_to(XS.sum(0), XS.shape))
    np.testing.assert_allclose(t, np.full(XS.shape, 3.0))


def test_nested_named_axes():
    xs = np.arange(24.0).reshape(2, 3, 4)
    f = fnad.vmap(fnad.vmap(lambda x: L.psum(x, "j") - L.psum(x, "i"), axis_name="j"),
                  axis_name="i")
    want = xs.sum(1, keepdims=True) - xs.sum(0, keepdims=True)
    np.testing.assert_allclose(f(xs), want)
    both = fnad.vmap(fnad.vmap(lambda x: L.psum(x, ("i", "j")), axis_name="j"), axis_name="i")
    np.testing.assert_allclose(both(xs), np.broadcast_to(xs.sum((0, 1)), xs.shape))
    inner_jit = fnad.vmap(fnad.jit(lambda x: x / L.psum(x, "i")), axis_name="i")
    np.testing.assert_allclose(inner_jit(xs[0] + 1), (xs[0] + 1) / (xs[0] + 1).sum(0))


def test_unbound_axis_name():
    with pytest.raises(NameError, match="unbound axis name: 'i'"):
        L.psum(XS, "i")
    with pytest.raises(NameError, match="unbound axis name: 'k'"):
        fnad.vmap(lambda x: L.psum(x, "k"), axis_name="i")(XS)
