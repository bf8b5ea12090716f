"""Pytrees: registration, flatten/unflatten round trips, tree_map, mismatch messages."""

import collections
import dataclasses

import numpy as np
import pytest

import fnad
from fnad import tree


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


fnad.register_pytree_node(Pair, lambda p: ((p.a, p.b), "pair"), lambda aux, c: Pair(*c))


@dataclasses.dataclass
class Layer:
    w: object
    b: object


NT = collections.namedtuple("NT", "x y")

TREES = [
    1.0,
    None,
    [],
    (1,),
    {"b": 1, "a": [2, (3, None)]},
    NT(1, {"z": 2}),
    Pair(np.ones(2), [3.0]),
    Layer(np.zeros(1), 2.0),
    collections.OrderedDict([("z", 1), ("a", 2)]),
]


@pytest.mark.parametrize("t", TREES, ids=lambda t: type(t).__name__)
def test_round_trip(t):
    leaves, treedef = fnad.tree_flatten(t)
    rebuilt = fnad.tree_unflatten(treedef, leaves)
    assert fnad.tree_structure(rebuilt) == treedef
    assert type(rebuilt) is type(t)
    assert len(leaves) == treedef.num_leaves


def test_dict_leaves_in_sorted_key_order_and_none_is_empty():
    assert fnad.tree_leaves({"b": 2, "a": 1, "c": None}) == [1, 2]


def test_tree_map_multiple_trees_and_is_leaf():
    a = {"x": [1, 2], "y": 3}
    b = {"x": [10, 20], "y": 30}
    assert fnad.tree_map(lambda u, v: u + v, a, b) == {"x": [11, 22], "y": 33}
    got = fnad.tree_map(lambda loc: len(loc) if isinstance(loc, list) else -loc, a,
                        is_leaf=lambda n: isinstance(n, list))
    assert got == {"x": 2, "y": -3}


def test_tree_map_mismatch_prints_both_structures():
    with pytest.raises(ValueError) as e:
        fnad.tree_map(lambda u, v: u, {"x": 1, "y": 2}, {"x": 1, "z": 2})
    msg = str(e.value)
    assert "'y'" in msg and "'z'" in msg


def test_unflatten_wrong_leaf_count():
    _, treedef = fnad.tree_flatten([1, 2])
    with pytest.raises(ValueError, match="needs 2 leaves"):
        fnad.tree_unflatten(treedef, [1])


def test_treedef_repr_is_readable():
    r = repr(fnad.tree_structure({"w": 1, "b": (2, None)}))
    assert r == "PyTreeDef({'b': (*, None), 'w': *})"


def test_public_tree_module():
    assert tree.tree_map is fnad.tree_map
    assert tree.tree_all([True, (1,)])
    assert tree.tree_reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    outer = fnad.tree_structure([0, 0])
    inner = fnad.tree_structure((0, 0))
    assert tree.tree_transpose(outer, inner, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
