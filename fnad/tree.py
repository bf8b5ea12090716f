"""Pytree utilities (also re-exported at the top of `fnad`)."""

from ._core.tree import PyTreeDef as PyTreeDef
from ._core.tree import register_dataclass as register_dataclass
from ._core.tree import register_pytree_node as register_pytree_node
from ._core.tree import tree_all as tree_all
from ._core.tree import tree_flatten as tree_flatten
from ._core.tree import tree_leaves as tree_leaves
from ._core.tree import tree_map as tree_map
from ._core.tree import tree_reduce as tree_reduce
from ._core.tree import tree_structure as tree_structure
from ._core.tree import tree_transpose as tree_transpose
from ._core.tree import tree_unflatten as tree_unflatten
from ._core.tree import treedef_is_leaf as treedef_is_leaf
