"""NumPy names HIPS autograd's test suite used that fnad.numpy lacked (issue 21): nan_to_num,
select, partition, rollaxis, longdouble; linspace/logspace/geomspace in traced endpoints;
lists holding traced values as array_like inputs; integer casts without derivative. Values
against NumPy, derivatives against their definitions, over hypothesis-drawn inputs (the
op table, tests/numpy/cases_*.py, has their check_grads and torch rows)."""

import numpy as np
import pytest
import scipy.special as ssp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fnad
import fnad.numpy as fnp
import fnad.scipy.special as fsp
from fnad.test_util import check_grads
from tests.numpy.test_properties import transpose_gap, values

SPECIAL = st.sampled_from([0.0, np.nan, np.inf, -np.inf])


# ----------------------------------------------------------------------------- nan_to_num


@given(st.data())
def test_nan_to_num_passes_the_gradient_where_finite(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=3))
    x = data.draw(values(shape, (-2.0, 2.0)))
    c = data.draw(hnp.arrays(np.float64, shape, elements=SPECIAL))
    w = np.random.default_rng(0).standard_normal(shape)
    out = fnp.nan_to_num(x + c)
    np.testing.assert_array_equal(out, np.nan_to_num(x + c))
    g = fnad.grad(lambda x: fnp.sum(w * fnp.nan_to_num(x + c, posinf=3.0, neginf=-3.0)))(x)
    np.testing.assert_array_equal(g, np.where(np.isfinite(x + c), w, 0.0))
    _, t = fnad.jvp(lambda x: fnp.nan_to_num(x + c), (x,), (w,))
    np.testing.assert_array_equal(t, np.where(np.isfinite(x + c), w, 0.0))


def test_nan_to_num_complex_and_integers():
    z = np.array([1 + 1j, complex(np.nan, 2.0), complex(3.0, np.inf)])
    np.testing.assert_array_equal(fnp.nan_to_num(z), np.nan_to_num(z))
    g = fnad.grad(lambda z: fnp.sum(fnp.real(fnp.nan_to_num(z * (1 + 1j)) * (2 - 1j))))(
        np.array([1 + 1j, 2 - 1j]))
    np.testing.assert_allclose(g, (1 + 1j) * (2 - 1j))
    i = np.array([1, 2])
    np.testing.assert_array_equal(fnp.nan_to_num(i), i)


# ----------------------------------------------------------------------------- select


@given(st.data())
def test_select_matches_numpy_and_routes_the_gradient_to_the_first_true_choice(data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=4, max_dims=3, max_side=3))
    c1, c2, a_shape, b_shape = shapes.input_shapes
    m1 = data.draw(hnp.arrays(np.bool_, c1))
    m2 = data.draw(hnp.arrays(np.bool_, c2))
    a = data.draw(values(a_shape, (-2.0, 2.0)))
    b = data.draw(values(b_shape, (-2.0, 2.0)))
    out = fnp.select([m1, m2], [a, b], default=0.5)
    np.testing.assert_array_equal(out, np.select([m1, m2], [a, b], default=0.5))
    first = np.broadcast_to(m1, shapes.result_shape)
    second = np.broadcast_to(m2, shapes.result_shape) & ~first
    ga, gb = fnad.grad(lambda a, b: fnp.sum(fnp.select([m1, m2], [a, b], 0.5)),
                       argnums=(0, 1))(a, b)
    np.testing.assert_array_equal(ga, _unbroadcast(first, a_shape))
    np.testing.assert_array_equal(gb, _unbroadcast(second, b_shape))
    rng = np.random.default_rng(1)
    assert transpose_gap(lambda a, b, d: fnp.select([m1, m2], [a, b], d),
                         (a, b, np.array(0.5)), rng) < 1e-12


def _unbroadcast(m, shape):
    """The sum of the float mask `m` over the axes broadcasting added to `shape`."""
    m = m.astype(np.float64)
    m = m.sum(axis=tuple(range(m.ndim - len(shape))))
    return m.sum(axis=tuple(i for i, s in enumerate(shape) if s == 1), keepdims=True)


def test_select_errors_follow_numpy():
    x = np.ones(3)
    with pytest.raises(ValueError, match="same length"):
        fnad.grad(lambda x: fnp.sum(fnp.select([x > 0], [x, x])))(x)
    with pytest.raises(TypeError, match="invalid entry 0 in condlist: should be a boolean"):
        fnad.grad(lambda x: fnp.sum(fnp.select([x], [x])))(x)


# ----------------------------------------------------------------------------- partition


