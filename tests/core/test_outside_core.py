"""Defects of the transforms' core found by outside corpora and new users (issue 31)."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp

# ----------------------------------------------------------------------------- jit aliasing

FRESH = {  # eager NumPy hands out a new array for each of these
    "astype same dtype": lambda v: v.astype(np.float64),
    "astype copy=True": lambda v: v.astype(np.float64, copy=True),
    "fnp.astype": lambda v: fnp.astype(v, np.float64),
    "flatten": lambda v: v.flatten(),
    "+v": lambda v: +v,
    "copy": lambda v: v.copy(),
    "fnp.copy": lambda v: fnp.copy(v),
    "fnp.array": lambda v: fnp.array(v),
    "x*1 reshaped": lambda v: (v * 1).reshape(-1),
    "copy then reshape": lambda v: fnp.copy(v).reshape(-1),
    "astype, and v": lambda v: (v.astype(np.float64), v),
}
ALIASED = {  # ... and the input itself or a view of it for these
    "astype copy=False": lambda v: v.astype(np.float64, copy=False),
    "fnp.asarray": lambda v: fnp.asarray(v),
    "reshape": lambda v: v.reshape(-1),
    "identity": lambda v: v,
    "fnp.array copy=False": lambda v: fnp.array(v, copy=False),
}


def _aliases(out, x):
    return [np.shares_memory(o, x) for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("name", list(FRESH) + list(ALIASED))
def test_jit_output_aliases_an_input_only_where_eager_does(name):
    """Issue 31: jit(lambda v: v.astype(np.float64, copy=True))(x) returned x itself."""
    f = FRESH.get(name) or ALIASED[name]
    x = np.arange(6.0).reshape(2, 3)
    want = _aliases(f(x), x)
    assert want[0] == (name in ALIASED)  # (the first output)
    out = fnad.jit(f)(x)
    assert _aliases(out, x) == want
    before = np.array(out[0] if isinstance(out, tuple) else out)
    x[...] = -1
    after = out[0] if isinstance(out, tuple) else out
    assert np.array_equal(after, before) == (name not in ALIASED)


def test_fnp_astype_copies_like_numpy():
    x = np.arange(3.0)
    assert not np.shares_memory(fnp.astype(x, np.float64), x)
    assert fnp.astype(x, np.float64, copy=False) is x
    g = fnad.grad(lambda v: fnp.sum(v.astype(np.float64) ** 2))(x)
    np.testing.assert_array_equal(g, 2 * x)


# ------------------------------------------------------------------ float() of traced values

TRANSFORMS = {
    "grad": lambda f, x: fnad.grad(f)(x),
    "vjp": lambda f, x: fnad.vjp(f, x)[1](1.0),
    "jvp": lambda f, x: fnad.jvp(f, (x,), (np.ones_like(x),)),
    "jacrev": lambda f, x: fnad.jacrev(f)(x),
    "jacfwd": lambda f, x: fnad.jacfwd(f)(x),
    "hessian": lambda f, x: fnad.hessian(f)(x),
}


@pytest.mark.parametrize("conversion", [float, complex])
@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_float_of_a_differentiated_value_raises(transform, conversion):
    """Issue 31: grad(lambda x: float(fnp.sum(x ** 2))) gave a zero gradient silently."""
    x = np.array([1.0, 2.0])
    with pytest.raises(fnad.ConcretizationError, match=rf"{conversion.__name__}\(\).*"
                       r"stop_gradient"):
        TRANSFORMS[transform](lambda v: conversion(fnp.sum(v ** 2)), x)


@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_control_flow_and_stop_gradient_still_read_numbers(transform):
    x = np.array([1.0, 2.0])
    seen = []

    def f(v):
        seen.append(float(fnad.stop_gradient(v[0])))  # logging
        n = int(v[1])  # an integer has no derivative
        return fnp.sum(v ** 2) * n if v[0] > 0 else -fnp.sum(v)

    TRANSFORMS[transform](f, x)
    assert seen and seen[0] == 1.0
    np.testing.assert_allclose(fnad.grad(f)(x), 4 * x)


def test_float_of_an_integer_traced_value_works():
    def f(v):
        return v * float(fnp.argmax(v))  # argmax passes through: a plain integer
    np.testing.assert_allclose(fnad.grad(lambda v: fnp.sum(f(v)))(np.array([1.0, 3.0])), 1.0)


# ----------------------------------------------------------------------------- fnad.save errors

def test_save_into_a_missing_folder_names_the_path(tmp_path):
    """Issue 31: the error named the temporary file (ckpt.npz.tmp1234-89abcdef)."""
    path = tmp_path / "no" / "such" / "ckpt.npz"
    with pytest.raises(FileNotFoundError, match="does not exist; create it first") as info:
        fnad.save(path, {"a": np.ones(2)})
    assert info.value.filename == str(path) and ".tmp" not in str(info.value)
    with pytest.raises(IsADirectoryError, match="is a folder") as info:
        fnad.save(tmp_path, {"a": np.ones(2)})
    assert ".tmp" not in str(info.value)
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError, match="is a file, not a folder"):
        fnad.save(tmp_path / "file" / "ckpt.npz", {"a": np.ones(2)})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


# ----------------------------------------------------------------------------- integer inputs

INT_CALLS = {
    "grad": lambda f, x: fnad.grad(lambda v: fnp.sum(f(v)))(x),
    "value_and_grad": lambda f, x: fnad.value_and_grad(lambda v: fnp.sum(f(v)))(x),
    "jacrev": lambda f, x: fnad.jacrev(f)(x),
    "jacfwd": lambda f, x: fnad.jacfwd(f)(x),
    "hessian": lambda f, x: fnad.hessian(lambda v: fnp.sum(f(v)))(x),
    "vjp": lambda f, x: fnad.vjp(f, x)[1](np.ones(3)),
    "jvp": lambda f, x: fnad.jvp(f, (x,), (np.ones(3),)),
}


@pytest.mark.parametrize("x", [np.arange(3), np.arange(3) > 0], ids=["int", "bool"])
@pytest.mark.parametrize("transform", list(INT_CALLS))
def test_every_transform_refuses_integer_inputs(transform, x):
    """Issue 31: jacrev, jacfwd, hessian, vjp and jvp of an integer input returned zeros
    while grad refused; all refuse now, naming the transform and the argument."""
    name = "grad" if transform == "value_and_grad" else transform

    def f(v):
        return v * 2.0

    with pytest.raises(TypeError, match=rf"^{name} requires real- or complex-valued inputs, "
                       rf"but v \(argument 0\) has dtype {x.dtype}.*x.astype\(float\)"):
        INT_CALLS[transform](f, x)


def test_integer_arguments_left_out_or_closed_over_still_work():
    x, i = np.arange(3.0), np.array(1)
    assert fnad.grad(lambda v, k: v[k] * 2.0)(x, i)[1] == 2.0
    assert fnad.jacrev(lambda v, k: v * k, argnums=0)(x, i).shape == (3, 3)
    _, f_vjp = fnad.vjp(lambda v: v[i] * 2.0, x)
    np.testing.assert_array_equal(f_vjp(1.0)[0], [0.0, 2.0, 0.0])
    # jit's and lax's own derivative rules still hold integer operands fixed
    body = fnad.jit(lambda v, k: v * k)
    assert fnad.grad(lambda v: fnp.sum(body(v, 3)))(x)[0] == 3.0
    out = fnad.grad(lambda v: fnad.lax.fori_loop(0, 3, lambda j, c: c * v, 1.0))(2.0)
    assert out == pytest.approx(12.0)
