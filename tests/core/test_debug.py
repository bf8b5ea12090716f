"""fnad.debug.print / fnad.debug.callback (issue 33) under jit, vmap, grad, jvp and scan: an
effect that jit's passes keep, in order; and fnad.config's debug_nans / debug_infs, naming
the first primitive that makes a NaN (inf) and the user's line, forward and backward."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp

X = np.array([0.1, 0.2])


def _logged(log):
    def f(x):
        y = fnp.sin(x)
        fnad.debug.callback(lambda v: log.append(("y", v.copy())), y)
        fnad.debug.callback(lambda v: log.append(("x", v.copy())), x)
        fnad.debug.callback(lambda: log.append(("unused", None)))
        return fnp.sum(y * 2)
    return f


def _check(log, per_example=False):
    log = [(n, v) for n, v in log if n != "unused"]
    names = [n for n, _ in log]
    if per_example:
        assert names == ["y", "y", "x", "x"]
        np.testing.assert_allclose([v for n, v in log if n == "y"], np.sin(X))
    else:
        assert names == ["y", "x"]
        np.testing.assert_allclose(log[0][1], np.sin(X))
        np.testing.assert_array_equal(log[1][1], X)


@pytest.mark.parametrize("path", ["eager", "jit", "grad", "jit(grad)", "grad(jit)", "jvp"])
def test_callback_sees_the_primal_values_in_order(path):
    log = []
    f = _logged(log)
    {"eager": lambda: f(X), "jit": lambda: fnad.jit(f)(X), "grad": lambda: fnad.grad(f)(X),
     "jit(grad)": lambda: fnad.jit(fnad.grad(f))(X),
     "grad(jit)": lambda: fnad.grad(fnad.jit(f))(X),
     "jvp": lambda: fnad.jvp(f, (X,), (X,))}[path]()
    _check(log)


@pytest.mark.parametrize("path", ["vmap", "jit(vmap)", "vmap(jit)", "vmap(grad)"])
def test_callback_under_vmap_runs_per_example(path):
    log = []
    f = _logged(log)
    {"vmap": lambda: fnad.vmap(f)(X), "jit(vmap)": lambda: fnad.jit(fnad.vmap(f))(X),
     "vmap(jit)": lambda: fnad.vmap(fnad.jit(f))(X),
     "vmap(grad)": lambda: fnad.vmap(fnad.grad(f))(X)}[path]()
    _check(log, per_example=True)


def test_jit_keeps_the_effect_on_every_run():
    log = []

    def f(x):
        y = fnp.sin(x)
        for _ in range(2):  # the same call twice: two calls
            fnad.debug.callback(log.append, y)
        return x

    jf = fnad.jit(f)
    for _ in range(3):
        jf(X)
    assert len(log) == 6
    text = str(jf.graph(X))
    assert text.count("debug_callback") == 2  # not removed (dce) nor merged (cse)
    assert "sin" in text  # computed for the callback only


def test_debug_print_formats(capsys):
    def f(x):
        fnad.debug.print("x = {}, {k}", x, k=x * 2)
        return x
    fnad.jit(f)(np.float64(1.5))
    fnad.vmap(f)(X)
    assert capsys.readouterr().out == "x = 1.5, 3.0\nx = 0.1, 0.2\nx = 0.2, 0.4\n"


def test_debug_print_in_a_scan_body(capsys):
    def f(c):
        def body(c, _):
            fnad.debug.print("c={}", c)
            return c + 1.0, None
        return fnad.lax.scan(body, c, None, length=3)[0]
    fnad.jit(f)(np.float64(0.0))
    assert capsys.readouterr().out == "c=0.0\nc=1.0\nc=2.0\n"


def test_debug_print_matches_jax(capsys):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)

    def run(mod, np_mod):
        def f(x):
            mod.debug.print("v={}", np_mod.multiply(x, 3.0))
            return x
        mod.vmap(f)(X)
        mod.jit(f)(X)
        return capsys.readouterr().out

    ours, theirs = run(fnad, fnp), run(jax, jax.numpy)
    assert ours == theirs


# ----------------------------------------------------------------------------- debug_nans


@pytest.fixture
def nans():
    fnad.config.update("debug_nans", True)
    yield
    fnad.config.update("debug_nans", False)
    fnad.config.update("debug_infs", False)


def _f(x):
    y = fnp.sin(x)
    z = fnp.log(y)  # the line to name
    return fnp.sum(z)


@pytest.mark.parametrize("path", ["jit", "grad", "vmap", "jit(grad)", "jvp"])
def test_debug_nans_names_the_primitive_and_the_line(nans, path):
    fun = {"jit": fnad.jit(_f), "grad": fnad.grad(_f), "vmap": fnad.vmap(_f),
           "jit(grad)": fnad.jit(fnad.grad(_f)),
           "jvp": lambda x: fnad.jvp(_f, (x,), (x,))}[path]
    with pytest.raises(FloatingPointError,
                       match=r"debug_nans: invalid value \(nan\) produced by primitive 'log' at "
                             r".*test_debug.py:\d+ \(z = fnp.log\(y\)  # the line to name\)"):
        fun(np.array([1.0, -1.0]))


def test_debug_nans_eager_uses_numpy_s_check(nans):
    with pytest.raises(FloatingPointError, match="invalid value encountered in log"):
        _f(np.array([1.0, -1.0]))


def test_debug_nans_in_the_backward_pass(nans):
    def k(x):
        return fnp.sum(fnp.where(x > 0, fnp.sqrt(x), 0.0))  # sqrt's VJP at 0: 0 * inf
    with pytest.raises(FloatingPointError,
                       match=r"debug_nans: invalid value \(nan\) produced in the backward pass "
                             r"by the VJP of 'sqrt', whose forward call was at .*test_debug.py"):
        fnad.grad(k)(np.array([0.0, 1.0]))


def test_debug_infs(nans):
    fnad.config.update("debug_nans", False)
    fnad.config.update("debug_infs", True)
    assert fnad.config.debug_infs and not fnad.config.debug_nans
    with pytest.raises(FloatingPointError, match=r"debug_infs: .* by the VJP of 'sqrt'"):
        fnad.grad(lambda x: fnp.sum(fnp.sqrt(x)))(np.array([0.0, 1.0]))
    with pytest.raises(FloatingPointError, match=r"debug_infs: .* primitive 'exp'"):
        fnad.jit(lambda x: fnp.exp(x) * 1.0)(np.array([1000.0]))


def test_switch_off_restores_everything():
    err = np.geterr()
    fnad.config.update("jax_debug_nans", True)
    assert fnad.config.debug_nans
    fnad.config.update("jax_debug_nans", False)
    assert np.geterr() == err and not fnad.config.debug_nans
    with np.errstate(invalid="ignore"):
        assert np.isnan(fnad.jit(_f)(np.array([-1.0])))
    fnad.config.update("jax_enable_x64", True)  # what fnad does anyway: accepted
    assert fnad.config.jax_enable_x64
    with pytest.raises(ValueError, match="unknown option 'jax_enable_x64' = False"):
        fnad.config.update("jax_enable_x64", False)
    with pytest.raises(ValueError, match="unknown option 'jax_traceback_filtering'"):
        fnad.config.update("jax_traceback_filtering", "off")


def test_setting_turns_it_on_at_import():
    import subprocess
    import sys
    code = ("import fnad, fnad.numpy as fnp, numpy as np\n"
            "assert fnad.config.debug_nans\n"
            "try:\n    fnad.grad(lambda x: fnp.sum(fnp.log(x)))(np.array([-1.0]))\n"
            "except FloatingPointError as e:\n    print('raised', 'log' in str(e))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ, "FNAD_DEBUG_NANS": "1"})
    assert out.stdout.strip() == "raised True", out.stderr