@given(st.data())
def test_partition_matches_numpy_and_moves_gradients_with_its_entries(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = data.draw(values(shape, (-3.0, 3.0), unique=True))
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    n = x.size if axis is None else shape[axis]
    kth = data.draw(st.integers(0, n - 1))
    out = fnp.partition(x, kth, axis=axis)
    np.testing.assert_array_equal(out, np.partition(x, kth, axis=axis))
    w = np.random.default_rng(2).standard_normal(out.shape)
    g = fnad.grad(lambda x: fnp.sum(w * fnp.partition(x, kth, axis=axis)))(x)
    flat = x.ravel() if axis is None else x
    idx = np.argpartition(flat, kth, axis=-1 if axis is None else axis)
    expected = np.zeros_like(flat)
    np.put_along_axis(expected, idx, w, axis=-1 if axis is None else axis)
    np.testing.assert_array_equal(g, expected.reshape(shape))
    np.testing.assert_array_equal(fnad.jit(lambda x: fnp.partition(x, kth, axis=axis))(x), out)


# ----------------------------------------------------------------------------- rollaxis


@given(st.data())
def test_rollaxis_is_numpys_transpose(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, max_side=3))
    n = len(shape)
    axis = data.draw(st.integers(-n, n - 1))
    start = data.draw(st.integers(-n, n))
    x = data.draw(values(shape, (-2.0, 2.0)))
    out = fnp.rollaxis(x, axis, start)
    np.testing.assert_array_equal(out, np.rollaxis(x, axis, start))
    assert transpose_gap(lambda x: fnp.rollaxis(x, axis, start), (x,),
                         np.random.default_rng(3)) < 1e-12
    w = np.random.default_rng(4).standard_normal(out.shape)
    g = fnad.grad(lambda x: fnp.sum(w * fnp.rollaxis(x, axis, start)))(x)
    np.testing.assert_array_equal(np.rollaxis(g, axis, start), w)


def test_rollaxis_errors_follow_numpy():
    with pytest.raises(np.exceptions.AxisError):
        fnp.rollaxis(np.ones((2, 3)), 2)
    with pytest.raises(np.exceptions.AxisError, match="'start' arg requires"):
        fnp.rollaxis(np.ones((2, 3)), 0, 4)


# ----------------------------------------------------------------------------- spaces


