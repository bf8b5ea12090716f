"""The jit/vmap program fuzzer (tests/core/jit_fuzz.py) in the default run, a long run marked
slow, and the fuzzer itself: it catches a planted bug and prints a small reproduction."""

import contextlib
import io

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad._graph import memory
from fnad._jit import fusion as gf
from tests.core import jit_fuzz


pytestmark = pytest.mark.usefixtures("kernel_cache")


def test_fuzz_default_run():
    # 24 programs on NumPy's and numexpr's kernels, 6 on numba's (about 0.5 s of compiling
    # a program when its kernels are not in the cache yet), each program also with one
    # optimisation switched off, in turn
    jit_fuzz.fuzz(range(24), backends=[b for b in jit_fuzz.BACKENDS if b != "numba"])
    if "numba" in jit_fuzz.BACKENDS:
        jit_fuzz.fuzz(range(24, 30), backends=["numba"])


@pytest.mark.skipif("numba" not in jit_fuzz.BACKENDS, reason="numba is not installed")
def test_fuzz_rows_family():
    # row fusion's programs (softmax, norms, NaN rows, strided views...), every check with
    # the rows pass on and then off (seeds 0 and 2 draw column sums)
    for seed in range(4):
        prog = jit_fuzz.generate(seed, n_statements=5, families=["rows", "elementwise"])
        jit_fuzz.check_program(prog, backends=["numba"], passes_off=("rows",))


@pytest.mark.skipif("numba" not in jit_fuzz.BACKENDS, reason="numba is not installed")
def test_fuzz_fast_math():
    # the fast_math family under jit(fast_math=True) and jit(grad, fast_math=True), within
    # docs/jit.md's bound (a few programs here, more with -m slow)
    jit_fuzz.fuzz_fast_math(range(4))


@pytest.mark.slow
@pytest.mark.skipif("numba" not in jit_fuzz.BACKENDS, reason="numba is not installed")
def test_fuzz_fast_math_many_programs():
    jit_fuzz.fuzz_fast_math(range(100, 400), n_statements=8)


@pytest.mark.skipif("numba" not in jit_fuzz.BACKENDS, reason="numba is not installed")
def test_fuzz_products_fast_math():
    # stacks of matrices times 2-D weights, one GEMM of their rows under fast math
    # (fnad/_jit/loops.py): these seeds draw programs the fold changes
    jit_fuzz.fuzz_fast_math([12, 17, 21], n_statements=6, families=("products", "fast_math"))


@pytest.mark.skipif("numba" not in jit_fuzz.BACKENDS, reason="numba is not installed")
def test_fuzz_attention_fast_math():
    # attention as users write it, fused per tile under fast math (fnad/_jit/attention.py):
    # these seeds draw float32 programs whose forward and backward are fused
    jit_fuzz.fuzz_fast_math([10, 17, 25, 31], n_statements=4,
                            families=("attention", "fast_math"))


@pytest.mark.slow
@pytest.mark.skipif("numba" not in jit_fuzz.BACKENDS, reason="numba is not installed")
def test_fuzz_attention_fast_math_many_programs():
    jit_fuzz.fuzz_fast_math(range(60, 260), n_statements=6, families=("attention", "fast_math"))


@pytest.mark.slow
def test_fuzz_many_programs():
    # thousands of programs, every optimisation switched off in turn for each
    jit_fuzz.fuzz(range(1000, 3000), n_statements=10, all_passes_off=True)


def test_programs_cover_every_family():
    seen = set()
    for seed in range(24):
        prog = jit_fuzz.generate(seed)
        text = prog.source()
        seen.update(name for name, key in (
            ("views", "["), ("reductions", "fnp.sum("), ("comparisons", " > "),
            ("random_draws", "fnad.random."), ("scans", "lax.scan("), ("products", " @ "),
            ("casts", "fnp.astype(")) if key in text)
    assert seen == {"views", "reductions", "comparisons", "random_draws", "scans",
                    "products", "casts"}, seen


def _unsafe_dying_own(a, e, j, out, own, roots, last_of_root, taken):
    """A planted bug: a buffer is written over at any use of it, not only at its last (fused
    kernels, where the rule of issue 20 was found, no longer write over their arguments)."""
    return (type(a) is memory.Var and a not in taken and a in own and roots[a] == {a}
            and a.aval.shape == out.shape and a.aval.dtype == out.dtype)


def test_a_planted_aliasing_bug_is_caught_with_a_small_reproduction(monkeypatch):
    monkeypatch.setattr(memory, "_dying_own", _unsafe_dying_own)
    for module, name in ((gf, "_backend"), (gf, "MIN_SIZE")):
        monkeypatch.setattr(module, name, getattr(module, name))  # the script sets them
    with pytest.raises(jit_fuzz.FuzzFailure) as info:
        for seed in range(40):
            prog = jit_fuzz.generate(seed, families=["inplace_chain", "elementwise"])
            jit_fuzz.check_program(prog, backends=["off"], checks=["jit"])
    text = str(info.value)
    assert "check 'jit' on fusion backend 'off'" in text and "def f(x0, x1, i0, key):" in text
    body = text.split("def f(x0, x1, i0, key):")[1].split("return")[0]
    assert body.count(" = ") <= 4, text  # shrunk to the few statements that matter
    out = io.StringIO()
    with contextlib.redirect_stdout(out), np.errstate(all="ignore"):
        exec(text.split("---\n", 1)[1], {})  # the reproduction runs as printed
    assert out.getvalue()


def test_every_optimisation_has_a_switch():
    def f(x, w):
        a = fnp.exp(x) * 1.0
        b = fnp.exp(x) * 1.0
        fnp.log(x)
        return a + b * (w / 2.0)
    x, w = np.linspace(1, 2, 40 * 40).reshape(40, 40), np.ones(40)  # large enough to fuse
    notes = {"simplify": "simplify", "cse": "cse", "dce": "dce", "fusion": "fusion"}
    all_on = fnad.jit(f).graph(x, w)
    for name in fnad.jit.PASSES:
        off = fnad.jit(f, optimize=set(fnad.jit.PASSES) - {name})
        np.testing.assert_array_equal(off(x, w), f(x, w))
        if name in notes:
            assert any(n.startswith(notes[name]) for n in all_on.notes), (name, all_on.notes)
            assert not any(n.startswith(notes[name]) for n in off.graph(x, w).notes), name
    assert fnad.jit(f, optimize=False).graph(x, w).notes == []
    assert fnad.jit(f, optimize=()).graph(x, w).notes == []
    with pytest.raises(ValueError, match="unknown optimisation.*'fusoin'"):
        fnad.jit(f, optimize={"fusoin"})
    with pytest.raises(TypeError, match="optimize must be"):
        fnad.jit(f, optimize=3)


def test_inplace_switch():
    def f(x):
        return fnp.tanh(fnp.exp(x) @ np.ones((4, 4)))
    x = np.ones((3, 4))
    assert "out=" in fnad.jit(f)._entry(x).run.source
    assert "out=" not in fnad.jit(f, optimize=set(fnad.jit.PASSES) - {"inplace"})._entry(
        x).run.source


def test_the_fuzzer_unrolls_the_scans_it_draws():
    drawn = 0
    for seed in range(6):
        prog = jit_fuzz.generate(seed, families=["scans"])
        if "lax.scan" not in prog.source():
            continue
        drawn += 1
        ns = prog.namespace()
        g = jit_fuzz._jit(ns["f"], jit_fuzz.PASSES).graph(*prog.args(ns))
        assert any(n.startswith("unroll: ") for n in g.notes), g.notes
        assert "scan" not in g.primitive_counts()
    assert drawn
