"""The optimisations of fnad.jit give the unoptimised program's results.

Bit-identical (np.array_equal, same dtype) wherever no arithmetic changes: simplifications,
the NumPy fallback of fusion, and fused +, -, *, /, sqrt, comparisons, where and casts on
every backend (numba fuses nothing else). Transcendental functions in a numexpr kernel come
from numexpr's math: within TOL (float32 2e-6, float64 1e-13 relative) of NumPy's.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad_optim as optim
from fnad._jit import fusion as gf
from fnad._jit import kernels as gk
from fnad._graph.ir import Eqn, Var
from fnad._jit.simplify import simplify

BACKENDS = [b for b in ("numba", "numexpr", "numpy") if gf._importable(b)]
TOL = {np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-13}


@pytest.fixture(autouse=True)
def _small_kernels(monkeypatch, tmp_path_factory):
    """Fuse small test arrays too, and keep numba's kernel files out of the home directory."""
    monkeypatch.setattr(gf, "MIN_SIZE", 2)
    monkeypatch.setenv("FNAD_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "fnad_cache"))
    old = gf._backend
    yield
    gf._backend = old


def _both(f, *args, backend="numpy"):
    """(optimised outputs, unoptimised outputs, optimised graph) as flat lists."""
    gf.set_backend(backend)
    fast = fnad.jit(f)
    ref = fnad.jit(f, optimize=False)
    out = fnad.tree.tree_leaves(fast(*args))
    want = fnad.tree.tree_leaves(ref(*args))
    return out, want, fast.graph(*args)


def _assert_same(out, want, exact=True):
    assert len(out) == len(want)
    for o, w in zip(out, want):
        o, w = np.asarray(o), np.asarray(w)
        assert o.dtype == w.dtype and o.shape == w.shape, (o.dtype, w.dtype, o.shape, w.shape)
        if exact:
            assert np.array_equal(o, w, equal_nan=o.dtype.kind == "f"), np.abs(o - w).max()
            if o.dtype.kind == "f":  # and the sign of every zero
                keep = ~np.isnan(w)
                assert np.array_equal(np.signbit(o[keep]), np.signbit(w[keep]))
        else:
            np.testing.assert_allclose(o, w, rtol=TOL[o.dtype], atol=TOL[o.dtype])


def _fused(graph):
    return graph.primitive_counts().get("fused_elementwise", 0)


# --------------------------------------------------------------------------- simplify
def _simplified(f, *args):
    g = simplify(fnad.make_graph(f)(*args))
    return g, fnad.tree.tree_leaves(g(*args)), fnad.tree.tree_leaves(f(*args))


X32 = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("f, rule", [
    (lambda x: x * 1, "x*1"),
    (lambda x: 1.0 * x, "x*1"),
    (lambda x: x * np.ones((3, 4), np.float32), "x*1"),
    (lambda x: x - 0, "x-0"),
    (lambda x: x + -0.0, "x+0"),
    (lambda x: x / 1, "x/1"),
    (lambda x: x ** 1, "x**1"),
    (lambda x: -(-x), "-(-x)"),
    (lambda x: x * np.full((3, 1), 0.5, np.float32), "uniform constant"),
])
def test_simplify_rules_fire_and_keep_every_bit(f, rule):
    g, out, want = _simplified(f, X32)
    assert any(rule in n for n in g.notes), g.notes
    _assert_same(out, want)


def test_simplify_astype_to_the_same_dtype():
    # fnp.astype never stages a same-dtype cast itself; a rewritten graph may hold one
    g = fnad.make_graph(lambda x: fnp.astype(x, np.float64) * 2.0)(X32)
    cast = g.eqns[0]
    a = g.invars[0]
    same = Var(a.aval)
    g.eqns[0] = Eqn(cast.prim, (a, np.dtype(np.float32)), {}, [same])
    g.eqns[1] = Eqn(g.eqns[1].prim, (same, 2.0), {}, [Var(a.aval)])
    g.outvars = [g.eqns[1].outvars[0]]
    s = simplify(g)
    assert "astype same dtype 1" in s.notes[-1] and len(s.eqns) == 1
    _assert_same(s.run_flat([X32]), g.run_flat([X32]))


def test_simplify_keeps_what_would_change_bits():
    x = np.array([-0.0, 1.0], np.float32)
    for f in (lambda x: x + 0.0, lambda x: x - -0.0, lambda x: x * np.float64(1.0),
              lambda x: x * np.ones((2, 2), np.float32)):  # -0+0 is +0; dtype; shape
        g, out, want = _simplified(f, x)
        assert not g.notes, g.notes
        _assert_same(out, want)
    ints = np.arange(4, dtype=np.int32)
    g, out, want = _simplified(lambda i: i + 0, ints)
    assert g.notes and not g.eqns
    _assert_same(out, want)


def test_simplify_inside_jit_reports_counts():
    g = fnad.jit(lambda x: (x * 1 + x) ** 1).graph(X32)
    assert any(n.startswith("simplify: ") and "x*1 1" in n and "x**1 1" in n for n in g.notes)


# --------------------------------------------------------------------------- fusion
def _chain(x, b, c):
    y = x * 0.5 + b  # row broadcast of b, Python scalar weakly typed
    z = fnp.where(y > 0, y, 0.1 * y) - c  # column broadcast of c
    return fnp.sqrt(z * z + 1.0) / 3.0, y


def _data(dtype):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((64, 48)).astype(dtype), rng.standard_normal(48).astype(dtype),
            rng.standard_normal((64, 1)).astype(dtype))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_arithmetic_is_bit_identical(backend, dtype):
    out, want, g = _both(_chain, *_data(dtype), backend=backend)
    assert _fused(g) >= 1, str(g)
    assert any("fusion" in n for n in g.notes)
    _assert_same(out, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_transcendentals_within_tolerance(backend, dtype):
    def f(x, b, c):
        return fnp.tanh(x) * fnp.exp(-x * x) + fnp.log1p(fnp.abs(b)) - fnp.sin(c)
    out, want, g = _both(f, *_data(dtype), backend=backend)
    assert _fused(g) >= 1, str(g)
    _assert_same(out, want, exact=backend != "numexpr")


@pytest.mark.parametrize("backend", BACKENDS)
def test_fused_dtypes_follow_numpy(backend):
    def f(x32, x64, i, m):
        a = x32 * 3 + 1.5  # float32 stays float32 with Python scalars
        b = a + x64  # float32 + float64 -> float64
        c = fnp.where(m, a, -a)  # bool condition
        d = fnp.astype(m, np.float32) * a  # cast
        e = i * 2 + 1  # int32 with Python ints stays int32
        f_ = i + x32  # int32 + float32 -> float64
        return a, b, c, d, e, f_ * 2.0
    rng = np.random.default_rng(1)
    args = (rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal((8, 16)),
            rng.integers(-5, 5, (8, 16)).astype(np.int32), rng.random((8, 16)) > 0.5)
    out, want, g = _both(f, *args, backend=backend)
    assert _fused(g) >= 1
    _assert_same(out, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fusion_broadcasts_views_and_shared_values(backend):
    def f(x, t, s, r):
        y = x * t  # t is a transposed (non-contiguous) array
        u = y * s + r  # (4, 1, 5) general broadcast of s, r of shape (3, 1)
        return u * u, y - 1.0, fnp.sum(u)  # y read outside: a second output
    rng = np.random.default_rng(2)
    args = (rng.standard_normal((4, 3, 5)), rng.standard_normal((5, 3, 4)).transpose(2, 1, 0),
            rng.standard_normal((4, 1, 5)), rng.standard_normal((3, 1)))
    out, want, g = _both(f, *args, backend=backend)
    assert _fused(g) >= 1
    _assert_same(out, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_value_read_by_an_unfused_op_between_elementwise_ops(backend):
    def f(x):
        a = x * 2.0
        s = fnp.sum(a, axis=1, keepdims=True)  # reads a: its cluster is complete
        return (a + s) * 3.0, a * 5.0
    out, want, g = _both(f, np.arange(12.0).reshape(3, 4), backend=backend)
    _assert_same(out, want)


def test_small_arrays_and_cupy_stay_unfused(monkeypatch):
    monkeypatch.setattr(gf, "MIN_SIZE", 1024)
    out, want, g = _both(_chain, *_data(np.float32), backend=BACKENDS[0])
    assert _fused(g) >= 1  # 64 * 48 elements
    out, want, g = _both(lambda x: fnp.tanh(x * 2.0) + 1.0, np.ones(10), backend=BACKENDS[0])
    assert _fused(g) == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_adam_training_step_is_bit_identical(backend):
    rng = np.random.default_rng(3)
    params = {"w": rng.standard_normal((32, 16)).astype(np.float32),
              "b": np.zeros(16, np.float32)}
    x = rng.standard_normal((8, 32)).astype(np.float32)
    opt = optim.adam(1e-2)
    state = opt.init(params)

    def step(p, s, x):
        loss, g = fnad.value_and_grad(lambda p: fnp.mean(fnp.maximum(x @ p["w"] + p["b"],
                                                                     0.0) ** 2))(p)
        u, s = opt.update(g, s, p)
        return optim.apply_updates(p, u), s, loss
    out, want, g = _both(step, params, state, x, backend=backend)
    assert _fused(g) >= 2
    _assert_same(out, want)
    assert g.memory_plan().peak <= fnad.jit(step, optimize=False).graph(
        params, state, x).memory_plan().peak
    if backend == "numba":  # no kernel writes over a dying argument (fnad/_graph/memory.py:
        gf.set_backend("numba")  # it would run scalar); these arrays are below the arena's size
        assert "out=(" not in fnad.jit(step)._entry(params, state, x).run.source


def test_grad_of_a_fused_jit_sees_the_unoptimised_program():
    gf.set_backend(BACKENDS[0])
    f = fnad.jit(lambda x: fnp.sum(fnp.tanh(x * 2.0) * x))
    x = np.linspace(-1, 1, 20)
    np.testing.assert_allclose(fnad.grad(f)(x), fnad.grad(lambda x: fnp.sum(
        fnp.tanh(x * 2.0) * x))(x), rtol=1e-14)


def test_fallback_when_no_kernel_library_is_importable(monkeypatch):
    real = gf._importable
    monkeypatch.setattr(gf, "_importable", lambda n: n in ("numpy", "off") and real(n))
    monkeypatch.setattr(gf, "_backend", None)
    monkeypatch.delenv("FNAD_FUSION", raising=False)
    assert gf.available_backends() == ["numpy"] and gf.get_backend() == "numpy"
    with pytest.raises(ImportError, match="fnad\\[speed\\]"):
        gf.set_backend("numba")
    with pytest.raises(ValueError, match="unknown fusion backend"):
        gf.set_backend("tvm")
    out, want, g = _both(_chain, *_data(np.float32), backend="numpy")
    assert _fused(g) >= 1 and "fused_numpy" in str(g)
    _assert_same(out, want)


def test_fusion_off():
    out, want, g = _both(_chain, *_data(np.float32), backend="off")
    assert _fused(g) == 0
    _assert_same(out, want)


@pytest.mark.skipif("numba" not in BACKENDS, reason="numba is not installed")
def test_numba_kernels_are_cached_on_disk(tmp_path):
    code = ("import numpy as np, fnad, fnad.numpy as fnp\n"
            "from fnad._jit import fusion as gf\n"
            "gf.set_backend('numba'); gf.MIN_SIZE = 2\n"
            "f = fnad.jit(lambda x: fnp.sqrt(x * 3.0 + 1.0) - x)\n"
            "f(np.ones(7)); import sys\n"
            "k = [m for n, m in sys.modules.items() if n.startswith('fnad_kernel_')]\n"
            "print(sum(sum(m.serial.stats.cache_hits.values()) for m in k))\n")
    env = dict(os.environ, FNAD_CACHE_DIR=str(tmp_path), PYTHONPATH=os.getcwd())
    first = int(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                 capture_output=True, text=True).stdout)
    files = os.listdir(tmp_path / "kernels")
    assert any(f.endswith(".py") for f in files) and "__pycache__" in files
    assert any(f.endswith(".nbi") for f in os.listdir(tmp_path / "kernels" / "__pycache__"))
    second = int(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                  capture_output=True, text=True).stdout)
    assert (first, second) == (0, 1)  # compiled, then loaded from the cache


@pytest.mark.skipif("numba" not in BACKENDS, reason="numba is not installed")
def test_numba_parallel_variant(monkeypatch):
    monkeypatch.setattr(gk, "PARALLEL_MIN", 16)
    out, want, g = _both(_chain, *_data(np.float64), backend="numba")
    _assert_same(out, want)


def test_cupy_graphs_are_left_unfused():
    cupy = pytest.importorskip("cupy")
    gf.set_backend(BACKENDS[0])
    g = fnad.jit(lambda x: fnp.tanh(x * 2.0) + 1.0).graph(cupy.ones((64, 64)))
    assert _fused(g) == 0


# --------------------------------------------------------------------------- dispatch
def test_fast_dispatch_keeps_structures_and_retraces_on_new_signatures():
    from collections import namedtuple
    from dataclasses import dataclass
    State = namedtuple("State", "m count")

    @fnad.tree.register_dataclass
    @dataclass
    class Box:
        v: object

    traces = []

    def f(p, s, scale, box):
        traces.append(1)
        return {"w": p["w"] * scale, "b": [p["b"] + 1.0, None]}, State(s.m * 2.0, s.count + 1), \
            box.v + 1.0

    jf = fnad.jit(f)
    p = {"w": np.ones((2, 3)), "b": np.zeros(3)}
    s = State(np.ones(3, np.float32), 0)
    for _ in range(3):
        out = jf(p, s, 2.0, Box(np.ones(2)))
        want = f(p, s, 2.0, Box(np.ones(2)))
        assert fnad.tree.tree_structure(out) == fnad.tree.tree_structure(want)
        _assert_same(fnad.tree.tree_leaves(out), fnad.tree.tree_leaves(want))
        assert isinstance(out[1], State) and out[0]["b"][1] is None
    assert jf.cache_size() == 1 and len(traces) == 4  # one trace, three eager reference calls
    jf(p, s, 2, Box(np.ones(2)))  # an int scale: another signature
    jf({"w": np.ones((4, 3)), "b": np.zeros(3)}, s, 2.0, Box(np.ones(2)))  # a new shape
    jf(p, State(np.ones(3, np.float64), 0), 2.0, Box(np.ones(2)))  # a new dtype
    assert jf.cache_size() == 4
    jf.clear_cache()
    jf(p, s, 2.0, Box(np.ones(2)))
    assert jf.cache_size() == 1


@pytest.mark.skipif("numba" not in BACKENDS, reason="numba is not installed")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numba_float_ops_match_numpy_on_special_values(dtype):
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5, 1e-30, 3e30])
    x = np.repeat(specials, len(specials)).astype(dtype)
    y = np.tile(specials, len(specials)).astype(dtype)
    unary = [fnp.negative, fnp.positive, fnp.square, fnp.sqrt, fnp.absolute, fnp.fabs,
             fnp.reciprocal, fnp.floor, fnp.ceil, fnp.trunc, fnp.sign]
    binary = [fnp.add, fnp.subtract, fnp.multiply, fnp.divide, fnp.maximum, fnp.minimum,
              fnp.fmax, fnp.fmin, fnp.copysign, fnp.greater, fnp.less_equal, fnp.equal,
              fnp.not_equal]

    def f(x, y):
        t = x * 1.5  # every op reads t: one cluster
        return [u(t) for u in unary] + [b(t, y) for b in binary] + [fnp.where(t > y, t, y)]
    with np.errstate(all="ignore"):
        out, want, g = _both(f, x, y, backend="numba")
    assert _fused(g) == 1, str(g)
    _assert_same(out, want)


