"""JAX's `precision=` and `preferred_element_type=` on fnad.numpy's products (dot, matmul,
einsum, tensordot, inner, vdot): values and dtypes against jax.numpy, the accepted precision
forms, clear errors, and the keywords under grad, vmap and jit."""

import numpy as np
import pytest

import fnad
import fnad.lax as flax
import fnad.numpy as fnp

RNG = np.random.default_rng(0)
A8 = RNG.integers(-100, 100, (3, 4)).astype(np.int8)
B8 = RNG.integers(-100, 100, (4, 5)).astype(np.int8)
AF = RNG.standard_normal((3, 4)).astype(np.float32)
BF = RNG.standard_normal((4, 5)).astype(np.float32)

# (name, call with a namespace `m` and keywords)
PRODUCTS = [
    ("matmul", lambda m, a, b, **k: m.matmul(a, b, **k)),
    ("dot", lambda m, a, b, **k: m.dot(a, b, **k)),
    ("einsum", lambda m, a, b, **k: m.einsum("ij,jk->ik", a, b, **k)),
    ("tensordot", lambda m, a, b, **k: m.tensordot(a, b, 1, **k)),
    ("inner", lambda m, a, b, **k: m.inner(a, b.T, **k)),
    ("vdot", lambda m, a, b, **k: m.vdot(a, b.T[:3], **k)),
]
IDS = [n for n, _ in PRODUCTS]


@pytest.mark.parametrize("name,f", PRODUCTS, ids=IDS)
@pytest.mark.parametrize("pet", [np.int32, np.float32])
def test_preferred_element_type_matches_jax(name, f, pet):
    jnp = pytest.importorskip("jax.numpy")
    got = f(fnp, A8, B8, preferred_element_type=pet)
    want = f(jnp, A8, B8, preferred_element_type=pet)
    assert np.asarray(got).dtype == np.asarray(want).dtype == np.dtype(pet)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    # the int8 product would wrap around; the preferred type accumulates without it
    assert np.abs(np.asarray(got)).max() > 127


@pytest.mark.parametrize("name,f", PRODUCTS, ids=IDS)
def test_precision_ignored_matches_jax(name, f):
    jax = pytest.importorskip("jax")
    got = f(fnp, AF, BF, precision=flax.Precision.HIGHEST)
    want = f(jax.numpy, AF, BF, precision=jax.lax.Precision.HIGHEST)
    assert np.asarray(got).dtype == np.asarray(want).dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("precision", [
    None, "default", "high", "highest", "bfloat16", "tensorfloat32", "float32", "HIGHEST",
    flax.Precision.DEFAULT, flax.Precision.HIGH, flax.Precision.HIGHEST,
    (flax.Precision.HIGHEST, "default"), ["high", None]])
@pytest.mark.parametrize("name,f", PRODUCTS, ids=IDS)
def test_precision_forms_give_the_plain_product(name, f, precision):
    np.testing.assert_array_equal(f(fnp, AF, BF, precision=precision), f(fnp, AF, BF))


@pytest.mark.parametrize("name,f", PRODUCTS, ids=IDS)
@pytest.mark.parametrize("precision", ["medium", 3, ("high", "high", "high")])
def test_bad_precision_names_the_function(name, f, precision):
    with pytest.raises(ValueError, match=f"fnad.numpy.{name}: precision must be"):
        f(fnp, AF, BF, precision=precision)


def test_bad_preferred_element_type_is_clear():
    with pytest.raises(TypeError, match="fnad.numpy.dot: preferred_element_type must be"):
        fnp.dot(AF, BF, preferred_element_type="not a dtype")


def test_lax_precision_is_the_numpy_one_and_lax_still_takes_it():
    from fnad.numpy._precision import Precision
    assert flax.Precision is Precision
    out = flax.dot_general(A8, B8, (((1,), (0,)), ((), ())), precision="highest",
                           preferred_element_type=np.int32)
    np.testing.assert_array_equal(out, A8.astype(np.int32) @ B8.astype(np.int32))


