"""Pytree key paths, Partial, register_dataclass's fields, jax.tree's short names and
fnad.tree_util, against jax.tree_util where installed."""

import collections
import dataclasses
import functools
import operator

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad.tree as jt
from fnad import tree_util as jtu

NT = collections.namedtuple("NT", "x y")


@dataclasses.dataclass
class DC:
    w: object
    b: object
    name: str = dataclasses.field(default="layer", metadata={"static": True})


TREES = [{"b": [1.0, (2.0, 3.0)], "a": NT(4.0, 5.0)},
         [1.0, {"z": 2.0, "y": None}, (3.0,)],
         collections.OrderedDict([("q", 1.0), ("p", [2.0])]),
         3.0]


@pytest.mark.parametrize("tree", TREES, ids=["dict", "list", "ordered", "leaf"])
def test_paths_match_jax(tree):
    jax = pytest.importorskip("jax")
    got = [(jtu.keystr(p), x) for p, x in jtu.tree_flatten_with_path(tree)[0]]
    want = [(jax.tree_util.keystr(p), x) for p, x in jax.tree_util.tree_flatten_with_path(tree)[0]]
    assert got == want
    simple = [jtu.keystr(p, simple=True, separator="/") for p, _ in jt.leaves_with_path(tree)]
    assert simple == [jax.tree_util.keystr(p, simple=True, separator="/")
                      for p, _ in jax.tree_util.tree_leaves_with_path(tree)]


def test_paths_and_keys():
    pairs, treedef = jtu.tree_flatten_with_path({"b": [1, (2, 3)], "a": NT(4, 5)})
    assert [jtu.keystr(p) for p, _ in pairs] == ["['a'].x", "['a'].y", "['b'][0]",
                                                  "['b'][1][0]", "['b'][1][1]"]
    assert pairs[2][0] == (jtu.DictKey("b"), jtu.SequenceKey(0))
    assert pairs[0][0][1] == jtu.GetAttrKey("x")
    assert treedef == jtu.tree_structure({"b": [1, (2, 3)], "a": NT(4, 5)})


def test_map_with_path():
    params = {"w": np.ones(2), "b": np.ones(2)}
    out = jtu.tree_map_with_path(lambda p, x, y: x * 0 if p[-1].key == "b" else x + y,
                                 params, params)
    np.testing.assert_array_equal(out["b"], 0)
    np.testing.assert_array_equal(out["w"], 2)
    with pytest.raises(ValueError, match="structures differ"):
        jtu.tree_map_with_path(lambda p, x, y: x, params, [1, 2])


def test_registered_with_keys_and_node_class():
    class Box:
        def __init__(self, v):
            self.v = v

    jtu.register_pytree_with_keys(Box, lambda b: ([(jtu.GetAttrKey("v"), b.v)], None),
                                  lambda _, c: Box(*c))
    assert [jtu.keystr(p) for p, _ in jtu.tree_leaves_with_path([Box(1.0)])] == ["[0].v"]
    assert jtu.tree_map(lambda x: 2 * x, Box(3.0)).v == 6.0

    @jtu.register_pytree_node_class
    class Pt:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten(self):
            return (self.x, self.y), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    assert jtu.tree_leaves(Pt(1, 2)) == [1, 2]
    assert [jtu.keystr(p) for p, _ in jtu.tree_leaves_with_path(Pt(1, 2))] == [
        "[<flat index 0>]", "[<flat index 1>]"]


def test_dataclass_static_fields_and_explicit_fields():
    leaves, treedef = jtu.tree_flatten(DC(1.0, 2.0, "enc"))
    assert leaves == [1.0, 2.0]
    assert jtu.tree_unflatten(treedef, [3.0, 4.0]) == DC(3.0, 4.0, "enc")
    assert treedef != jtu.tree_structure(DC(1.0, 2.0, "dec"))
    assert [jtu.keystr(p) for p, _ in jtu.tree_leaves_with_path(DC(1, 2))] == [".w", ".b"]

    @functools.partial(jtu.register_dataclass, data_fields=["a"], meta_fields=["n"])
    @dataclasses.dataclass
    class E:
        a: object
        n: int

    assert jtu.tree_leaves(E(1.0, 3)) == [1.0]
    assert jtu.tree_map(lambda x: x + 1, E(1.0, 3)) == E(2.0, 3)
    with pytest.raises(TypeError, match="both data_fields and meta_fields"):
        jtu.register_dataclass(E, data_fields=["a"])


def test_partial_is_a_pytree_under_transforms():
    f = jtu.Partial(fnp.multiply, 2.0)
    assert jt.leaves(f) == [2.0]
    assert fnad.jit(lambda g, x: g(x))(f, 3.0) == 6.0
    g = fnad.grad(lambda p: p(3.0))(f)
    assert isinstance(g, jtu.Partial) and g.args == (3.0,)
    nested = jtu.Partial(functools.partial(fnp.add, 1.0))
    assert nested.func is fnp.add and nested(2.0) == 3.0
    out = fnad.vmap(lambda p, x: p(x), in_axes=(None, 0))(f, np.arange(3.0))
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])


def test_reduce_transpose_and_short_names():
    assert jt.reduce(operator.add, {"a": 1, "b": [2, 3]}) == 6
    assert jt.reduce(operator.add, [], 0) == 0
    assert jt.reduce(lambda a, b: (a or 0) + b, [1, 2], None) == 3  # None is an initializer
    assert jt.transpose(jt.structure([0, 0]), None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert jt.transpose(jt.structure([0, 0]), jt.structure((0, 0)),
                        [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert jt.map(lambda x: x + 1, [1, (2,)]) == [2, (3,)]
    leaves, treedef = jt.flatten({"a": 1})
    assert jt.unflatten(treedef, leaves) == {"a": 1} and jt.all([True, 1])
    assert treedef.flatten_up_to({"a": [1, 2]}) == [[1, 2]]
    assert fnad.tree_util.tree_map is jt.map