def _gelu_bias(x, b):
    h = x + b
    return 0.5 * h * (1.0 + fnp.tanh(0.7978846 * (h + 0.044715 * h ** 3))), h, h * h


def _col_flat(x, m, y):  # x - m broadcasts by columns; x * y + y is a flat loop
    return x - m, x * y + y, (x - m) * 1.5 + y


@pytest.mark.skipif("numba" not in BACKENDS, reason="numba is not installed")
@pytest.mark.parametrize("fast", [False, True], ids=["exact", "fast"])
def test_split_kernels_give_the_same_bits_at_any_thread_count(monkeypatch, fast):
    # rows split over fnad's pool (row broadcast: by rows; flat: by BLOCK-element blocks,
    # the last one short), at any thread count and any uneven split of the rows
    from fnad.kernels import _threads
    gf.set_backend("numba")
    rng = np.random.default_rng(7)
    x = rng.standard_normal((523, 257)).astype(np.float32)
    b, y = rng.standard_normal(257).astype(np.float32), rng.standard_normal(x.shape)
    m = rng.standard_normal((523, 1)).astype(np.float32)
    monkeypatch.setattr(gk, "SPLIT_MIN", 0)
    monkeypatch.setattr(_threads, "MIN_WORK", 0)
    for f, args in ((_gelu_bias, (x, b)), (_col_flat, (x, m, y.astype(np.float32)))):
        jf = fnad.jit(f, fast_math=fast)
        outs = []
        for n in (1, 2, 3):
            _threads.set_threads(n)
            try:
                outs.append(jf(*args))
            finally:
                _threads.set_threads(None)

        def uneven(kernel, n, args, work):
            seen.append(n)
            for lo, hi in ((0, 1), (1, n // 3), (n // 3, n)):
                kernel(lo, hi, *args)
        seen, pool = [], list(gk._runner)
        gk._runner[:] = [uneven]  # the list the built kernels read
        try:
            outs.append(jf(*args))
        finally:
            gk._runner[:] = pool
        assert seen
        assert "fused_elementwise" in jf.graph(*args).primitive_counts()
        for o in outs[1:]:
            assert [a.tobytes() for a in o] == [a.tobytes() for a in outs[0]]
        if not fast:
            assert [a.tobytes() for a in outs[0]] == [np.asarray(a).tobytes() for a in f(*args)]


@pytest.mark.skipif("numba" not in BACKENDS, reason="numba is not installed")
def test_a_kernel_numba_cannot_compile_falls_back_to_numpy(monkeypatch):
    real = gk._numba_source

    def broken(kernel, kinds):
        head, rest = real(kernel, kinds).split("\n", 1)
        return f"{head}\n    o0[0] = 'not a number'\n{rest}"
    monkeypatch.setattr(gk, "_numba_source", broken)
    out, want, g = _both(_chain, *_data(np.float32), backend="numba")
    _assert_same(out, want)
    kernels = [e.kwargs["kernel"] for e in g.eqns if e.prim.name == "fused_elementwise"]
    assert kernels and all("TypingError" in k.fallback for k in kernels)
