"""fnad.jit(f, fast_math=True) and FNAD_FAST_MATH (fnad/_jit/fastmath.py): each approximated
op within the bound docs/jit.md states, measured in ulps of the result against float64
(float32 ops) and long double (float64 ops) references over wide ranges and at the special
values; composite programs (tanh-GELU, softmax with its reassociated row sum) within the
propagated bound; the exact path unchanged; the setting, the cache key and bad values."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad.scipy import special as fsp

pytest.importorskip("numba")
sp = pytest.importorskip("scipy.special")

# docs/jit.md, "Fast math": the most ulps each op may be off its correctly rounded value
BOUND_ULPS = {"exp": 2, "log": 2, "tanh": 3, "erf": 3, "expit": 3}
OPS = {"exp": fnp.exp, "log": fnp.log, "tanh": fnp.tanh, "erf": fsp.erf, "expit": fsp.expit}
REF64 = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "erf": sp.erf, "expit": sp.expit}
RANGE = {"exp": 110.0, "log": 3e38, "tanh": 12.0, "erf": 6.0, "expit": 110.0}


pytestmark = pytest.mark.usefixtures("fast_math_kernels")


def _ref(op, x):
    if x.dtype == np.float32:
        return REF64[op](x.astype(np.float64))
    if op == "expit":
        return 1.0 / (1.0 + np.exp(-x.astype(np.longdouble)))
    return REF64[op](x.astype(np.longdouble))


def ulps(got, ref, dtype):
    """|got - ref| in ulps of the reference rounded to `dtype` (0 where they are equal,
    NaN and NaN included)."""
    with np.errstate(all="ignore"):
        r = ref.astype(dtype)
        wide = np.float64 if dtype == np.float32 else np.longdouble
        d = np.abs(got.astype(wide) - ref) / np.spacing(np.abs(r)).astype(wide)
    same = (got == r) | (np.isnan(got) & np.isnan(r))
    return np.where(same, 0.0, d).astype(np.float64)


def _points(op, dtype, n=100_000, seed=0):
    rng = np.random.default_rng(seed)
    top = RANGE[op] if dtype == np.float32 or op in ("tanh", "erf") else \
        {"exp": 750.0, "expit": 750.0, "log": 1e308}[op]
    tiny = np.finfo(dtype).smallest_subnormal
    mag = np.exp(rng.uniform(np.log(float(tiny)), np.log(top), n))  # every scale
    parts = [rng.uniform(-1, 1, n) * top, mag * rng.choice([-1, 1], n),
             rng.uniform(-2, 2, n), np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0])]
    x = np.concatenate(parts).astype(dtype)
    return np.abs(x) if op == "log" else x


def _fast(op):
    f = OPS[op]
    # -f(x): a kernel of two steps (fast math fuses negations; x * 1.0 would be simplified)
    return fnad.jit(lambda x: -f(x), fast_math=True)


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_each_op_within_its_stated_ulp_bound(op, dtype):
    x = _points(op, dtype)
    fast = _fast(op)
    with np.errstate(all="ignore"):
        got = -fast(x)
    names = [e.prim.name for e in fast.graph(x).eqns]
    if op == "erf" and dtype == np.float64:  # float64 erf stays SciPy's (exact path)
        assert names[0] == "erf"
        return
    name = fast.graph(x).eqns[0].kwargs["kernel"].name
    assert name.startswith("fused_numba_fast"), name
    assert got.dtype == dtype
    with np.errstate(all="ignore"):
        err = ulps(got, _ref(op, x), dtype)
    worst = int(np.argmax(err))
    assert err.max() <= BOUND_ULPS[op], (op, x[worst], got[worst], err.max())


@pytest.mark.parametrize("op", list(OPS))
def test_special_values_as_numpy(op):
    for dtype in (np.float32, np.float64):
        x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0] * 200, dtype)
        with np.errstate(all="ignore"):
            want = np.asarray(OPS[op](x))
            got = -_fast(op)(x)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        np.testing.assert_allclose(got[ok], want[ok], rtol=4e-7)
        zero = ok & (want == 0)
        assert np.array_equal(np.signbit(got[zero]), np.signbit(want[zero])), op


@pytest.mark.parametrize("dtype, cut", [(np.float32, -104.0), (np.float64, -746.0)])
def test_exp_below_its_range_is_zero_and_keeps_its_bound_at_the_cut(dtype, cut):
    """Below the cut (a causal mask's -inf) exp gives 0 by a select, since a product that
    underflows costs a microcode assist per value (the fast softmax of masked scores took
    4x the exact one, benchmarks/layer_kernels.py): the values at and around the cut."""
    c = dtype(cut)
    x = np.array([-np.inf, -1e30, 2 * c, c, np.nextafter(c, dtype(0)), c + 1, c + 20,
                  c + 40, np.nan] * 100, dtype)
    got = -_fast("exp")(x)
    assert np.array_equal(got[:4], np.zeros(4, dtype)) and np.isnan(got[8])
    with np.errstate(all="ignore"):
        assert ulps(got, _ref("exp", x), dtype).max() <= BOUND_ULPS["exp"]


def gelu(x):
    return 0.5 * x * (1.0 + fnp.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def softmax(x):
    e = fnp.exp(x - fnp.max(x, axis=-1, keepdims=True))
    return e / fnp.sum(e, axis=-1, keepdims=True)


def log_softmax(x):
    return x - fnp.log(fnp.sum(fnp.exp(x), axis=-1, keepdims=True))


@pytest.mark.parametrize("dtype, fs", [(np.float32, ("gelu", "softmax", "log_softmax")),
                                       (np.float64, ("softmax",))])
def test_gelu_softmax_within_propagated_bounds_and_exact_jit_unchanged(dtype, fs):
    x = (np.random.default_rng(1).standard_normal((64, 1000)) * 3).astype(dtype)
    eps = np.finfo(dtype).eps
    for f in (globals()[name] for name in fs):
        want = np.asarray(f(x))
        exact = fnad.jit(f)(x)
        assert exact.tobytes() == want.tobytes()  # fast_math=False keeps eager's bits
        with np.errstate(all="ignore"):
            ref = (np.asarray(f(x.astype(np.float64))) if dtype == np.float32 else
                   _long(f, x))
        got = fnad.jit(f, fast_math=True)(x)
        # per element: the ops' bounds plus a reassociated row sum's n eps, relative to
        # the size of the values combined (x for gelu, the row for softmax)
        scale = np.maximum(np.abs(ref), np.abs(x) if f is gelu else
                           np.max(np.abs(ref), axis=-1, keepdims=True))
        err = np.abs(got.astype(ref.dtype) - ref) / scale
        assert float(err.max()) <= 16 * eps, (f.__name__, float(err.max()) / eps)


def _long(f, x):
    """f in long double, by NumPy (fnad's primitives take no long double)."""
    x = x.astype(np.longdouble)
    if f is gelu:
        return 0.5 * x * (1.0 + np.tanh(np.longdouble(0.7978845608028654)
                                        * (x + 0.044715 * x * x * x)))
    if f is softmax:
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_softmax_is_one_row_kernel_under_fast_math():
    x = np.random.default_rng(2).standard_normal((128, 256)).astype(np.float32)
    g = fnad.jit(softmax, fast_math=True).graph(x)
    assert [e.prim.name for e in g.eqns] == ["fused_rows"]
    assert "rows_fast" in g.eqns[0].kwargs["kernel"].name
    assert any("fast math" in n for n in g.notes)
    exact = fnad.jit(softmax).graph(x)
    assert "exp" in [e.prim.name for e in exact.eqns]  # exact: exp stays NumPy's


def test_rows_agree_at_any_thread_count():
    from fnad.kernels import _threads
    x = np.random.default_rng(3).standard_normal((512, 512)).astype(np.float32)
    outs = []
    for n in (1, 2, 3):
        _threads.set_threads(n)
        try:
            outs.append(fnad.jit(softmax, fast_math=True)(x))
        finally:
            _threads.set_threads(None)
    assert outs[0].tobytes() == outs[1].tobytes() == outs[2].tobytes()


def test_setting_turns_it_on_and_is_part_of_the_cache_key(monkeypatch):
    x = np.random.default_rng(4).standard_normal((64, 64)).astype(np.float32)
    j = fnad.jit(gelu)
    exact = j(x)
    assert exact.tobytes() == np.asarray(gelu(x)).tobytes()
    monkeypatch.setenv("FNAD_FAST_MATH", "1")
    fast = j._entry(x)
    assert "fast" in fast.optimized.eqns[0].kwargs["kernel"].name
    assert j.cache_size() == 2  # a trace of its own
    np.testing.assert_allclose(fast.run(x)[0], exact, rtol=1e-5, atol=1e-6)
    monkeypatch.setenv("FNAD_FAST_MATH", "0")
    assert "fast" not in j._entry(x).optimized.eqns[0].kwargs["kernel"].name
    monkeypatch.setenv("FNAD_FAST_MATH", "sometimes")
    with pytest.raises(Exception, match="FNAD_FAST_MATH"):
        j._entry(x[:2])


def test_bad_fast_math_value():
    with pytest.raises(TypeError, match="jit: fast_math must be True or False"):
        fnad.jit(gelu, fast_math="yes")


def test_transforms_replay_exact_ops():
    x = np.random.default_rng(5).standard_normal((32, 64))
    loss = lambda x: fnp.sum(gelu(x) * x)
    want = fnad.grad(loss)(x)
    assert fnad.grad(fnad.jit(loss, fast_math=True))(x).tobytes() == want.tobytes()
    got = fnad.jit(fnad.grad(loss), fast_math=True)(x)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_backward_recomputes_cheap_chains_instead_of_saving_them(monkeypatch):
    from fnad._jit import remat
    rng = np.random.default_rng(6)
    w1 = (rng.standard_normal((32, 256)) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((256, 32)) * 0.1).astype(np.float32)
    x = rng.standard_normal((512, 32)).astype(np.float32)
    g = fnad.grad(lambda w1, w2, x: fnp.sum(gelu(x @ w1) @ w2), (0, 1))

    def plan(**kw):
        gr = fnad.jit(g, **kw).graph(w1, w2, x)
        kernels = [e for e in gr.eqns if e.prim.name == "fused_elementwise"]
        return gr, [len(e.outvars) for e in kernels], gr.memory_plan().peak

    gr, outs, peak = plan(fast_math=True)
    assert any(n.startswith("remat:") for n in gr.notes)
    assert outs == [1, 1]  # the forward kernel writes GELU(h) only; tanh(u) is recomputed
    monkeypatch.setattr(remat, "MAX_CHAIN", 0)
    fnad.clear_caches()  # jit(g) shares its traces with every jit(g) of the same options
    gr0, outs0, peak0 = plan(fast_math=True)
    assert not any(n.startswith("remat:") for n in gr0.notes) and outs0[0] > 1
    assert peak < peak0
    _, _, exact_peak = plan()
    assert not any(n.startswith("remat:") for n in fnad.jit(g).graph(w1, w2, x).notes)
    assert peak < exact_peak
    for a, b in zip(fnad.jit(g, fast_math=True)(w1, w2, x), g(w1, w2, x)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * float(np.max(np.abs(b))))


# docs/jit.md, "Fast math": x ** 3 and x ** 4 by products (JAX's integer_pow order)
POWER_BOUND_ULPS = {3: 2, 4: 3}


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_integer_powers_are_products_within_their_bound(n, dtype):
    rng = np.random.default_rng(n)
    info = np.finfo(dtype)
    lo, hi = np.log2(float(info.tiny)) / n + 1, np.log2(float(info.max)) / n - 1
    mag = 2.0 ** rng.uniform(lo, hi, 200_000)   # every scale whose power is normal
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e30, -1e30]
    x = np.concatenate([mag * rng.choice([-1, 1], mag.size), rng.uniform(-3, 3, 100_000),
                        special]).astype(dtype)
    fast = fnad.jit(lambda x: -(x ** n), fast_math=True)
    with np.errstate(all="ignore"):
        got = -fast(x)
        want = np.power(x, n)
    (eqn,) = fast.graph(x).eqns
    assert eqn.kwargs["kernel"].name.startswith("fused_numba"), eqn
    wide = np.float64 if dtype == np.float32 else np.longdouble
    finite = np.isfinite(want)
    with np.errstate(all="ignore"):
        err = ulps(got[finite], x[finite].astype(wide) ** n, dtype)
    assert err.max() <= POWER_BOUND_ULPS[n], (n, err.max())
    alone = fnad.jit(lambda x: x ** n, fast_math=True)   # one step: a kernel of its own
    assert alone.graph(x).eqns[0].prim.name == "fused_elementwise"
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(alone(x), -fast(x))   # (a negated NaN's sign aside)
    rest = ~finite   # infinities, NaN, overflow: NumPy's values, signed
    assert np.array_equal(got[rest], want[rest], equal_nan=True)
    zeros = want == 0
    assert np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))


def test_exact_jit_keeps_numpys_cube_and_fuses_the_square():
    x = np.random.default_rng(0).standard_normal((64, 256)).astype(np.float32)
    cube = fnad.jit(lambda x: x ** 3 * 2.0 + 1.0)
    assert cube(x).tobytes() == (np.power(x, 3) * 2.0 + 1.0).tobytes()
    assert "power" in [e.prim.name for e in cube.graph(x).eqns]   # NumPy's own power
    square = fnad.jit(lambda x: x ** 2 * 2.0 + 1.0)
    assert square(x).tobytes() == (np.power(x, 2) * 2.0 + 1.0).tobytes()
    assert [e.prim.name for e in square.graph(x).eqns] == ["fused_elementwise"]
