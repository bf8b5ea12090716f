"""jit and vmap never return a wrong answer (issue 20): each test reproduces one way they did.

1. buffer reuse must not overwrite a buffer a view still reads (fused kernels, `out=`);
2. fnad.random keywords survive jit; 3. static arguments are keyed by type and value;
4. returned arrays are fresh where eager ones are; 5. closed-over arrays are constants of
the trace on every path; 6. NaN sign bits through fused kernels; 7. vmap's axis errors;
8. full/full_like (and linspace, meshgrid) with traced values; 9. odeint's dtypes and vmap.
"""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad._jit import fusion as gf
from fnad.scipy.integrate import odeint

BACKENDS = [b for b in ("numba", "numexpr", "numpy") if gf._importable(b)]


@pytest.fixture(autouse=True)
def _restore_backend(monkeypatch, tmp_path_factory):
    monkeypatch.setenv("FNAD_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "fnad_cache"))
    old = gf._backend
    yield
    gf._backend = old


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), np.nanmax(np.abs(
        a.astype(float) - b.astype(float)))


# --------------------------------------------------------------------------- 1. aliasing
X = np.arange(48 * 64.0).reshape(48, 64) / 100
VIEW_PROGRAMS = {
    "row": (lambda y: (y + y[0]) * 3.0, X),
    "keepdims row": (lambda y: (y - y[:1]) * 3.0, X),
    "last row": (lambda y: (y * y[-1]) + 1.0, X),
    "column": (lambda y: (y + y[:, :1]) * 3.0, X),
    "3-d": (lambda y: (y + y[1]) * 3.0, X.reshape(4, 12, 64)),
    "flat view": (lambda y: (y + y.reshape(-1)[5:69]) * 3.0, X),
    "transpose": (lambda y: (y + y.T) * 3.0, X[:48, :48]),
    "broadcast_to": (lambda y: (y + fnp.broadcast_to(y[3], y.shape)) * 3.0, X),
    "float32": (lambda y: (y + y[0]) * 3.0, X.astype(np.float32)),
    "int64": (lambda y: (y + y[0]) * 3, np.arange(48 * 64).reshape(48, 64)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", VIEW_PROGRAMS)
def test_a_kernel_never_overwrites_a_buffer_a_view_reads(backend, name):
    body, x = VIEW_PROGRAMS[name]
    gf.set_backend(backend)

    def f(x):
        return body(x * 2)  # y is a temporary the program owns, read through a view
    _same(fnad.jit(f)(x), f(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_grad_of_a_baseline_subtracted_loss(backend):
    gf.set_backend(backend)
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((64, 64)), rng.standard_normal((48, 64))

    def loss(w):
        r = fnp.maximum(x @ w, 0.0) * 2.0
        adv = (r - r[0]) * 1.5  # baseline: the first row
        return fnp.sum(adv * adv)
    _same(fnad.jit(fnad.grad(loss))(w), fnad.grad(loss)(w))


# --------------------------------------------------------------------------- 2. random keywords
KEY = fnad.random.PRNGKey(0)


@pytest.mark.parametrize("draw, check", [
    (lambda k: fnad.random.bernoulli(k, shape=(5,)), lambda y: y.shape == (5,)),
    (lambda k: fnad.random.normal(k, dtype=np.float64), lambda y: y.dtype == np.float64),
    (lambda k: fnad.random.categorical(k, np.zeros(4), shape=(3,)), lambda y: y.shape == (3,)),
    (lambda k: fnad.random.gumbel(k, dtype=np.float64), lambda y: y.dtype == np.float64),
], ids=["bernoulli shape", "normal dtype", "categorical shape", "gumbel dtype"])
def test_random_keywords_survive_jit(draw, check):
    eager, jitted = draw(KEY), fnad.jit(draw)(KEY)
    assert check(eager) and check(jitted)
    _same(jitted, eager)


# --------------------------------------------------------------------------- 3. static arguments
def test_static_arguments_equal_in_value_but_not_in_type_get_their_own_trace():
    g = fnad.jit(lambda x, v: fnp.full(x.shape, v), static_argnums=1)
    z = np.zeros(3)
    assert g(z, 1).dtype == np.int64
    assert g(z, 1.0).dtype == np.float64
    assert g(z, True).dtype == np.bool_
    assert g(z, (1,)).dtype == np.int64 and g(z, (1.0,)).dtype == np.float64
    assert g.cache_size() == 5


# --------------------------------------------------------------------------- 4. fresh outputs
def test_returned_arrays_do_not_alias_the_cache_or_the_input():
    h = fnad.jit(lambda x: (x + 1, fnp.zeros(3)))
    z = np.zeros(3)
    _, zeros = h(z)
    zeros[0] = 5.0  # the caller owns what it gets
    _same(h(z)[1], np.zeros(3))
    y = np.ones(3)
    assert fnad.jit(lambda y: y * 1.0)(y) is not y  # x * 1 is simplified away, not its copy
    assert fnad.jit(lambda y: y)(y) is y  # eager returns y itself: so does jit
    a, b = fnad.jit(lambda x: (x * 2.0, x * 2.0))(y)  # CSE merges them; eager gives two
    assert a is not b and not np.shares_memory(a, b)
    a, b = fnad.jit(lambda x: (lambda t: (t, t))(x * 2.0))(y)  # eager gives one, twice
    assert a is b
    w = np.arange(3.0)
    out = fnad.jit(lambda x: (x, w))(y)[1]
    assert out is not w and out.flags.writeable
    f = fnad.jit(lambda x: (fnp.sum(x * 2.0), fnp.zeros(3)))  # replayed under grad
    (_, aux), _ = fnad.value_and_grad(f, has_aux=True)(y)
    aux[0] = 1.0
    _same(fnad.value_and_grad(f, has_aux=True)(y)[0][1], np.zeros(3))


# --------------------------------------------------------------------------- 5. closures
def test_closed_over_arrays_are_constants_of_the_trace_on_every_path():
    w = np.ones(3)

    def f(x):
        return fnp.sum(x * w)
    jf = fnad.jit(f)
    x = np.ones(3)
    assert jf(x) == 3.0
    w[:] = 2.0  # changed after tracing: every path of jf keeps the traced value
    assert jf(x) == 3.0
    _same(fnad.grad(jf)(x), np.ones(3))
    _same(fnad.jvp(jf, (x,), (x,))[1], np.float64(3.0))
    _same(fnad.vmap(jf)(np.ones((2, 3))), np.full(2, 3.0))
    _same(fnad.jit(fnad.grad(jf))(x), np.ones(3))  # a new trace of grad(jf) replays jf's


def test_a_custom_vjp_body_closing_over_an_array_is_traced_once():
    w = np.ones(3)

    @fnad.custom_vjp
    def scale(x):
        return x * w

    scale.defvjp(lambda x: (x * w, None), lambda res, g: (g * w,))
    jf = fnad.jit(lambda x: fnp.sum(scale(x)))
    x = np.ones(3)
    assert jf(x) == 3.0
    w[:] = 2.0  # fun, fwd and bwd keep the traced values on every path
    assert jf(x) == 3.0
    _same(fnad.grad(jf)(x), np.ones(3))
    _same(fnad.vmap(jf)(np.ones((2, 3))), np.full(2, 3.0))
    _same(fnad.vmap(fnad.grad(jf))(np.ones((2, 3))), np.ones((2, 3)))


# --------------------------------------------------------------------------- 6. NaN sign bits
NAN_PROGRAMS = {
    "-(x*x)": lambda x, y: fnp.copysign(1.0, -(x * x)),
    "-(x*1.5)": lambda x, y: fnp.copysign(1.0, -(x * 1.5)),
    "x*-1": lambda x, y: fnp.copysign(1.0, (x * 1.5) * -1.0),
    "x/-1": lambda x, y: fnp.copysign(1.0, (x * 1.5) / -1),
    "-0.0-x": lambda x, y: fnp.copysign(1.0, -0.0 - (x * 1.5)),
    "-x+y": lambda x, y: fnp.copysign(1.0, -x + y),
    "abs": lambda x, y: fnp.copysign(1.0, fnp.abs(x * 2.0) - y),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", NAN_PROGRAMS)
def test_nan_sign_bits_are_numpys_in_fused_kernels(backend, name):
    gf.set_backend(backend)
    x = np.full(2048, np.nan)
    x[::2] = -np.nan
    x[1::4] = 1.5
    y = np.full(2048, np.nan)
    y[::3] = 2.0
    f = NAN_PROGRAMS[name]
    _same(fnad.jit(f)(x, y), f(x, y))


# --------------------------------------------------------------------------- 7. vmap axes
def test_vmap_out_axes_beyond_the_rank_raise():
    with pytest.raises(ValueError, match="out_axes=2 is out of range"):
        fnad.vmap(lambda a: a * 2, out_axes=2)(np.ones((2, 3)))
    with pytest.raises(ValueError, match="out_axes=-3 is out of range"):
        fnad.vmap(lambda a: a * 2, out_axes=-3)(np.ones((2, 3)))
    with pytest.raises(ValueError, match="out_axes=2 is out of range"):  # unbatched output
        fnad.vmap(lambda a: np.ones(3), out_axes=2)(np.ones((2, 3)))
    assert fnad.vmap(lambda a: a * 2, out_axes=1)(np.ones((2, 3))).shape == (3, 2)
    assert fnad.vmap(lambda a: a * 2, out_axes=-2)(np.ones((2, 3))).shape == (2, 3)


@pytest.mark.parametrize("transform", ["vmap", "jit", "grad", "value_and_grad", "jacrev",
                                       "jacfwd", "hessian"])
def test_transforms_of_a_non_function_raise_at_once(transform):
    with pytest.raises(TypeError, match="expected a function"):
        getattr(fnad, transform)(3)


# --------------------------------------------------------------------------- 8. creation
def test_full_and_full_like_are_differentiable_in_the_fill_value():
    assert fnad.grad(lambda x: fnp.sum(fnp.full_like(np.ones(3), x)))(2.0) == 3.0
    assert fnad.grad(lambda x: fnp.sum(fnp.full((3,), x)))(2.0) == 3.0
    _same(fnad.jit(lambda x: fnp.full((3,), x))(2.0), np.full(3, 2.0))
    _same(fnad.jit(lambda x: fnp.full_like(np.ones(3, np.float32), x))(2.0),
          np.full(3, 2.0, np.float32))
    _same(fnad.vmap(lambda x: fnp.full((3,), x))(np.arange(2.0)), np.arange(2.0)[:, None] *
          np.ones(3))
    _same(fnad.jit(fnad.grad(lambda x: fnp.sum(fnp.full((2, 3), x) ** 2)))(1.5),
          np.float64(18.0))


def test_linspace_and_meshgrid_of_traced_values():
    assert fnad.grad(lambda b: fnp.sum(fnp.linspace(0.0, b, 5)))(2.0) == 2.5
    _same(fnad.jit(lambda a, b: fnp.linspace(a, b, 7))(1.5, 3.0), np.linspace(1.5, 3.0, 7))
    a, b = np.array([0.5, 1.0]), np.array([2.0, 3.0, 4.0])
    for u, v in zip(fnad.jit(fnp.meshgrid)(a, b), np.meshgrid(a, b)):
        _same(u, v)
        assert u.flags.writeable


# --------------------------------------------------------------------------- 9. odeint
def test_odeint_keeps_float32_with_a_python_float_argument():
    y0, t = np.ones(2, np.float32), np.linspace(0, 1, 3, dtype=np.float32)
    ys = odeint(lambda y, t, a: -a * y, y0, t, 0.5)
    assert ys.dtype == np.float32
    g = fnad.grad(lambda y0: fnp.sum(odeint(lambda y, t, a: -a * y, y0, t, 0.5)))(y0)
    assert g.dtype == np.float32


def test_vmap_of_odeint_solves_each_example():
    def f(y, t, k):
        return -k * y + fnp.sin(t)
    ts = np.linspace(0, 1, 4)
    y0, k = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.1]]), np.array([0.5, 1.5, 2.0])
    _same(fnad.vmap(lambda y, k: odeint(f, y, ts, k))(y0, k),
          np.stack([odeint(f, y, ts, c) for y, c in zip(y0, k)]))

    def loss(y, k):
        return fnp.sum(odeint(f, y, ts, k) ** 2)
    grads = fnad.vmap(fnad.grad(loss, argnums=(0, 1)))(y0, k)
    loop = [fnad.grad(loss, argnums=(0, 1))(y, c) for y, c in zip(y0, k)]
    _same(grads[0], np.stack([g for g, _ in loop]))
    _same(grads[1], np.stack([g for _, g in loop]))