def test_plain_matmul_keeps_numpy_keywords():
    assert fnp.matmul(AF, BF).dtype == np.float32
    assert fnp.matmul(AF, BF, dtype=np.float64).dtype == np.float64
    out = np.empty((3, 5), np.float32)
    assert fnp.matmul(AF, BF, out=out) is out
    np.testing.assert_array_equal(AF @ fnp.asarray(BF), fnp.matmul(AF, BF))


@pytest.mark.parametrize("name,f", PRODUCTS, ids=IDS)
def test_grad_through_preferred_type(name, f):
    # float32 operands computed in float64: the gradient comes back in the operand's dtype
    def loss(a):
        return fnp.sum(f(fnp, a, BF, precision="highest", preferred_element_type=np.float64))
    g = fnad.grad(loss)(AF)
    assert g.dtype == np.float32
    want = BF.T[:3] if name == "vdot" else np.broadcast_to(BF.sum(1), (3, 4))
    np.testing.assert_allclose(g, want, rtol=1e-6)


def test_grad_matches_jax():
    jax = pytest.importorskip("jax")
    for name, f in PRODUCTS:
        got = fnad.grad(lambda a, f=f: fnp.sum(fnp.sin(
            f(fnp, a, BF, precision="high", preferred_element_type=np.float32))))(AF)
        want = jax.grad(lambda a, f=f: jax.numpy.sum(jax.numpy.sin(
            f(jax.numpy, a, BF, precision="high", preferred_element_type=np.float32))))(AF)
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("name,f", PRODUCTS, ids=IDS)
def test_vmap_and_jit(name, f):
    batch = np.stack([A8, A8[::-1], -A8])

    def one(a):
        return f(fnp, a, B8, precision=flax.Precision.HIGH, preferred_element_type=np.int32)
    want = np.stack([one(a) for a in batch])
    assert want.dtype == np.int32
    got = fnad.vmap(one)(batch)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)
    jitted = fnad.jit(one)(A8)
    assert jitted.dtype == np.int32
    np.testing.assert_array_equal(jitted, want[0])


# ----------------------------------------------------------------------------- dtype= of sums

INT_TYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64]


@pytest.mark.parametrize("fname", ["sum", "prod", "cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [None, np.int8, np.int16, np.int32, np.uint16, np.int64,
                                   np.float32])
def test_integer_dtype_is_honoured_as_numpy_does(fname, dtype):
    # NumPy: without dtype= small integers (and booleans) accumulate in the platform integer;
    # with dtype=int32 the result is int32
    for t in INT_TYPES:
        a = (np.arange(12).reshape(3, 4) % 5 + 1).astype(t)
        for axis in (None, 1):
            got = getattr(fnp, fname)(a, axis=axis, dtype=dtype)
            want = getattr(np, fname)(a, axis=axis, dtype=dtype)
            assert np.asarray(got).dtype == np.asarray(want).dtype, (t, axis)
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fname", ["sum", "prod", "cumsum", "cumprod"])
def test_integer_dtype_under_jit_and_vmap(fname):
    a = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    f = getattr(fnp, fname)
    want = getattr(np, fname)(a, axis=1, dtype=np.int16)
    assert want.dtype == np.int16
    got_jit = fnad.jit(lambda x: f(x, axis=1, dtype=np.int16))(a)
    got_vmap = fnad.vmap(lambda x: f(x, axis=0, dtype=np.int16))(a)
    for got in (got_jit, got_vmap):
        assert got.dtype == np.int16
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fname", ["prod", "cumsum", "cumprod"])
def test_float_dtype_keeps_gradients(fname):
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    f = getattr(fnp, fname)
    g = fnad.grad(lambda v: fnp.sum(f(v, axis=1, dtype=np.float64)))(x)
    g64 = fnad.grad(lambda v: fnp.sum(f(v, axis=1)))(x.astype(np.float64))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, g64, rtol=1e-5)
