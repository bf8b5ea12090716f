"""fnad.lax's operations (issue 33): each against `jax.lax` (an optional oracle, float64 via
x64), and each under grad (check_grads), vmap and jit.

Every case is a function of the lax module, so one table drives fnad.lax and jax.lax
alike: `case(L, *args)` is called with `L = fnad.lax` and with `L = jax.lax`.
"""

import pathlib
import re

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad import lax
from fnad.test_util import check_grads

R = np.random.default_rng(0)


def n(*shape):
    return R.normal(size=shape)


X, Y = n(3, 4), n(3, 4)
POS = np.abs(n(3, 4)) + 0.5
IA, JA = np.array([7, -7, 5, -5, 9]), np.array([2, 2, -3, -3, 4])
KEYS = R.integers(0, 3, size=(3, 5)).astype(float)
IMG = n(2, 3, 6, 5)  # NCHW
KER = n(4, 3, 3, 2)  # OIHW
NHWC, HWIO = n(2, 5, 6, 4), n(3, 2, 2, 4)
DN = ("NHWC", "HWIO", "NHWC")
BR = [lambda a: a + 1.0, lambda a: a * a, lambda a: -a]


def _argmax_pair(L):
    def f(a, b):
        (va, ia), (vb, ib) = a, b
        take = (va > vb) | ((va == vb) & (ia < ib))
        return L.select(take, va, vb), L.select(take, ia, ib)
    return f


