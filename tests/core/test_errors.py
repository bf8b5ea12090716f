"""Bad input gets a clear error that names the problem and what to do."""

import collections

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
    with pytest.raises(ValueError, match="int64.*float64"):
        f_vjp(np.ones(3, np.int64))
    with pytest.raises(ValueError, match="complex128.*float64"):
        f_vjp(np.ones(3, np.complex128))
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


# ----------------------------------------------------------------------------- issue 21


def _loss(params, x):
    return fnp.sum(params["layer"]["w"]) * x


PARAMS = {"layer": {"w": np.ones(3), "name": "dense"}}


def test_grad_of_a_string_leaf_names_grad_and_the_path():
    """Said "vjp", "leaf 0" and suggested fnad.numpy.asarray (issue 21)."""
    with pytest.raises(TypeError, match=r"^grad: params\['layer'\]\['name'\] \(argument 0\) is "
                                        r"'dense' \(str\), not an array or a Python number, "
                                        r"so it cannot be differentiated\. Remove it .*argnums"
                                        r".*static_argnums") as info:
        fnad.grad(_loss)(PARAMS, 2.0)
    assert "vjp" not in str(info.value) and "asarray" not in str(info.value)
    with pytest.raises(TypeError, match=r"^grad: xs\[1\]\.name \(argument 1\) is 'a'"):
        Pair = collections.namedtuple("Pair", ["value", "name"])
        fnad.grad(lambda x, xs: x * xs[0], argnums=(0, 1))(1.0, [np.ones(1), Pair(1.0, "a")])
    with pytest.raises(TypeError, match=r"^jacrev: params\['layer'\]\['name'\] \(argument 0\)"):
        fnad.jacrev(_loss)(PARAMS, 2.0)
    with pytest.raises(TypeError, match=r"^vjp: params\['layer'\]\['name'\] \(argument 0\) is "
                                        r"'dense' \(str\).*vjp takes arrays"):
        fnad.vjp(_loss, PARAMS, 2.0)
    with pytest.raises(TypeError, match=r"^jvp: params\['layer'\]\['name'\]"):
        fnad.jvp(_loss, (PARAMS, 2.0), (PARAMS, 1.0))
    # leaving it out of the differentiated arguments works, as the message says
    g = fnad.grad(lambda w, name: _loss({"layer": {"w": w, "name": name}}, 2.0))(np.ones(3),
                                                                               "dense")
    np.testing.assert_allclose(g, 2.0)


def test_at_on_a_traced_value_points_to_fnp_at():
    for transform in (fnad.grad, fnad.jit, fnad.vmap):
        with pytest.raises(AttributeError, match=r"has no attribute 'at'.*fnad\.numpy\.at\(x\)"
                                                 r"\[idx\]\.set\(v\)"):
            transform(lambda x: fnp.sum(x.at[0].set(1.0)))(np.ones(3))
    assert fnad.grad(lambda x: fnp.sum(x) * (not hasattr(x, "at")))(np.ones(2)).tolist() == \
        [1.0, 1.0]


def test_numpy_conversion_of_an_escaped_tracer_says_it_escaped():
    for transform in (fnad.grad, fnad.jit, fnad.vmap):
        leaked = []
        transform(lambda x: (leaked.append(x), fnp.sum(x))[1])(np.ones(3))
        with pytest.raises(fnad.UnexpectedTracerError, match=r"numpy\.asarray\(\).*escaped"):
            np.asarray(leaked[0])


def test_checkpoint_error_is_exported(tmp_path):
    assert issubclass(fnad.CheckpointError, ValueError)
    bad = tmp_path / "broken.npz"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(fnad.CheckpointError, match="broken.npz"):
        fnad.load(bad)
