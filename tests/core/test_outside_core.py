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