# (id, case(L, *args), args, differentiable argnums (None: not differentiable))
CASES = [
    ("add", lambda L, x, y: L.add(x, y), (X, Y), (0, 1)),
    ("sub", lambda L, x, y: L.sub(x, y), (X, Y), (0, 1)),
    ("mul", lambda L, x, y: L.mul(x, y), (X, Y), (0, 1)),
    ("div", lambda L, x, y: L.div(x, y), (X, POS), (0, 1)),
    ("div_int", lambda L, x, y: L.div(x, y), (IA, JA), None),
    ("rem", lambda L, x, y: L.rem(x, y), (X, POS), (0,)),
    ("rem_int", lambda L, x, y: L.rem(x, y), (IA, JA), None),
    ("max", lambda L, x, y: L.max(x, y), (X, Y), (0, 1)),
    ("min", lambda L, x, y: L.min(x, y), (X, Y), (0, 1)),
    ("neg", lambda L, x: L.neg(x), (X,), (0,)),
    ("exp", lambda L, x: L.exp(x), (X,), (0,)),
    ("log", lambda L, x: L.log(x), (POS,), (0,)),
    ("tanh", lambda L, x: L.tanh(x), (X,), (0,)),
    ("logistic", lambda L, x: L.logistic(x * 30), (X,), (0,)),
    ("rsqrt", lambda L, x: L.rsqrt(x), (POS,), (0,)),
    ("sqrt", lambda L, x: L.sqrt(x), (POS,), (0,)),
    ("abs", lambda L, x: L.abs(x), (X,), (0,)),
    ("sign", lambda L, x: L.sign(x), (X,), None),
    ("integer_pow", lambda L, x: L.integer_pow(x, 3), (X,), (0,)),
    ("integer_pow_neg", lambda L, x: L.integer_pow(x, -2), (POS,), (0,)),
    ("pow", lambda L, x, y: L.pow(x, y), (POS, Y), (0, 1)),
    ("select", lambda L, x, y: L.select(L.gt(x, y), x, y), (X, Y), (0, 1)),
    ("select_n", lambda L, x, y: L.select_n(np.array([[0, 2, 1, 0]] * 3), x, y, L.mul(x, y)),
     (X, Y), (0, 1)),
    ("select_n_bool", lambda L, x, y: L.select_n(L.lt(x, 0.0), x, y), (X, Y), (0, 1)),
    ("clamp", lambda L, x: L.clamp(-0.5, x, 0.7), (X,), (0,)),
    ("convert_element_type", lambda L, x: L.convert_element_type(L.mul(x, 3.0), np.int32),
     (X,), None),
    ("convert_f32", lambda L, x: L.convert_element_type(x, np.float32), (X,), None),
    ("round", lambda L, x: L.round(x), (np.array([0.5, 1.5, -2.5, 2.4, 0.49999999999999994,
                                                   -0.3, np.inf, -np.inf, np.nan]),), None),
    ("stop_gradient", lambda L, x: L.mul(L.stop_gradient(x), x), (X,), None),
    ("trig", lambda L, x: L.add(L.add(L.sinh(x), L.cosh(x)), L.add(L.atan(x), L.asinh(x))),
     (X,), (0,)),
    ("inverse_trig", lambda L, x: L.add(L.add(L.asin(x), L.acos(x)), L.atanh(x)),
     (X * 0.2,), (0,)),
    ("acosh_reciprocal", lambda L, x: L.mul(L.acosh(L.add(x, 1.0)), L.reciprocal(x)),
     (POS,), (0,)),
    ("complex_parts", lambda L, x, y: L.add(L.real(L.conj(L.complex(x, y))),
                                             L.imag(L.complex(x, y))), (X, Y), (0, 1)),
    ("nextafter", lambda L, x, y: L.nextafter(x, y), (X, Y), None),
    ("bitwise", lambda L, a, b: L.bitwise_xor(L.bitwise_and(a, b),
                                              L.bitwise_or(L.bitwise_not(a), b)), (IA, JA), None),
    ("shifts", lambda L, a: (L.shift_left(a, np.int64(3)), L.shift_right_arithmetic(a, np.int64(1)),
                             L.shift_right_logical(a, np.int64(60))), (IA,), None),
    ("round_enum", lambda L, x: L.round(x, L.RoundingMethod.TO_NEAREST_EVEN),
     (np.array([0.5, 1.5, -2.5]),), None),
    ("optimization_barrier", lambda L, x, y: L.optimization_barrier((x, y)), (X, Y), (0, 1)),
    ("iota", lambda L: L.iota(np.int32, 5), (), None),
    ("broadcasted_iota", lambda L: L.broadcasted_iota(np.int32, (2, 3), 1), (), None),
    ("full", lambda L, x: L.add(L.full((3, 4), 2.5), x), (X,), (0,)),
    # structural
    ("slice", lambda L, x: L.slice(x, (1, 0), (3, 4), (1, 3)), (X,), (0,)),
    ("slice_in_dim", lambda L, x: L.slice_in_dim(x, -3, None, 2, axis=1), (X,), (0,)),
    ("index_in_dim", lambda L, x: L.index_in_dim(x, -1, 1, keepdims=False), (X,), (0,)),
    ("dynamic_slice", lambda L, x: L.dynamic_slice(x, (2, -3), (2, 3)), (X,), (0,)),
    ("dynamic_slice_traced", lambda L, x, i: L.dynamic_slice(x, (i, np.int32(1)), (2, 3)),
     (X, np.int32(5)), (0,)),
    ("dynamic_slice_in_dim", lambda L, x: L.dynamic_slice_in_dim(x, 3, 2, 0), (X,), (0,)),
    ("dynamic_index_in_dim", lambda L, x, i: L.dynamic_index_in_dim(x, i, 1, False),
     (X, np.int32(-1)), (0,)),
    ("dynamic_update_slice", lambda L, x, u: L.dynamic_update_slice(x, u, (2, -1)),
     (X, n(2, 2)), (0, 1)),
    ("dynamic_update_slice_in_dim",
     lambda L, x, u, i: L.dynamic_update_slice_in_dim(x, u, i, 1), (X, n(3, 2), np.int32(1)),
     (0, 1)),
    ("dynamic_update_index_in_dim",
     lambda L, x, u: L.dynamic_update_index_in_dim(x, u, 7, 0), (X, n(4)), (0, 1)),
    ("pad", lambda L, x, v: L.pad(x, v, [(1, -1, 1), (-2, 3, 0)]), (X, np.float64(0.5)), (0, 1)),
    ("concatenate", lambda L, x, y: L.concatenate([x, y, x], 1), (X, Y), (0, 1)),
    ("broadcast", lambda L, x: L.broadcast(x, (2,)), (X,), (0,)),
    ("broadcast_in_dim", lambda L, x: L.broadcast_in_dim(x[:1], (2, 3, 4, 5), (1, 2)),
     (X,), (0,)),
    ("reshape", lambda L, x: L.reshape(x, (2, 6), (1, 0)), (X,), (0,)),
    ("squeeze", lambda L, x: L.squeeze(x[:1], (0,)), (X,), (0,)),
    ("expand_dims", lambda L, x: L.expand_dims(x, (0, 2)), (X,), (0,)),
    ("transpose", lambda L, x: L.transpose(x, (1, 0)), (X,), (0,)),
    ("rev", lambda L, x: L.rev(x, (0, 1)), (X,), (0,)),
    ("collapse", lambda L, x: L.collapse(x, 1, 3), (IMG,), (0,)),
    ("broadcast_to_rank", lambda L, x: L.broadcast_to_rank(x, 4), (X,), (0,)),
    ("split", lambda L, x: L.split(x, (1, 0, 3), 1), (X,), (0,)),
    ("sort", lambda L, x: L.sort(x, 0), (X,), (0,)),
    ("sort_num_keys", lambda L, k, x: L.sort((k, L.neg(k), x), 1, num_keys=2),
     (KEYS, n(3, 5)), (1,)),
    ("sort_key_val", lambda L, k, x: L.sort_key_val(k, x), (KEYS, n(3, 5)), (1,)),
    ("top_k", lambda L, x: L.top_k(x, 3), (KEYS,), None),
    ("approx_max_k", lambda L, x: L.approx_max_k(x, 2, reduction_dimension=0), (KEYS,), None),
    ("approx_min_k", lambda L, x: L.approx_min_k(x, 3), (KEYS,), None),
    ("approx_min_k_values", lambda L, x: L.approx_min_k(x, 2)[0], (X,), (0,)),
    ("top_k_values", lambda L, x: L.top_k(x, 2)[0], (X,), (0,)),
    ("cumsum", lambda L, x: L.cumsum(x, 1), (X,), (0,)),
    ("cumsum_reverse", lambda L, x: L.cumsum(x, 0, reverse=True), (X,), (0,)),
    ("cumprod", lambda L, x: L.cumprod(x, 1, reverse=True), (X,), (0,)),
    ("cummax", lambda L, x: L.cummax(x, 1), (X,), (0,)),
    ("cummin", lambda L, x: L.cummin(x, 0, reverse=True), (X,), (0,)),
    ("cumlogsumexp", lambda L, x: L.cumlogsumexp(x, 1), (X,), (0,)),
    # reductions and products
    ("reduce_add", lambda L, x: L.reduce(x, 0.0, L.add, (0,)), (X,), (0,)),
    ("reduce_max", lambda L, x: L.reduce(x, -np.inf, L.max, (1,)), (X,), (0,)),
    ("reduce_generic", lambda L, x: L.reduce(x, 1.0, lambda a, b: a * b, (0, 1)), (X,), (0,)),
    ("reduce_variadic", lambda L, x: L.reduce((x, np.broadcast_to(np.arange(4), (3, 4))),
                                              (-np.inf, 0), _argmax_pair(L), (1,)), (X,), None),
    ("reduce_sum", lambda L, x: L.reduce_sum(x, (1,)), (X,), (0,)),
    ("integer_dtypes_kept", lambda L, a, u: (
        L.reduce_sum(a, (0,)), L.reduce_prod(u, (1,)), L.cumsum(a, 1), L.cumprod(u, 0, True),
        L.reduce(a, np.int32(0), L.add, (1,))),
     (np.arange(12, dtype=np.int32).reshape(3, 4) * 300000000,
      np.arange(12, dtype=np.uint8).reshape(3, 4) * 37), None),
    ("reduce_xor", lambda L, a: L.reduce_xor(a, (0,)), (np.array([[3, 5], [6, 1], [7, 7]]),),
     None),
    ("argmax", lambda L, x: L.argmax(x, 1, np.int32), (X,), None),
    ("reduce_window_max", lambda L, x: L.reduce_window(x, -np.inf, L.max, (1, 1, 3, 2),
                                                       (1, 1, 2, 2), "SAME"), (IMG,), (0,)),
    ("reduce_window_sum", lambda L, x: L.reduce_window(x, 0.0, L.add, (1, 2, 2, 1),
                                                       (1, 1, 2, 1), ((0, 0), (1, 0), (1, 2),
                                                                      (0, 0)),
                                                       (1, 1, 2, 1), (1, 1, 1, 2)),
     (NHWC,), (0,)),
    ("dot_general", lambda L, a, b: L.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
     (n(2, 3, 4), n(2, 4, 5)), (0, 1)),
    ("dot_general_multi", lambda L, a, b: L.dot_general(a, b, (((0, 2), (0, 1)), ((), ()))),
     (n(2, 3, 4), n(2, 4, 5)), (0, 1)),
    ("dot", lambda L, x, y: L.dot(x, y, precision=L.Precision.HIGHEST), (X, Y.T), (0, 1)),
    ("dot_int_preferred", lambda L, a, b: L.dot(a, b, preferred_element_type=np.float64),
     (IA, JA), None),
    ("batch_matmul", lambda L, a, b: L.batch_matmul(a, b), (n(2, 3, 4), n(2, 4, 2)), (0, 1)),
    # convolutions
    ("conv", lambda L, x, w: L.conv(x, w, (2, 1), "SAME"), (IMG, KER), (0, 1)),
    ("conv_with_general_padding",
     lambda L, x, w: L.conv_with_general_padding(x, w, (1, 2), ((1, 1), (0, 2)), (2, 1), (1, 2)),
     (IMG, KER), (0, 1)),
    ("conv_general_dilated_nhwc_groups",
     lambda L, x, w: L.conv_general_dilated(x, w, (1, 1), "SAME_LOWER", rhs_dilation=(2, 1),
                                            dimension_numbers=DN, feature_group_count=2),
     (NHWC, HWIO), (0, 1)),
    ("conv_general_dilated_batch_groups",
     lambda L, x, w: L.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=DN,
                                            batch_group_count=2),
     (NHWC, n(3, 2, 4, 4)), (0, 1)),
    ("conv_transpose_same", lambda L, x, w: L.conv_transpose(x, w, (2, 2), "SAME"),
     (NHWC, n(3, 3, 4, 2)), (0, 1)),
    ("conv_transpose_kernel", lambda L, x, w: L.conv_transpose(
        x, w, (2, 1), "VALID", rhs_dilation=(1, 2), transpose_kernel=True),
     (NHWC, n(3, 2, 2, 4)), (0, 1)),
    # control
    ("map", lambda L, x: L.map(lambda r: L.mul(r, r), x), (X,), (0,)),
    ("map_batch_size", lambda L, x: L.map(lambda r: L.reduce_sum(L.exp(r), (0,)), x,
                                          batch_size=2), (n(5, 3),), (0,)),
    ("switch", lambda L, i, x: L.switch(i, BR, x), (np.int32(1), X), (1,)),
    ("switch_clamped", lambda L, i, x: L.switch(i, BR, x), (np.int32(7), X), (1,)),
    ("associative_scan", lambda L, x: L.associative_scan(L.add, x), (n(7, 2),), (0,)),
    ("associative_scan_rev_axis", lambda L, x: L.associative_scan(
        lambda a, b: (L.mul(a[0], b[0]), L.add(L.mul(b[0], a[1]), b[1])), (x, L.neg(x)),
        reverse=True, axis=1), (n(2, 6),), (0,)),
]
IDS = [c[0] for c in CASES]


