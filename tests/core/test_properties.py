"""Hypothesis properties of the transforms on random programs built from core ops."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import fnad
import fnad.numpy as fnp
from fnad.test_util import check_grads

# Well-conditioned ops (bounded values and derivatives), so that float64 central
# differences stay accurate to the default tolerance at any depth of composition.
UNARY = [fnp.sin, fnp.tanh, lambda x: fnp.exp(-x * x), lambda x: x * fnp.tanh(x), lambda x: -x,
         lambda x: x / 3.0, fnp.cos, lambda x: fnp.mean(x) - x]
BINARY = [fnp.add, fnp.subtract, fnp.multiply, lambda x, y: x / (1.5 + y * y)]

shapes = st.sampled_from([(), (3,), (2, 3), (1, 3), (2, 1, 3)])


@st.composite
def programs(draw):
    steps = draw(st.lists(st.tuples(st.integers(0, len(UNARY) - 1),
                                    st.integers(0, len(BINARY) - 1),
                                    st.booleans()), min_size=1, max_size=6))

    def f(x, y):
        for u, b, use_b in steps:
            x = UNARY[u](x)
            if use_b:
                x = BINARY[b](x, y)
        return fnp.tanh(x)

    return f


def _values(draw, shape):
    return np.asarray(draw(st.lists(st.floats(-1.5, 1.5), min_size=int(np.prod(shape)),
                                    max_size=int(np.prod(shape))))).reshape(shape)


@st.composite
def program_and_args(draw):
    f = draw(programs())
    sx, sy = draw(shapes), draw(shapes)
    return f, _values(draw, sx), _values(draw, sy)


@settings(max_examples=25, deadline=None)
@given(program_and_args(), st.integers(0, 2 ** 31 - 1))
def test_vjp_is_transpose_of_jvp(pa, seed):
    f, x, y = pa
    rng = np.random.default_rng(seed)
    out, f_vjp = fnad.vjp(f, x, y)
    u = rng.standard_normal(np.shape(out))
    vx, vy = rng.standard_normal(x.shape), rng.standard_normal(y.shape)
    _, t = fnad.jvp(f, (x, y), (vx, vy))
    gx, gy = f_vjp(u)
    lhs = np.sum(gx * vx) + np.sum(gy * vy)
    rhs = np.sum(u * t)
    assert np.isclose(lhs, rhs, rtol=1e-10, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(program_and_args())
def test_second_order_matches_finite_differences(pa):
    f, x, y = pa
    # check_grads varies the tangent and cotangent too at order 2 (random normal directions
    # over x, y and them), so a central difference's truncation error (eps^2 |v|^3 times the
    # third derivative, over 6) reaches 1e-5 on rare deep programs: 1e-4 still catches any
    # wrong rule (off by O(1)).
    check_grads(f, (x, y), order=2, atol=1e-4, rtol=1e-4)


@settings(max_examples=15, deadline=None)
@given(program_and_args())
def test_hessian_is_symmetric_and_modes_agree(pa):
    f, x, y = pa
    s = lambda x: fnp.sum(f(x, y))
    H_fr = fnad.jacfwd(fnad.jacrev(s))(x)
    H_rr = fnad.jacrev(fnad.grad(s))(x)
    n = x.size
    np.testing.assert_allclose(H_fr, H_rr, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(H_fr.reshape(n, n), H_fr.reshape(n, n).T, rtol=1e-9, atol=1e-12)
