"""Bad input gets a clear error that names the problem and what to do."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad.extend import primitive


def test_grad_of_non_scalar_output():
    with pytest.raises(TypeError, match=r"shape \(3,\).*jacrev"):
        fnad.grad(lambda x: x * 2)(np.ones(3))


def test_grad_of_non_float_output():
    with pytest.raises(TypeError, match="float"):
        fnad.grad(lambda x: fnp.argmax(x))(np.ones(3))


def test_grad_of_pytree_output():
    with pytest.raises(TypeError, match="scalar"):
        fnad.grad(lambda x: (fnp.sum(x), 1.0))(np.ones(3))


@pytest.mark.parametrize("bad", [np.arange(3), np.array([True, False]), 3])
def test_grad_integer_or_bool_input(bad):
    with pytest.raises(TypeError, match="argument 0.*(int|bool)"):
        fnad.grad(lambda x: fnp.sum(x * 1.0))(bad)


def test_grad_integer_input_in_argnums_tuple_names_argument():
    with pytest.raises(TypeError, match="argument 1"):
        fnad.grad(lambda x, n: fnp.sum(x) * n, argnums=(0, 1))(np.ones(2), 3)


def test_argnums_out_of_range():
    with pytest.raises(ValueError, match="argnums"):
        fnad.grad(lambda x: x, argnums=2)(1.0)


def test_vjp_wrong_cotangent_shape_and_dtype():
    _, f_vjp = fnad.vjp(lambda x: x * 2, np.ones(3))
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        f_vjp(np.ones(2))
    with pytest.raises(ValueError, match="float32.*float64"):
        f_vjp(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="structure"):
        f_vjp((np.ones(3),))


def test_missing_rule_names_primitive_and_rule():
    norule = primitive(np.sin, "sin_without_rules")
    with pytest.raises(NotImplementedError, match="sin_without_rules.*vjp"):
        fnad.grad(lambda x: fnp.sum(norule(x)))(np.ones(2))
    with pytest.raises(NotImplementedError, match="sin_without_rules.*jvp"):
        fnad.jvp(norule, (np.ones(2),), (np.ones(2),))


def test_traced_value_into_plain_numpy_is_refused():
    with pytest.raises(TypeError, match="fnad.numpy"):
        fnad.grad(lambda x: float(np.sum(np.asarray(x))))(np.ones(2))


def test_jvp_needs_tuples_and_matching_shapes():
    with pytest.raises(TypeError, match="tuples"):
        fnad.jvp(fnp.sin, np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="shape"):
        fnad.jvp(fnp.sin, (np.ones(2),), (np.ones(3),))


def test_custom_vjp_without_rule():
    f = fnad.custom_vjp(lambda x: x)
    with pytest.raises(TypeError, match="defvjp"):
        f(1.0)


def test_has_aux_requires_pair():
    with pytest.raises(TypeError, match="pair"):
        fnad.grad(lambda x: fnp.sum(x), has_aux=True)(np.ones(2))