def _run(L, case, args):
    return case(L, *args)


def _close(a, b, tol=1e-10):
    la, lb = fnad.tree_leaves(a), fnad.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, (x.shape, y.shape)
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


@pytest.mark.parametrize("name, case, args, diff", CASES, ids=IDS)
def test_matches_jax_lax(name, case, args, diff):
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        want = _run(jax.lax, case, args)
        got = _run(lax, case, args)
        for g, w in zip(fnad.tree_leaves(got), fnad.tree_leaves(want)):
            assert np.asarray(g).dtype == np.asarray(w).dtype, (name, g.dtype, w.dtype)
        _close(got, want)


@pytest.mark.parametrize("name, case, args, diff", [c for c in CASES if c[3]],
                         ids=[c[0] for c in CASES if c[3]])
def test_gradients(name, case, args, diff):
    def f(*d):
        full = list(args)
        for k, v in zip(diff, d):
            full[k] = v
        return _run(lax, case, full)
    check_grads(f, tuple(args[k] for k in diff), order=1, modes=("rev", "fwd"))


@pytest.mark.parametrize("name, case, args, diff", CASES, ids=IDS)
def test_jit_and_vmap(name, case, args, diff):
    def f(*a):
        return _run(lax, case, a)
    want = f(*args)
    _close(fnad.jit(f)(*args), want)
    if not args:
        return
    # vmap over a batch of two: the inputs and a perturbed copy of the float ones
    twin = [a + 0.25 if np.issubdtype(np.asarray(a).dtype, np.floating) else a for a in args]
    batched = [np.stack([a, b]) for a, b in zip(args, twin)]
    out = fnad.vmap(f)(*batched)
    for k, row in enumerate((args, twin)):
        _close(fnad.tree_map(lambda o: o[k], out), f(*row))