@given(st.data())
def test_linspace_is_linear_in_its_endpoints(data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    a = data.draw(values(shapes.input_shapes[0], (-3.0, 3.0)))
    b = data.draw(values(shapes.input_shapes[1], (-3.0, 3.0)))
    num = data.draw(st.integers(0, 6))
    endpoint = data.draw(st.booleans())
    axis = data.draw(st.sampled_from([0, -1]))
    f = lambda a, b: fnp.linspace(a, b, num, endpoint=endpoint, axis=axis)
    out, (ta, tb) = fnad.jvp(f, (a, b), (np.ones_like(a), np.zeros_like(b)))[0], (
        fnad.jvp(f, (a, b), (np.ones_like(a), np.zeros_like(b)))[1],
        fnad.jvp(f, (a, b), (np.zeros_like(a), np.ones_like(b)))[1])
    np.testing.assert_allclose(out, np.linspace(a, b, num, endpoint=endpoint, axis=axis),
                               rtol=1e-15, atol=1e-15)
    div = (num - 1) if endpoint else num
    k = np.arange(num) / div if div > 0 else np.zeros(num)
    k = np.moveaxis(np.broadcast_to(k.reshape((-1,) + (1,) * len(shapes.result_shape)),
                                    (num,) + shapes.result_shape), 0, axis)
    np.testing.assert_allclose(tb, k, atol=1e-15)
    np.testing.assert_allclose(ta + tb, 1.0, atol=1e-15)


@given(st.floats(0.2, 3.0), st.floats(0.2, 3.0), st.integers(1, 6), st.booleans(),
       st.booleans())
def test_logspace_and_geomspace_match_numpy_with_traced_endpoints(a, b, num, endpoint, neg):
    sign = -1.0 if neg else 1.0
    got, _ = fnad.jvp(lambda a, b: fnp.geomspace(sign * a, sign * b, num, endpoint),
                      (np.array(a), np.array(b)), (np.array(1.0), np.array(0.0)))
    np.testing.assert_allclose(got, np.geomspace(sign * a, sign * b, num, endpoint),
                               rtol=1e-14)
    got, _ = fnad.jvp(lambda a, b: fnp.logspace(a, b, num, endpoint, base=1.7),
                      (np.array(a), np.array(b)), (np.array(1.0), np.array(1.0)))
    np.testing.assert_allclose(got, np.logspace(a, b, num, endpoint, base=1.7), rtol=1e-14)


def test_spaces_under_transforms():
    assert fnad.grad(lambda a: fnp.sum(fnp.linspace(a, 2.0, 5)))(1.0) == pytest.approx(2.5)
    check_grads(lambda a, b: fnp.linspace(a, b, 4), (1.2, -3.4), order=2)
    check_grads(lambda a, b: fnp.geomspace(a, b, 4), (1.2, 3.4), order=2)
    np.testing.assert_allclose(fnad.jit(lambda a: fnp.linspace(a, 2.0, 3))(1.0), [1, 1.5, 2])
    np.testing.assert_allclose(fnad.vmap(lambda a: fnp.linspace(a, 2.0, 3))(np.zeros(2)),
                               [[0, 1, 2], [0, 1, 2]])
    y, step = fnad.jvp(lambda a: fnp.linspace(a, 2.0, 3, retstep=True), (1.0,), (1.0,))[1]
    assert step == pytest.approx(-0.5) and y[0] == 1.0
    with pytest.raises(ValueError, match="must be non-negative"):
        fnad.grad(lambda a: fnp.sum(fnp.linspace(a, 2.0, -1)))(1.0)


# ----------------------------------------------------------------------------- array_like lists


@given(st.floats(-2.0, 2.0), st.floats(-2.0, 2.0))
def test_lists_holding_traced_values_are_array_like(a, b):
    """fnp.append([a, 2.], 3.) etc.: NumPy takes any array_like; the list's traced entries
    keep their derivatives (they reached plain NumPy and raised before)."""
    cases = [
        (lambda a, b: fnp.append([a, 2.0], b), [1.0, 1.0]),
        (lambda a, b: fnp.ravel([[a, b], [3.0, a]]), [2.0, 1.0]),
        (lambda a, b: fnp.concatenate([[a, 2.0], [b]]), [1.0, 1.0]),
        (lambda a, b: fnp.transpose([[a], [b]]), [1.0, 1.0]),
        (lambda a, b: fnp.where([True, False], [a, a], [b, b]), [1.0, 1.0]),
        (lambda a, b: fnp.tril([[a, b], [b, a]]), [2.0, 1.0]),
    ]
    for f, expected in cases:
        g = fnad.grad(lambda a, b: fnp.sum(f(a, b)), argnums=(0, 1))(a, b)
        np.testing.assert_allclose(g, expected)
        np.testing.assert_allclose(f(np.float64(a), np.float64(b)),
                                   fnad.jit(f)(a, b))


# ----------------------------------------------------------------------------- casts


@given(values((5,), (-3.0, 3.0)))
def test_integer_casts_have_no_derivative(x):
    for cast in (lambda w: w.astype(int), lambda w: fnp.astype(w, np.int32),
                 lambda w: fnp.int64(w), lambda w: np.asarray(w, dtype=bool)):
        g = fnad.grad(lambda w: fnp.sum(cast(w) * 1.0))(x)
        np.testing.assert_array_equal(g, np.zeros(5))
        y, t = fnad.jvp(cast, (x,), (np.ones(5),))
        np.testing.assert_array_equal(y, cast(x))
        assert not np.any(t)
    g = fnad.grad(lambda w: fnp.sum(w.astype(np.int64) * w))(x)
    np.testing.assert_array_equal(g, x.astype(np.int64))  # product rule, the cast constant


def test_integer_casts_inside_jit_and_vmap():
    x = np.array([0.3, -1.2, 1.7])
    np.testing.assert_array_equal(fnad.jit(lambda w: w.astype(int))(x), [0, -1, 1])
    np.testing.assert_array_equal(fnad.vmap(lambda w: fnp.astype(w, np.int8))(x), [0, -1, 1])
    with pytest.raises(fnad.ConcretizationError, match=r"cast it with x.astype\(int64\)"):
        fnad.jit(lambda w: fnp.int64(w))(x)
    with pytest.raises(TypeError, match=r"x.astype\(int64\) to cast it"):
        fnad.vmap(lambda w: fnp.int64(w))(x)
    with pytest.raises(TypeError, match=r"would drop its derivative.*x.astype\(float32\)"):
        fnad.grad(lambda w: fnp.sum(fnp.float32(w)))(x)


def test_longdouble_names_and_gradients_keep_the_dtype():
    assert fnp.longdouble is np.longdouble and fnp.clongdouble is np.clongdouble
    for dt in (fnp.longdouble, fnp.clongdouble, fnp.float16):
        y = np.arange(1.0, 4.0).astype(dt)
        assert fnad.grad(lambda x: fnp.real(fnp.sum(x ** 2)))(y).dtype == dt


# ----------------------------------------------------------------------------- gammasgn


@given(values((6,), (-40.0, 40.0)))
def test_gammasgn_matches_scipy_and_has_no_derivative(x):
    np.testing.assert_array_equal(fsp.gammasgn(x), ssp.gammasgn(x))
    np.testing.assert_array_equal(fnad.jit(fsp.gammasgn)(x), ssp.gammasgn(x))
    g = fnad.grad(lambda x: fnp.sum(fsp.gammasgn(x) * x))(x)
    np.testing.assert_array_equal(g, ssp.gammasgn(x))
