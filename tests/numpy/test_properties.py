"""Hypothesis properties over random broadcastable shapes, axes and in-domain values:
VJPs match finite differences, and vjp is the transpose of jvp: <vjp(u), v> == <u, jvp(v)>.

The example count comes from the profile in conftest.py (HYPOTHESIS_PROFILE=thorough for
the report's run)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fnad
import fnad.numpy as fnp
from fnad.test_util import check_grads

REAL, POS, UNIT, GT1 = (-2.0, 2.0), (0.5, 2.5), (-0.9, 0.9), (1.2, 3.0)

UNARY = {"exp": REAL, "expm1": REAL, "exp2": REAL, "log": POS, "log2": POS, "log1p": POS,
         "log10": POS, "sqrt": POS, "cbrt": POS, "square": REAL, "reciprocal": POS,
         "sin": REAL, "cos": REAL, "tan": UNIT, "arcsin": UNIT, "arccos": UNIT,
         "arctan": REAL, "sinh": REAL, "cosh": REAL, "tanh": REAL, "arcsinh": REAL,
         "arccosh": GT1, "arctanh": UNIT, "sinc": REAL, "negative": REAL, "abs": POS,
         "deg2rad": REAL, "rad2deg": REAL}
BINARY = {"add": (REAL, REAL), "subtract": (REAL, REAL), "multiply": (REAL, REAL),
          "divide": (REAL, POS), "power": (POS, REAL), "arctan2": (POS, POS),
          "hypot": (POS, POS), "logaddexp": (REAL, REAL), "logaddexp2": (REAL, REAL),
          "maximum": (REAL, REAL), "minimum": (REAL, REAL)}
KINKED = {"maximum", "minimum"}  # ties are possible: only the transpose property applies
REDUCE = ["sum", "mean", "prod", "max", "min", "var", "std", "ptp", "logsumexp"]


def values(shape, bounds, unique=False):
    lo, hi = bounds
    return hnp.arrays(np.float64, shape, unique=unique,
                      elements=st.floats(lo, hi, allow_nan=False, allow_subnormal=False))


def transpose_gap(f, args, rng):
    """|<u, J v> - <J^T u, v>| relative to the sizes of the two terms."""
    out, f_vjp = fnad.vjp(f, *args)
    v = tuple(rng.standard_normal(np.shape(a)) for a in args)
    u = rng.standard_normal(np.shape(out))
    _, jv = fnad.jvp(f, args, v)
    lhs = float(np.sum(u * jv))
    rhs = sum(float(np.sum(g * t)) for g, t in zip(f_vjp(u), v))
    scale = max(abs(lhs), abs(rhs), 1e-3)
    return abs(lhs - rhs) / scale


@st.composite
def unary_cases(draw):
    name = draw(st.sampled_from(sorted(UNARY)))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=3))
    return name, draw(values(shape, UNARY[name]))


@st.composite
def binary_cases(draw):
    name = draw(st.sampled_from(sorted(BINARY)))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    dx, dy = BINARY[name]
    return name, (draw(values(shapes.input_shapes[0], dx)),
                  draw(values(shapes.input_shapes[1], dy)))


@st.composite
def where_cases(draw):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
    c = draw(hnp.arrays(np.bool_, shapes.input_shapes[0]))
    return c, draw(values(shapes.input_shapes[1], REAL)), draw(values(shapes.input_shapes[2],
                                                                       REAL))


@st.composite
def reduce_cases(draw):
    name = draw(st.sampled_from(REDUCE))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=3))
    nd = len(shape)
    axes = draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd))
    axis = draw(st.sampled_from([None, tuple(axes) if axes else None] +
                                ([axes[0] - nd, axes[0]] if len(axes) == 1 else [])))
    keepdims = draw(st.booleans())
    x = draw(values(shape, (0.5, 2.0) if name == "prod" else REAL))
    if name in ("max", "min", "ptp", "std"):  # distinct values, apart by more than the FD step
        n = int(np.prod(shape))
        perm = np.asarray(draw(st.permutations(range(n))), np.float64).reshape(shape)
        x = perm * 0.25 - 1.0 + 0.05 * np.tanh(x)
    return name, axis, keepdims, x


@given(unary_cases())
def test_unary_vjp_matches_fd_and_transposes_jvp(case):
    name, x = case
    f = getattr(fnp, name)
    check_grads(f, (x,), order=1)
    assert transpose_gap(f, (x,), np.random.default_rng(0)) < 1e-12


@given(binary_cases())
def test_binary_broadcast_pairs(case):
    name, args = case
    f = getattr(fnp, name)
    if name not in KINKED:
        check_grads(f, args, order=1)
    out, f_vjp = fnad.vjp(f, *args)
    grads = f_vjp(np.ones(np.shape(out)))
    assert [np.shape(g) for g in grads] == [np.shape(a) for a in args]
    assert transpose_gap(f, args, np.random.default_rng(1)) < 1e-12


@given(where_cases())
def test_where_broadcast_triples(case):
    c, x, y = case
    f = lambda a, b: fnp.where(c, a * b, b)
    check_grads(f, (x, y), order=2)
    assert transpose_gap(f, (x, y), np.random.default_rng(2)) < 1e-12


@given(reduce_cases())
def test_reductions_random_axes(case):
    name, axis, keepdims, x = case
    f = lambda a: getattr(fnp, name)(a, axis=axis, keepdims=keepdims)
    ref = getattr(np, name, None)
    if ref is not None:
        np.testing.assert_allclose(f(x), ref(x, axis=axis, keepdims=keepdims), rtol=1e-12)
    check_grads(f, (x,), order=1)
    assert transpose_gap(f, (x,), np.random.default_rng(3)) < 1e-12


@given(hnp.mutually_broadcastable_shapes(max_dims=4, max_side=3,
                                         signature="(m,n),(n,p)->(m,p)"), st.data())
def test_matmul_batch_broadcasting(shapes, data):
    a = data.draw(values(shapes.input_shapes[0], REAL))
    b = data.draw(values(shapes.input_shapes[1], REAL))
    np.testing.assert_allclose(fnp.matmul(a, b), np.matmul(a, b), rtol=1e-12, atol=1e-14)
    check_grads(fnp.matmul, (a, b), order=1)
    assert transpose_gap(fnp.matmul, (a, b), np.random.default_rng(4)) < 1e-12


@given(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), st.data())
def test_gathers_random_indices(shape, data):
    x = data.draw(values(shape, REAL))
    idx = data.draw(hnp.arrays(np.int64, data.draw(hnp.array_shapes(max_dims=2, max_side=4)),
                               elements=st.integers(-shape[0], shape[0] - 1)))
    f = lambda a: a[idx]
    np.testing.assert_array_equal(f(x), x[idx])
    g = fnad.grad(lambda a: fnp.sum(f(a)))(x)
    counts = np.zeros(shape[0])
    np.add.at(counts, idx % shape[0], 1.0)
    np.testing.assert_array_equal(g, np.broadcast_to(counts.reshape((-1,) + (1,) * (len(shape)
                                                                               - 1)), shape))
    assert transpose_gap(f, (x,), np.random.default_rng(5)) < 1e-12


# ----------------------------------------------------------------------------- edge points
# Random compositions evaluated where rules special-case a point: zeros (x ** k, sinc,
# prod/cumprod, repeated at[].multiply), ties (sort) and singular matrices (det).

EDGE_OPS = [lambda x: x ** 0 + x, lambda x: x ** 2, lambda x: x ** 3, fnp.sin,
            lambda x: fnp.sinc(x) * x, lambda x: fnp.cumprod(x, axis=-1),
            lambda x: x * fnp.prod(x, axis=-1, keepdims=True), lambda x: x * fnp.sinc(x)]


def with_zeros(shape, lo=-1.5, hi=1.5):
    """Arrays in [lo, hi] where about half the entries are exactly 0."""
    return hnp.arrays(np.float64, shape, elements=st.one_of(
        st.just(0.0), st.floats(lo, hi, allow_nan=False, allow_subnormal=False)))


@st.composite
def edge_programs(draw):
    steps = draw(st.lists(st.integers(0, len(EDGE_OPS) - 1), min_size=1, max_size=4))
    x = draw(with_zeros(draw(st.sampled_from([(3,), (2, 3), (1, 4)]))))

    def f(v):
        for s in steps:
            v = fnp.tanh(EDGE_OPS[s](v))  # tanh keeps zeros and bounds the values
        return v
    return f, x


@given(edge_programs())
def test_compositions_at_zeros(case):
    f, x = case
    g = fnad.grad(lambda v: fnp.sum(f(v)))(x)
    assert np.all(np.isfinite(g))
    check_grads(f, (x,), order=2)
    assert transpose_gap(f, (x,), np.random.default_rng(6)) < 1e-12


@given(st.integers(1, 5), st.data())
def test_at_multiply_repeated_indices_with_zeros(n, data):
    x = data.draw(with_zeros((n,)))
    idx = np.asarray(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6)))
    v = data.draw(with_zeros(idx.shape))
    f = lambda a, b: fnp.at(a)[idx].multiply(b)
    hit = np.arange(n)[:, None] == idx[None, :]
    ref = lambda a, b: a * fnp.prod(fnp.where(hit, b[None, :], 1.0), axis=1)
    u = np.random.default_rng(7).standard_normal(n)
    for got, want in zip(fnad.vjp(f, x, v)[1](u), fnad.vjp(ref, x, v)[1](u)):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    check_grads(f, (x, v), order=2)


def cofactors(a):
    """The cofactor matrix (d det / da) from the minors, by NumPy."""
    n = a.shape[-1]
    c = np.ones_like(a) if n == 1 else np.zeros_like(a)
    for i in range(n if n > 1 else 0):
        for j in range(n):
            minor = np.delete(np.delete(a, i, -2), j, -1)
            c[..., i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return c


@st.composite
def singular_stacks(draw):
    n = draw(st.integers(1, 4))
    batch = draw(st.sampled_from([(), (2,)]))
    a = draw(hnp.arrays(np.float64, batch + (n, n),
                        elements=st.sampled_from([-2.0, -1.0, 0.0, 0.5, 1.0, 3.0])))
    rank = draw(st.integers(0, n - 1))
    # rows past `rank` become copies of earlier rows or zeros: exactly singular
    for r in range(rank, n):
        src = draw(st.integers(-1, r - 1)) if r else -1
        a[..., r, :] = 0.0 if src < 0 else a[..., src, :]
    return a


@given(singular_stacks())
def test_det_at_singular_matrices(a):
    g = fnad.grad(lambda m: fnp.sum(fnp.linalg.det(m)))(a)
    np.testing.assert_allclose(g, cofactors(a), rtol=1e-10, atol=1e-10)
    check_grads(fnp.linalg.det, (a,), order=2)
    assert transpose_gap(fnp.linalg.det, (a,), np.random.default_rng(8)) < 1e-12


@given(hnp.array_shapes(min_dims=1, max_dims=3, max_side=5), st.data())
def test_sort_ties_follow_stable_argsort(shape, data):
    x = data.draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([0.0, 1.0, 2.0])))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    w = np.random.default_rng(9).standard_normal(shape)
    g = fnad.grad(lambda v: fnp.sum(fnp.sort(v, axis=axis) * w))(x)
    expect = np.zeros_like(x)
    np.put_along_axis(expect, np.argsort(x, axis=axis, kind="stable"), w, axis)
    np.testing.assert_array_equal(g, expect)
    assert transpose_gap(lambda v: fnp.sort(v, axis=axis), (x,), np.random.default_rng(10)) \
        < 1e-12