def test_second_order_through_conv_and_reduce_window():
    def f(x, w):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN)
        return lax.reduce_window(fnp.tanh(y), 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    check_grads(f, (n(1, 4, 4, 2), n(2, 2, 2, 3)), order=2, modes=("rev",))


def test_dynamic_slice_clamps_like_jax():
    x = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(lax.dynamic_slice(x, (1, 1), (2, 4)), x[1:3, 0:4])
    np.testing.assert_array_equal(lax.dynamic_slice(x, (-1, 9), (1, 2)), x[2:3, 2:4])
    f = fnad.jit(lambda i: lax.dynamic_slice_in_dim(x, i, 2, 1))
    np.testing.assert_array_equal(f(np.int32(3)), x[:, 2:4])
    np.testing.assert_array_equal(f(np.int32(-4)), x[:, 0:2])


def test_switch_stages_every_branch_once_and_clamps():
    f = fnad.jit(lambda i, x: lax.switch(i, BR, x))
    assert [float(f(i, 3.0)) for i in (-2, 0, 1, 2, 5)] == [4.0, 4.0, 9.0, -3.0, -3.0]
    assert fnad.grad(lambda x: lax.switch(np.int32(1), BR, x))(3.0) == 6.0


def test_stop_gradient_blocks_the_derivative():
    assert fnad.grad(lambda x: lax.stop_gradient(x) * x)(3.0) == 3.0
    g = fnad.grad(lambda p: fnp.sum(lax.stop_gradient(p)["a"] * p["b"]))({"a": X, "b": Y})
    _close(g["a"], np.zeros_like(X))
    _close(g["b"], X)


def test_shape_helpers_match_jax():
    jax = pytest.importorskip("jax")
    L = jax.lax
    assert lax.broadcast_shapes((2, 1), (3,)) == L.broadcast_shapes((2, 1), (3,))
    for dn in [DN, ("NCHW", "OIHW", "NCHW"), ("NWHC", "OHIW", "CNHW")]:
        assert lax.conv_general_permutations(dn) == L.conv_general_permutations(dn)
    args = [((2, 7, 9, 3), (3, 2, 3, 8), (2, 1), "SAME", DN),
            ((2, 7, 9, 3), (3, 2, 3, 8), (1, 3), [(1, 0), (2, 2)], DN)]
    for a in args:
        assert lax.conv_general_shape_tuple(*a) == tuple(L.conv_general_shape_tuple(*a))
    for a in args[:1] + [((2, 7, 9, 3), (3, 2, 3, 8), (2, 2), "VALID", DN)]:
        assert lax.conv_transpose_shape_tuple(*a) == tuple(L.conv_transpose_shape_tuple(*a))
    assert lax.conv_shape_tuple((2, 3, 7, 9), (4, 3, 3, 2), (2, 1), "SAME_LOWER", 2) == tuple(
        L.conv_shape_tuple((2, 3, 7, 9), (4, 3, 3, 2), (2, 1), "SAME_LOWER", 2))
    for a in [((7, 9), (3, 2), (2, 2), ((1, 1), (0, 1)), (2, 1), (1, 2)),
              ((5, 5), (2, 2), (1, 1), ((0, 0), (0, 0)))]:
        assert lax.reduce_window_shape_tuple(*a) == tuple(L.reduce_window_shape_tuple(*a))
    for pad in ("SAME", "SAME_LOWER", "VALID"):
        want = [tuple(p) for p in L.padtype_to_pads((5, 8), (3, 4), (2, 3), pad)]
        assert [tuple(p) for p in lax.padtype_to_pads((5, 8), (3, 4), (2, 3), pad)] == want


def test_precision_is_accepted_and_checked():
    x = np.ones((2, 2))
    for p in (None, lax.Precision.HIGHEST, "highest", ("default", lax.Precision.HIGH)):
        np.testing.assert_array_equal(lax.dot(x, x, precision=p), x @ x)
    with pytest.raises(ValueError, match="precision"):
        lax.dot(x, x, precision="double")


@pytest.mark.parametrize("call, match", [
    (lambda: lax.dynamic_slice(np.ones((2, 3)), (0,), (1, 1)), "one per axis"),
    (lambda: lax.select(np.ones(2), 1.0, 2.0), "pred must be boolean"),
    (lambda: lax.integer_pow(np.ones(2), 2.5), "Python int"),
    (lambda: lax.pad(np.ones(3), 0.0, [(1, 1)]), "triple"),
    (lambda: lax.broadcast_in_dim(np.ones(3), (2, 4), (1,)), "cannot broadcast"),
    (lambda: lax.dot_general(np.ones((2, 3)), np.ones((2, 3)), (((1,), (0,)), ((), ()))),
     "do not fit"),
    (lambda: lax.conv(np.ones((1, 2, 4, 4)), np.ones((3, 3, 2, 2)), (1, 1), "SAME"),
     "features"),
    (lambda: lax.switch(0.5, BR, 1.0), "integer scalar"),
    (lambda: lax.top_k(np.ones(3), 4), "k must be"),
])
def test_bad_input_names_the_function(call, match):
    with pytest.raises((TypeError, ValueError, IndexError), match=match):
        call()


def _cnn(L, np_, w1, w2, x):
    y = np_.tanh(L.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=DN))
    y = L.reduce_window(y, -np.inf, L.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    y = L.reduce_window(y, 0.0, L.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
    return np_.sum(L.dot_general(y.reshape(4, -1), w2, (((1,), (0,)), ((), ()))) ** 2)


def test_a_small_cnn_under_jit_of_grad_matches_jax():
    jax = pytest.importorskip("jax")
    args = (n(3, 3, 2, 4) * 0.3, n(16, 3) * 0.3, n(4, 8, 8, 2))
    got = fnad.jit(fnad.grad(lambda *a: _cnn(lax, fnp, *a), (0, 1)))(*args)
    with jax.enable_x64(True):
        want = jax.grad(lambda *a: _cnn(jax.lax, jax.numpy, *a), (0, 1))(*args)
    _close(got, want, 1e-12)


def test_loops_write_with_dynamic_update_slice_and_branch_with_switch():
    def body(i, buf):
        return lax.dynamic_update_slice_in_dim(buf, fnp.full((1, 3), i * 1.0), i, 0)
    out = fnad.jit(lambda b: lax.fori_loop(0, 4, body, b))(np.zeros((4, 3)))
    np.testing.assert_array_equal(out, np.repeat(np.arange(4.0)[:, None], 3, 1))

    def total(v):
        def step(c, i):
            piece = lax.dynamic_slice_in_dim(v, i, 2)
            return c + lax.switch(i % 2, [fnp.sum, fnp.prod], piece), None
        return lax.scan(step, 0.0, np.arange(4))[0]
    v = n(6)
    want = v[0] + v[1] + v[1] * v[2] + v[2] + v[3] + v[3] * v[4]
    np.testing.assert_allclose(fnad.jit(total)(v), want, rtol=1e-14)
    check_grads(total, (v,), order=2, modes=("rev", "fwd"))


def test_vmap_with_a_start_and_an_index_per_example_matches_jax():
    jax = pytest.importorskip("jax")
    xs, us = n(4, 3, 5), n(4, 2, 2)
    starts, picks = np.array([-1, 0, 2, 7], np.int32), np.array([0, 2, 1, 5], np.int32)

    def f(L, x, u, s, k):
        part = L.dynamic_slice(x, (s, s), (2, 3))
        put = L.dynamic_update_slice(x, u, (k, s))
        return part, put, L.switch(k, BR, part), L.dynamic_index_in_dim(x, s, 1, False)
    got = fnad.vmap(lambda *a: f(lax, *a))(xs, us, starts, picks)
    with jax.enable_x64(True):
        want = jax.vmap(lambda *a: f(jax.lax, *a))(xs, us, starts, picks)
    _close(got, want)
    _close(fnad.jit(fnad.vmap(lambda *a: f(lax, *a)))(xs, us, starts, picks), want)


@pytest.mark.parametrize("call", [lambda L: L.add(1, 1.0), lambda L: L.mul(np.float32(2), 3),
                                  lambda L: L.max(np.int32(2), 0.5),
                                  lambda L: L.select(True, np.float32(1), 2),
                                  lambda L: L.clamp(0, np.ones(2), 1)])
def test_a_python_scalar_of_another_kind_raises_like_jax(call):
    with pytest.raises(TypeError, match="one dtype"):
        call(lax)
    jax = pytest.importorskip("jax")
    with pytest.raises(TypeError):
        call(jax.lax)
    np.testing.assert_array_equal(lax.add(np.float32(1), 1.0), np.float32(2.0))
    assert lax.add(np.float32(1), 1.0).dtype == np.float32


def test_max_and_min_windows_send_a_tie_derivative_to_the_first_entry_like_jax():
    jax = pytest.importorskip("jax")
    x, w = np.array([1.0, 1.0, 2.0, 2.0, 2.0, 0.0, -np.inf, -np.inf]), np.arange(1.0, 9.0)
    for op, init in (("max", -np.inf), ("min", np.inf)):
        def f(L, np_, x):
            return np_.sum(L.reduce_window(x, init, getattr(L, op), (2,), (1,), "SAME") * w)
        got = fnad.grad(lambda x: f(lax, fnp, x))(x)
        with jax.enable_x64(True):
            want = jax.grad(lambda x: f(jax.lax, jax.numpy, x))(x)
        _close(got, want)


def test_every_name_docs_lax_md_lists_exists():
    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "lax.md").read_text()
    rows = re.findall(r"^\| [^|]+ \| (.+) \|$", text, re.M)
    names = {n for row in rows[1:] for n in re.findall(r"`([^`]+)`", row) for n in n.split()}
    assert len(names) > 100
    missing = sorted(n for n in names if not hasattr(lax, n))
    assert not missing, missing
