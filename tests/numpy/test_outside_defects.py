"""fnad.numpy against cases an outside corpus found wrong (issue 31): each test failed before
its fix. The reference is NumPy for values, PyTorch / central differences for derivatives."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad._batching.vmap import FALLBACK_COUNTS


@pytest.fixture(autouse=True)
def _fallbacks_uncounted():
    """vmap's loop fallbacks met here (nonzero, 0-d examples) stay out of the counts that
    tests/numpy/test_vmap_battery.py reads."""
    before = dict(FALLBACK_COUNTS)
    yield
    FALLBACK_COUNTS.clear()
    FALLBACK_COUNTS.update(before)


def _grads(f, *args):
    return [float(g) for g in fnad.grad(f, argnums=tuple(range(len(args))))(*args)]


def _tangents(f, *args):
    return [float(fnad.jvp(f, args, tuple(1.0 * (i == k) for i in range(len(args))))[1])
            for k in range(len(args))]


# ------------------------------------------------------------------------------------- clip
# (a, a_min, a_max) -> d/d(a, a_min, a_max), checked against torch.clamp; where a_min > a_max the
# result is a_max, so the gradient is a_max's. The last case is a tie where torch gives all zeros
# (no derivative at all); fnad keeps one of the equal bounds.
@pytest.mark.parametrize("case, want", [
    ((-3.0, 0.47, -0.03), [0, 0, 1]),
    ((0.3, 0.5, 0.3), [0, 0, 1]),
    ((0.5, 0.5, 0.2), [0, 0, 1]),
    ((0.2, 0.0, 1.0), [1, 0, 0]),
    ((0.0, 0.0, 1.0), [1, 0, 0]),
    ((1.0, 0.0, 1.0), [1, 0, 0]),
    ((-1.0, 0.0, 1.0), [0, 1, 0]),
    ((2.0, 0.0, 1.0), [0, 0, 1]),
    ((0.5, 0.5, 0.5), [1, 0, 0]),
    ((-3.0, 0.5, 0.5), [0, 1, 0]),
])
def test_clip_gradient_goes_to_the_bound_that_wins(case, want):
    assert _grads(fnp.clip, *case) == want
    assert _tangents(fnp.clip, *case) == want


def test_clip_inverted_bounds_repro():
    assert float(fnad.grad(lambda lo: fnp.clip(-3.0, lo, -0.03))(0.47)) == 0.0
    lo = np.array([0.47, -1.0])
    assert np.array_equal(fnad.grad(lambda hi: fnp.sum(fnp.clip(np.array([-3.0, 2.0]), lo, hi)))(
        np.array([-0.03, 1.0])), [1.0, 1.0])


# ------------------------------------------------------------------ at[...].set, repeated index
# A position named twice keeps one writer (the last, as NumPy); only that writer's entry of v has
# a derivative (JAX's scatter rule; finite differences agree). The old VJP gathered the cotangent
# at every writer, so the repeated index counted twice (6.0 per row where JAX gives 4.0).
_W = np.arange(10.0).reshape(2, 5) * 0.1 + 1.0


def _set_repeated(x, v):
    return fnp.sum(fnp.at(x)[:, [0, 3, 3]].set(v) * _W)


def test_at_set_repeated_index_vjp_counts_the_winner_once():
    x, v = np.ones((2, 5)), np.ones((2, 3))
    assert np.array_equal(fnad.grad(lambda v: fnp.sum(fnp.at(x)[:, [0, 3, 3]].set(v) * 2))(v),
                          [[2.0, 0.0, 2.0], [2.0, 0.0, 2.0]])
    gx, gv = fnad.grad(_set_repeated, argnums=(0, 1))(x, v)
    assert np.allclose(gv, [[1.0, 0.0, 1.3], [1.5, 0.0, 1.8]])
    assert np.allclose(gx, [[0, 1.1, 1.2, 0, 1.4], [0, 1.6, 1.7, 0, 1.9]])
    assert float(fnad.grad(lambda s: _set_repeated(x, s))(2.0)) == pytest.approx(5.6)
    fnad.test_util.check_grads(_set_repeated, (x, v + np.arange(6.0).reshape(2, 3)), order=2)


def test_at_set_repeated_index_jvp_jit_vmap():
    x, v = np.zeros((2, 5)), np.arange(6.0).reshape(2, 3) + 1
    tan = fnad.jvp(lambda v: fnp.at(x)[:, [0, 3, 3]].set(v), (v,), (v,))[1]
    assert np.array_equal(tan, [[1, 0, 0, 3, 0], [4, 0, 0, 6, 0]])
    g = fnad.grad(lambda v, i: fnp.sum(fnp.at(np.ones(5))[i].set(v) * _W[0]))
    idx = np.array([[0, 3, 3], [1, 1, 2]])
    want = np.array([[1.0, 0.0, 1.3], [0.0, 1.1, 1.2]])
    assert np.allclose(fnad.vmap(g)(v, idx), want)
    assert np.allclose(fnad.vmap(g, in_axes=(0, None))(v, idx[0]), want[[0, 0]])
    assert np.allclose(fnad.jit(g)(v[1], idx[1]), want[1])


# ------------------------------------------------------------------------ mean(where=)
# The value of the empty slice is NaN with NumPy's warnings; its gradient is 0, not NaN.
@pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning",
                            "ignore:invalid value encountered in divide:RuntimeWarning")
def test_mean_where_fully_excluded_slice_has_zero_gradient():
    x = np.arange(6.0).reshape(2, 3)
    m = np.array([[True, False, True], [False, False, False]])
    assert np.array_equal(fnp.mean(x, axis=1, where=m), [1.0, np.nan], equal_nan=True)
    g = fnad.grad(lambda x: fnp.mean(x, axis=1, where=m)[0] * 2.0)(x)
    assert np.array_equal(g, [[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    g = fnad.grad(lambda x: fnp.sum(fnp.mean(x, axis=1, keepdims=True, where=m[:1]) ** 0))(x)
    assert np.array_equal(g, np.zeros((2, 3)))
    g = fnad.jit(fnad.grad(lambda x, m: fnp.mean(x, axis=0, where=m)[0]))(x, m)
    assert np.array_equal(g, [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])


# ----------------------------------------------------------------- var/std(where=), complex
def test_var_std_where_complex_are_numpy_real_values_with_right_gradients():
    c = np.array([[1 + 2j, 3 - 1j], [-2 + 0.5j, 0.3j]])
    w = np.array([[True, True], [False, True]])
    for f, ref in ((fnp.var, np.var), (fnp.std, np.std)):
        for kw in ({}, {"axis": 0}, {"axis": 1, "keepdims": True}, {"ddof": 1}):
            got, want = f(c, where=w, **kw), ref(c, where=w, **kw)
            assert got.dtype == want.dtype == np.float64
            assert np.allclose(got, want, rtol=1e-14, atol=0)
    # the masked gradient equals the gradient over the selected elements alone
    assert np.allclose(fnad.grad(lambda c: fnp.var(c, where=w))(c),
                       fnad.grad(lambda c: fnp.var(c[w]))(c))
    fnad.test_util.check_grads(lambda c: fnp.std(c, axis=1, where=w), (c,), order=2)
    fnad.test_util.check_grads(lambda c: fnp.var(c, axis=0, where=w, keepdims=True), (c,), order=1)


# --------------------------------------------------------------------------- take_along_axis
def test_take_along_axis_broadcasts_like_numpy():
    x = np.arange(25.0).reshape(5, 5)
    i = np.array([[0, 3]])
    want = np.take_along_axis(x, i, axis=1)
    assert want.shape == (5, 2)
    assert np.array_equal(fnp.take_along_axis(x, i, axis=1), want)
    assert np.array_equal(fnp.take_along_axis(x, i), want)  # axis=-1 by default, as NumPy 2
    assert np.array_equal(fnad.jit(lambda x: fnp.take_along_axis(x, i, 1))(x), want)
    g = fnad.grad(lambda x: fnp.sum(fnp.take_along_axis(x, i, 1) * 2.0))(x)
    assert np.array_equal(g, np.tile([2.0, 0, 0, 2.0, 0], (5, 1)))
    row, many = np.arange(5.0).reshape(1, 5), np.array([[0, 1], [2, 3], [4, 4]])
    assert np.array_equal(fnp.take_along_axis(row, many, 1), np.take_along_axis(row, many, 1))
    xs, ii = np.stack([x, -x]), np.array([[[0, 3]], [[4, 4]]])
    loop = np.stack([np.take_along_axis(xs[k], ii[k], 1) for k in range(2)])
    assert np.array_equal(fnad.vmap(lambda x, i: fnp.take_along_axis(x, i, 1))(xs, ii), loop)
    assert fnad.vmap(lambda x: fnp.take_along_axis(x, i, 1))(xs).shape == (2, 5, 2)


@pytest.mark.parametrize("indices, axis, err", [
    (np.zeros(2, int), 1, ValueError), (np.zeros((1, 2)), 1, IndexError),
    (np.zeros((1, 2), int), None, ValueError), (np.zeros((1, 2), int), 2, np.exceptions.AxisError),
])
def test_take_along_axis_refuses_what_numpy_refuses(indices, axis, err):
    with pytest.raises(err):
        np.take_along_axis(np.ones((5, 5)), indices, axis)
    with pytest.raises(err, match="take_along_axis|out of bounds"):
        fnp.take_along_axis(np.ones((5, 5)), indices, axis)


# ------------------------------------------------------------------------------------- diff
@pytest.mark.parametrize("args, kw", [
    ((0,), {"prepend": 0.0, "append": 1.0}),
    ((0, 0), {"prepend": np.ones((1, 5)), "append": np.ones((2, 5))}),
    ((1,), {"prepend": 0.0, "append": np.ones((5, 2))}),
    ((2, 0), {"prepend": np.ones((1, 5))}),
    ((3, -2), {}),
])
def test_diff_matches_numpy(args, kw):
    x = np.arange(25.0).reshape(5, 5) ** 2
    want = np.diff(x, *args, **kw)
    assert np.array_equal(fnp.diff(x, *args, **kw), want)
    assert np.array_equal(fnad.jit(lambda x: fnp.diff(x, *args, **kw))(x), want)
    assert fnad.vmap(lambda x: fnp.diff(x, *args, **kw))(np.stack([x, x])).shape[1:] == want.shape


def test_diff_order_zero_is_the_input_and_bad_orders_are_refused():
    g = fnad.grad(lambda x: fnp.sum(fnp.diff(x, 0, prepend=0.0, append=2.0) ** 2))(np.ones(3))
    assert np.array_equal(g, [2.0, 2.0, 2.0])
    assert np.array_equal(fnp.diff([True, False, False]), np.diff([True, False, False]))
    with pytest.raises(ValueError, match="non-negative"):
        fnp.diff(np.ones(3), -1)
    with pytest.raises(ValueError, match="at least one dimensional"):
        fnp.diff(np.float64(2.0))


# -------------------------------------------------------------------------------- nextafter
def test_nextafter_has_slope_one_in_x_and_zero_in_y():
    x, y = np.array([1.0, 2.0, -3.0]), np.array([2.0, 0.0, -3.0])
    assert np.array_equal(fnp.nextafter(x, y), np.nextafter(x, y))
    gx, gy = fnad.grad(lambda x, y: fnp.sum(fnp.nextafter(x, y) * 3.0), argnums=(0, 1))(x, y)
    assert np.array_equal(gx, [3.0, 3.0, 3.0]) and np.array_equal(gy, [0.0, 0.0, 0.0])
    _, t = fnad.jvp(fnp.nextafter, (x, y), (np.ones(3), np.ones(3)))
    assert np.array_equal(t, [1.0, 1.0, 1.0])
    assert float(fnad.grad(lambda x: fnp.nextafter(x, 2.0))(1.0)) == 1.0
    gx = fnad.grad(lambda x: fnp.sum(fnp.nextafter(x, np.float32(0))))(np.ones(2, np.float32))
    assert gx.dtype == np.float32


# ------------------------------------------------------------------------------ vmap(nonzero)
@pytest.mark.filterwarnings("ignore::fnad._batching.vmap.BatchingFallbackWarning")
def test_vmap_nonzero_is_a_tuple_of_stacked_index_arrays():
    x = np.array([[[1, 0, 1], [0, 1, 1]], [[0, 1, 1], [1, 0, 1]]])
    got = fnad.vmap(fnp.nonzero)(x)
    assert isinstance(got, tuple) and len(got) == 2
    for k in range(2):
        assert np.array_equal(got[k], np.stack([np.nonzero(e)[k] for e in x]))
    got = fnad.vmap(fnp.nonzero)(x[0])
    assert isinstance(got, tuple) and np.array_equal(got[0], [[0, 2], [1, 2]])
    f = fnad.vmap(lambda v: fnp.sum(v[fnp.nonzero(v > 0.5)] ** 2))
    assert np.array_equal(fnad.grad(lambda v: fnp.sum(f(v)))(np.array([[0.2, 1.0, 3.0]])),
                          [[0.0, 2.0, 6.0]])
    with pytest.raises(ValueError, match="'nonzero' gives results of different shapes"):
        fnad.vmap(fnp.nonzero)(np.array([[1, 0, 1], [0, 0, 1]]))


# ------------------------------------------------------------------------------------ crashes
@pytest.mark.parametrize("name", ["allclose", "array_equal"])
def test_jit_of_functions_returning_python_bools(name):
    f = getattr(fnp, name)
    x = np.ones(3)
    for y in (x, x + 1.0):
        assert fnad.jit(f)(x, y) == getattr(np, name)(x, y)
    assert bool(fnad.jit(lambda x: f(x, x) & fnp.all(x > 0))(x))


def test_transpose_with_negative_axes_differentiates():
    rng = np.random.default_rng(0)
    x, w = rng.random((2, 3, 4, 5)), rng.random((2, 4, 5, 3))

    def f(x):
        return fnp.sum(fnp.transpose(x, (0, -2, -1, 1)) * w)
    assert np.allclose(fnad.grad(f)(x), w.transpose(0, 3, 1, 2))
    assert np.allclose(fnad.jit(fnad.grad(f))(x), w.transpose(0, 3, 1, 2))
    fnad.test_util.check_grads(lambda x: fnp.transpose(x, (-1, 0, -2)), (x[0],), order=2)
    w0 = rng.random((5, 3, 4))
    g = fnad.vmap(fnad.grad(lambda x: fnp.sum(fnp.transpose(x, (-1, 0, -2)) * w0)))(x)
    assert np.allclose(g, np.broadcast_to(w0.transpose(1, 2, 0), x.shape))


_CX = np.array([1 + np.inf * 1j, np.inf + 1j, complex(-0.0, -0.0), complex(-0.0, 1.0), 2 - 3j])


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning",
                            "ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize("c", [1, 1.0, np.complex128(1), 0, 0.0, -0.0, np.complex128(0),
                               np.complex128(complex(-0.0, -0.0))], ids=repr)
@pytest.mark.parametrize("op", ["multiply", "divide", "power", "add", "subtract"])
def test_jit_complex_identity_rules_keep_every_bit(op, c):
    # jit's simplify dropped `x / 1` on complex x by calling signbit on a complex constant (a
    # TypeError); complex x * 1, x / 1, x ** 1 and x + -0.0 are not x bit for bit
    def f(x):
        return getattr(fnp, op)(x, c)
    assert np.asarray(fnad.jit(f)(_CX)).tobytes() == f(_CX).tobytes()


# ------------------------------------------------- axes of 0-d arrays, and axes out of range
# NumPy's ufunc reductions (sum, prod, max, any, cumsum, ...) take axis 0 or -1 of a 0-d array
# as no axis; mean, var, median, sort, flip refuse it. fnad gives NumPy's value or NumPy's error
# type on every path: eager, jit, grad and vmap (per example).
_ZERO_D = ["sum", "prod", "max", "min", "mean", "var", "std", "median", "argmax", "any", "all",
           "cumsum", "cumprod", "nansum", "nanmean", "ptp", "sort", "argsort", "flip"]


def _outcome(f):
    try:
        return "ok", np.asarray(f())
    except Exception as e:  # the error type is what is compared
        return "error", type(e)


def _check_like_numpy(name, x, axis, batch):
    want = _outcome(lambda: getattr(np, name)(x, axis=axis))
    f = getattr(fnp, name)
    got = {"eager": _outcome(lambda: f(x, axis=axis)),
           "jit": _outcome(lambda: fnad.jit(lambda v: f(v, axis=axis))(x)),
           "vmap": _outcome(lambda: fnad.vmap(lambda v: f(v, axis=axis))(batch)[0])}
    if want[0] == "ok" and want[1].dtype.kind == "f":
        got["grad"] = _outcome(lambda: fnad.grad(lambda v: fnp.sum(f(v, axis=axis)))(x))
        want_grad = ("ok", np.ones_like(x) if name not in ("var", "std", "ptp") else 0 * x)
    for path, res in got.items():
        ref = want_grad if path == "grad" else want
        assert res[0] == ref[0], (path, res, ref)
        if ref[0] == "error":
            assert issubclass(res[1], ref[1]), (path, res, ref)
        else:
            assert res[1].shape == ref[1].shape and np.allclose(res[1], ref[1]), (path, res, ref)


@pytest.mark.filterwarnings("ignore::fnad._batching.vmap.BatchingFallbackWarning")
@pytest.mark.parametrize("axis", [0, -1, 1, (0,), ()], ids=repr)
@pytest.mark.parametrize("name", _ZERO_D)
def test_axes_of_0d_arrays_like_numpy(name, axis):
    if name in ("argmax", "sort", "argsort") and isinstance(axis, tuple):
        pytest.skip("NumPy takes one int axis there")
    _check_like_numpy(name, np.float64(3.0), axis, np.array([3.0, 3.0]))


@pytest.mark.parametrize("axis", [2, -3, (0, 2), 1.0], ids=repr)
@pytest.mark.parametrize("name", ["sum", "prod", "max", "mean", "var", "argmax", "any",
                                  "cumsum", "median", "sort", "flip", "nansum", "ptp"])
def test_axes_out_of_range_are_refused_like_numpy(name, axis):
    if isinstance(axis, tuple) and name in ("argmax", "cumsum", "sort"):
        pytest.skip("NumPy takes one int axis there")
    x = np.arange(6.0).reshape(2, 3)
    _check_like_numpy(name, x, axis, np.stack([x, x]))


# ------------------------------------------------------------------ x[idx] = v on a tracer
@pytest.mark.parametrize("transform", [fnad.grad, fnad.jit, fnad.vmap], ids=lambda t: t.__name__)
def test_item_assignment_on_a_tracer_names_the_functional_update(transform):
    def f(x):
        x[0] = 0.0
        return fnp.sum(x)

    def g(x):
        x[1:, ..., ::2, None, np.array([0])] = 0.0
        return fnp.sum(x)
    with pytest.raises(TypeError, match=r"does not support item assignment.*x = "
                                        r"fnp\.at\(x\)\[0\]\.set\(v\)"):
        transform(f)(np.ones((3, 3)))
    with pytest.raises(TypeError, match=r"fnp\.at\(x\)\[1:, \.\.\., ::2, None, idx\]\.set"):
        transform(g)(np.ones((3, 3)))


@pytest.mark.parametrize("axis", [None, 0, -1, (0,), (), 1], ids=repr)
@pytest.mark.parametrize("kw", [{}, {"keepdims": True}, {"b": 2.0}], ids=repr)
def test_logsumexp_of_0d_like_scipy(axis, kw):
    import scipy.special
    x = np.float64(3.0)
    try:
        want = scipy.special.logsumexp(x, axis=axis, **kw)
    except np.exceptions.AxisError:
        with pytest.raises(np.exceptions.AxisError):
            fnp.logsumexp(x, axis=axis, **kw)
        return
    for got in (fnp.logsumexp(x, axis=axis, **kw),
                fnad.jit(lambda v: fnp.logsumexp(v, axis=axis, **kw))(x)):
        assert np.shape(got) == np.shape(want) and np.allclose(got, want)
    g = fnad.grad(lambda v: fnp.sum(fnp.logsumexp(v, axis=axis, **kw)))(x)
    assert float(g) == pytest.approx(1.0)


# --------------------------------------------------------------------- softmax of a 0-d array

@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_a_0d_array_matches_scipy(name):
    import scipy.special
    import fnad.scipy.special as fsp
    import fnad_nn
    x = np.float64(3.0)
    want = getattr(scipy.special, name)(x)
    for f in (getattr(fsp, name), getattr(fnad_nn, name)):
        assert np.asarray(f(x)).shape == () and f(x) == want
        assert fnad.jit(f)(x) == want
        assert fnad.grad(lambda v: f(v) * 2.0)(x) == 0.0


@pytest.mark.parametrize("f", [fnp.amax, fnp.amin, fnp.max, fnp.min])
def test_jvp_of_max_min_of_a_0d_array_over_axis_0(f):
    # found by the OpInfo oracle: the JVP squeezed axis 0 of a 0-d result (ZeroDivisionError)
    x, t = np.array(3.0), np.array(2.0)
    y, dy = fnad.jvp(lambda v: f(v, axis=0), (x,), (t,))
    assert y == 3.0 and np.shape(dy) == () and dy == 2.0
