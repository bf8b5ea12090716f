"""Row fusion (fnad/_jit/rows.py): softmax, layer norm and RMS norm forward and backward
become one or two row kernels, with eager's bits (float32/float64, odd lengths, rows of
length 1, NaN rows, signed zeros, strided inputs), at any split of the rows."""

import warnings

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad._jit import fusion, rowkernel, rows
from fnad.scipy import special as fsp

pytestmark = [pytest.mark.skipif(not rows.self_test()[0], reason="no numba, or NumPy sums "
                                 "otherwise (the pass is off)"),
              pytest.mark.usefixtures("kernel_cache")]


def softmax_max(x):
    e = fnp.exp(x - fnp.max(x, axis=-1, keepdims=True))
    return e / fnp.sum(e, axis=-1, keepdims=True)


def softmax_lse(x):
    return fnp.exp(x - fsp.logsumexp(x, axis=-1, keepdims=True))


def layer_norm(x, g, b):
    mu = fnp.mean(x, axis=-1, keepdims=True)
    var = fnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / fnp.sqrt(var + 1e-5) * g + b


def rms_norm(x, g, b):
    return x / fnp.sqrt(fnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g - b


LAYERS = {"softmax_max": softmax_max, "softmax_lse": softmax_lse, "layer_norm": layer_norm,
          "rms_norm": rms_norm}


def _args(name, shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if name.startswith("softmax"):
        return (x,)
    return x, rng.standard_normal(shape[-1]).astype(dtype), \
        rng.standard_normal(shape[-1]).astype(dtype)


def _loss(f):
    return lambda *a: fnp.sum(f(*a) * fnp.cos(a[0]))


def _same(got, want):
    for a, b in zip(fnad.tree.tree_leaves(got), fnad.tree.tree_leaves(want)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        nan = np.isnan(b)
        np.testing.assert_array_equal(np.isnan(a), nan)
        assert a[~nan].tobytes() == b[~nan].tobytes()


def _counts(f, *args):
    return fnad.jit(f).graph(*args).primitive_counts()


def _reductions(counts):
    return sum(counts.get(k, 0) for k in ("sum", "mean", "max", "min", "logsumexp"))


def test_forward_is_one_or_two_kernels():
    x, g, b = _args("norm", (64, 128), np.float32)
    for f in (layer_norm, rms_norm):
        c = _counts(f, x, g, b)
        assert c.get("fused_rows") == 1 and _reductions(c) == 0, c
    c = _counts(softmax_max, x)  # exp stays NumPy's (its bits): max|exp|sum
    assert c.get("fused_rows") == 2 and c.get("exp") == 1 and _reductions(c) == 0, c


@pytest.mark.parametrize("name", ["layer_norm", "rms_norm", "softmax_max"])
def test_backward_row_reductions_are_fused(name):
    args = _args(name, (64, 128), np.float32)
    grad = fnad.grad(_loss(LAYERS[name]), argnums=tuple(range(len(args))))
    c = _counts(grad, *args)
    assert c.get("fused_rows", 0) <= 3, c
    g = fnad.jit(grad).graph(*args)
    for e in g.eqns:  # no row reduction of a float value is left to NumPy
        if e.prim.name in ("sum", "mean") and e.args[0].aval.dtype.kind == "f":
            assert e.kwargs.get("axis") not in (-1, (1,)), str(g)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 128), (5, 7, 33), (2048, 1), (3, 1029), (2, 3, 4, 257),
                                   (1030, 7), (0, 1030), (1500, 0)])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_bits_equal_eager(name, shape, dtype):
    args = _args(name, shape, dtype)
    f = LAYERS[name]
    grad = fnad.grad(_loss(f), argnums=tuple(range(len(args))))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # eager's "Mean of empty slice"
        for fn in (f, grad):
            try:
                want = fn(*args)
            except ValueError:  # the max of an empty row: jit refuses it too
                with pytest.raises(ValueError):
                    fnad.jit(fn)(*args)
                continue
            _same(fnad.jit(fn)(*args), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sums_of_every_length_are_numpys(dtype):
    f = fnad.jit(lambda x: fnp.sum(x * 1.5, axis=-1, keepdims=True) - x)
    rng = np.random.default_rng(1)
    for n in rows.LENGTHS:
        x = (rng.standard_normal((max(1, 2048 // n), n)) * 10.0 **
             rng.integers(-3, 4, n)).astype(dtype)
        assert "fused_rows" in f.graph(x).primitive_counts()
        _same(f(x), fnp.sum(x * 1.5, axis=-1, keepdims=True) - x)


def test_nan_inf_and_signed_zero_rows():
    x = np.random.default_rng(2).standard_normal((64, 40))
    x[1, 3] = np.nan
    x[2, :] = np.inf
    x[3, 5] = -np.inf
    x[4, :] = 0.0
    x[4, ::3] = -0.0
    x[5, :] = -0.0
    x[6, 7] = np.nan
    x[6, 9] = -np.nan
    for f in (softmax_max, softmax_lse,
              lambda x: fnp.min(x, axis=-1, keepdims=True) - x,
              lambda x: fnp.max(x * 1.0, axis=-1, keepdims=True) * 0.0 - x,
              lambda x: fnp.mean(x, axis=-1, keepdims=True) + fnp.sum(-x, axis=-1,
                                                                       keepdims=True)):
        with np.errstate(all="ignore"):
            assert f is softmax_lse or "fused_rows" in fnad.jit(f).graph(x).primitive_counts()
            _same(fnad.jit(f)(x), f(x))


def test_negation_keeps_nan_signs():
    # -(x * 2.0) inside a row kernel: NumPy flips the NaN's sign bit; a negation that LLVM
    # moved into the product (x * -2.0) would not, and copysign shows the bit
    x = np.random.default_rng(3).standard_normal((64, 40))
    x[::3, ::5] = np.nan
    x[1::3, ::7] = -np.nan
    y = np.ones((64, 40))

    def f(x, y):
        return fnp.copysign(1.0, -(x * 2.0)) * fnp.sum(y, axis=-1, keepdims=True) \
            + fnp.copysign(1.0, x * -1.0)
    assert "fused_rows" in fnad.jit(f).graph(x, y).primitive_counts()
    np.testing.assert_array_equal(fnad.jit(f)(x, y), f(x, y))


def test_strided_inputs_take_numpys_program():
    x = np.random.default_rng(4).standard_normal((130, 64)).astype(np.float32)

    def f(a):
        return fnp.sum(a * 1.5, axis=-1, keepdims=True) * a
    jf = fnad.jit(f)
    for view in (x.T, x[:, ::2], x[::-1], np.broadcast_to(x[0], (130, 64))):
        _same(jf(view), f(view))
    g = lambda a: fnp.sum(a.T * 1.5, axis=-1, keepdims=True) + a.T
    _same(fnad.jit(g)(x), g(x))


def test_trailing_pairs_and_4d():
    x = np.random.default_rng(5).standard_normal((3, 4, 37, 41)).astype(np.float32)
    for f in (lambda a: fnp.sum(a, axis=(-2, -1), keepdims=True) * a,
              lambda a: a - fnp.mean(a * a, axis=(2, 3), keepdims=True),
              lambda a: fnp.max(a, axis=-1, keepdims=True) - a):
        assert "fused_rows" in fnad.jit(f).graph(x).primitive_counts()
        _same(fnad.jit(f)(x), f(x))


def test_any_split_of_the_rows(monkeypatch):
    x, g, b = _args("norm", (257, 300), np.float32)

    def uneven(kernel, n, args, work):
        for lo, hi in ((0, 1), (1, n // 3), (n // 3, n)):
            kernel(lo, hi, *args)
    monkeypatch.setattr(rowkernel, "_runner", [uneven])
    _same(fnad.jit(layer_norm)(x, g, b), layer_norm(x, g, b))
    monkeypatch.setattr(rowkernel, "_runner", [])
    _same(fnad.jit(layer_norm)(x, g, b), layer_norm(x, g, b))


def test_switch_and_self_test(monkeypatch):
    x, g, b = _args("norm", (64, 128), np.float32)
    off = fnad.jit(layer_norm, optimize=set(fnad.jit.PASSES) - {"rows"})
    assert "fused_rows" not in off.graph(x, g, b).primitive_counts()
    assert any(n.startswith("rows: ") for n in fnad.jit(layer_norm).graph(x, g, b).notes)
    monkeypatch.setattr(rows, "_SELF_TEST", [(False, "NumPy sums otherwise")])
    fnad.clear_caches()  # every jit of layer_norm shares the traces made above
    graph = fnad.jit(layer_norm).graph(x, g, b)
    assert "fused_rows" not in graph.primitive_counts()
    assert "rows: off (NumPy sums otherwise)" in graph.notes
    _same(fnad.jit(layer_norm)(x, g, b), layer_norm(x, g, b))


def test_a_dead_member_of_a_row_group_with_dce_off(monkeypatch):
    # program fuzzer seed 1006 (slow run): with dce off, a dead `v5 != v3` joined the row group
    # of `max(v3)`, and the group's NumPy fallback program read the scan's result, which is no
    # input of the kernel (KeyError while planning its memory)
    monkeypatch.setattr(fusion, "MIN_SIZE", 2)  # as the fuzzer: small arrays join groups
    rng = np.random.default_rng(1006)
    x0, x1 = rng.standard_normal((5, 5)), rng.standard_normal((5,))

    def f(x0, x1):
        v3 = (x1 * x1[4]) * -1.0
        v5 = fnad.lax.scan(lambda c, x: (fnp.maximum(c, x), c - x), x0[0], x0)[0]
        fnp.not_equal(v5, v3)  # dead on purpose
        fnp.max(v3, axis=-1, keepdims=True)
        return v3

    opt = set(fnad.jit.PASSES) - {"dce"}
    np.testing.assert_array_equal(fnad.jit(f, optimize=opt, unroll=4000)(x0, x1), f(x0, x1))


# column sums (a bias's or a gain's gradient): sums over the leading axes of a value the
# group computes join its kernel, adding the rows in NumPy's order
def _bias_loss(x, w, b):
    h = x @ w + b
    return fnp.sum(fnp.tanh(h) * 0.5 + h * h)


def _notes(f, *args):
    return " ".join(n for n in fnad.jit(f).graph(*args).notes if n.startswith("rows"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_column_sums_join_the_kernel_with_eagers_bits(dtype):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((32, 16, 24)).astype(dtype)
    w, b = rng.standard_normal((24, 40)).astype(dtype), rng.standard_normal(40).astype(dtype)
    grad = fnad.grad(_bias_loss, argnums=(0, 1, 2))
    assert "1 column sums" in _notes(grad, x, w, b)
    _same(fnad.jit(grad)(x, w, b), grad(x, w, b))
    # a norm's gain gradient, sum(g * xhat); its bias's, sum(g), reads an input of the
    # kernel (cos(x), NumPy's), which no group computes: it stays NumPy's sum
    args = _args("norm", (32, 16, 24), dtype)
    grad = fnad.grad(_loss(layer_norm), argnums=(0, 1, 2))
    assert "1 column sums" in _notes(grad, *args)
    _same(fnad.jit(grad)(*args), grad(*args))


def test_column_sums_of_nan_inf_and_signed_zeros():
    x = np.random.default_rng(8).standard_normal((300, 40))
    x[:, 0] = -0.0
    x[::2, 1] = 0.0
    x[1::2, 1] = -0.0
    x[5, 2] = np.nan
    x[7, 3] = -np.nan
    x[9, 4], x[11, 4] = np.inf, -np.inf
    x[13, 5] = np.inf
    x[:, 6] = 1e30
    for f in (lambda a: fnp.sum(a * 1.5, axis=0),
              lambda a: fnp.sum(-a, axis=0, keepdims=True) + a,
              lambda a: fnp.sum(a - fnp.max(a, axis=-1, keepdims=True), axis=0)):
        with np.errstate(all="ignore"):
            assert "1 column sums" in _notes(f, x)
            _same(fnad.jit(f)(x), f(x))


def test_column_sums_of_leading_axes_and_strided_inputs():
    x = np.random.default_rng(9).standard_normal((6, 5, 4, 33)).astype(np.float32)
    for q in (1, 2, 3):
        axes = tuple(range(q))
        f = lambda a, axes=axes: fnp.sum(a * 1.5 + a * a, axis=axes)
        assert "1 column sums" in _notes(f, x)
        _same(fnad.jit(f)(x), f(x))
        _same(fnad.jit(f)(x[::-1]), f(x[::-1]))  # not C-contiguous: NumPy's program
    # a column sum over other axes than the group's rows, or of one column, stays NumPy's
    g = lambda a: fnp.sum(a - fnp.mean(a, axis=-1, keepdims=True), axis=0)
    assert " 0 column sums" in _notes(g, x)
    _same(fnad.jit(g)(x), g(x))
    y = x.reshape(-1, 1)
    h = lambda a: fnp.sum(a * 1.5, axis=0)
    assert "1 column sums" not in _notes(h, y)
    _same(fnad.jit(h)(y), h(y))


def test_column_sums_run_their_rows_in_order(monkeypatch):
    x = np.random.default_rng(10).standard_normal((4097, 64)).astype(np.float32)

    def split(kernel, n, args, work):  # a split would change the sum: it must not be used
        raise AssertionError("a kernel with column sums split its rows")
    monkeypatch.setattr(rowkernel, "_runner", [split])
    f = lambda a: fnp.sum(a * a, axis=0)
    _same(fnad.jit(f)(x), f(x))


def test_column_self_test(monkeypatch):
    assert rows.column_self_test() == (True, None)
    x = np.random.default_rng(11).standard_normal((64, 40))
    monkeypatch.setattr(rows, "_COLUMN_TEST", [(False, "NumPy adds columns otherwise")])
    fnad.clear_caches()
    f = lambda a: fnp.sum(a * 2.0, axis=0)
    assert "column sums" not in _notes(f, x)
    _same(fnad.jit(f)(x), f(x))
