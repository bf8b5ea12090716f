"""`abstract_eval` agrees with the real output's shape and dtype for every primitive call the
op battery makes (forward, VJP and JVP, float64 inputs, the cases of tests/numpy/cases*.py),
plus integer, boolean, float32 and Python-scalar inputs for the elementwise family."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad._core.abstract import AbstractEvalError, ShapedArray, abstract_eval
from fnad.extend import as_primitive
from tests.core.avalcheck import checking_abstract_eval
from tests.numpy import cases_linalg
from tests.numpy.battery import leaves
from tests.numpy.cases import CASES
from tests.numpy.test_nondiff import BINARY, UNARY

ALL_CASES = CASES + cases_linalg.CASES


def _run(case):
    args = tuple(np.asarray(a, np.float64) for a in case.args)
    out, f_vjp = fnad.vjp(case.fun, *args)
    f_vjp(type(out)(np.ones(np.shape(o)) for o in out) if isinstance(out, (tuple, list))
          else np.ones(np.shape(out)))
    if "fwd" in case.modes:
        fnad.jvp(case.fun, args, tuple(np.ones_like(a) for a in args))


def test_op_battery_abstract_eval_matches_real_outputs():
    with checking_abstract_eval() as report:
        for case in ALL_CASES:
            _run(case)
    assert not report.missing, sorted(report.missing)
    assert not report.errors, "\n".join(report.failures())
    assert len(report.seen) > 100, sorted(report.seen)


X = np.array([[-1.7, 0.2, 2.5], [0.4, -0.6, 3.3]])
# float64, float32, int64, int8, bool, uint8 arrays; Python int, float and bool (weak).
VALUES = [X, X.astype(np.float32), np.array([[1, -2, 3], [4, 0, -6]]),
          np.array([1, 2, 3], np.int8), X > 0, np.arange(3, dtype=np.uint8), np.float32(2.5),
          2, 2.5, True]


def _agree(fun, *args):
    """abstract_eval of `fun`'s primitive on `args` vs the real result (both may raise)."""
    prim = as_primitive(fun)
    try:
        with np.errstate(all="ignore"):
            out = prim.impl(*args)
    except (TypeError, ValueError):
        return
    aval = abstract_eval(prim, *args)
    for o, a in zip(leaves(out), leaves(aval)):
        assert (a.shape, a.dtype) == (np.shape(o), np.result_type(o)), (prim.name, args, a)


@pytest.mark.parametrize("name", [n for n in UNARY if n not in ("nonzero", "argwhere",
                                                              "flatnonzero")])
def test_nondiff_unary_abstract_eval(name):
    for x in VALUES:
        if np.ndim(x) or not isinstance(x, (int, float, bool)):
            _agree(getattr(fnp, name), x)


@pytest.mark.parametrize("name", BINARY + ["add", "multiply", "power", "maximum", "divide",
                                           "arctan2", "hypot", "copysign", "logaddexp"])
def test_elementwise_dtypes_follow_numpy(name):
    """Python scalars are weak (NEP 50): float32 + 2.0 stays float32, int8 + 1 stays int8."""
    for a in VALUES:
        for b in VALUES:
            if np.ndim(a) or np.ndim(b):
                _agree(getattr(fnp, name), a, b)


def test_where_and_clip_dtypes_follow_numpy():
    from fnad.numpy._elementwise import _clip_p, _where_p
    for a in VALUES:
        for b in VALUES:
            _agree(_where_p, X > 0, a, b)
            _agree(_clip_p, a, b, None)
            _agree(_clip_p, a, 0, b)


def test_weak_scalars_in_ufunc_abstract_eval():
    add = as_primitive(np.add)
    f32 = ShapedArray((2,), np.float32)
    assert abstract_eval(add, np.ones(2, np.float32), 2.0) == f32
    assert add.abstract_eval(f32, 2.0) == f32
    assert add.abstract_eval(ShapedArray((), np.float64, weak_type=True), f32) == f32
    assert add.abstract_eval(ShapedArray((3, 1), np.int8), 1).dtype == np.int8
    weak = ShapedArray((), np.float64, weak_type=True)
    assert add.abstract_eval(weak, 1.0) == weak  # weak with weak stays weak


@pytest.mark.parametrize("fun", [fnp.nonzero, fnp.argwhere, fnp.flatnonzero])
def test_data_dependent_shapes_raise_a_clear_error(fun):
    with pytest.raises(AbstractEvalError, match=f"{fun.__name__}: the shape of its result "
                                                "depends on the values"):
        abstract_eval(as_primitive(fun), X)


def test_boolean_mask_indexing_is_data_dependent():
    from fnad.numpy._indexing import getitem
    with pytest.raises(AbstractEvalError, match="getitem"):
        getitem.primitive.abstract_eval(ShapedArray((2, 3), np.float64),
                                        (ShapedArray((2, 3), bool),))
    # a concrete mask is fine: its count is known
    assert getitem.primitive.abstract_eval(ShapedArray((2, 3), np.float64), (X > 0,)).shape \
        == (4,)
