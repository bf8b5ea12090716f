"""Pytree utilities (JAX's `jax.tree_util` long names and `jax.tree` short names; the long
ones are also at the top of `fnad`, and `fnad.tree_util` is this module for JAX programs).

Example:
  fnad.tree.map(lambda x: 2 * x, {"w": w, "b": b})
  fnad.tree.leaves_with_path(params)      # [(path, leaf), ...]; keystr(path) -> "['w']"
"""

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
from ._core.tree_path import DictKey as DictKey
from ._core.tree_path import FlattenedIndexKey as FlattenedIndexKey
from ._core.tree_path import GetAttrKey as GetAttrKey
from ._core.tree_path import Partial as Partial
from ._core.tree_path import SequenceKey as SequenceKey
from ._core.tree_path import keystr as keystr
from ._core.tree_path import register_pytree_node_class as register_pytree_node_class
from ._core.tree_path import register_pytree_with_keys as register_pytree_with_keys
from ._core.tree_path import tree_flatten_with_path as tree_flatten_with_path
from ._core.tree_path import tree_leaves_with_path as tree_leaves_with_path
from ._core.tree_path import tree_map_with_path as tree_map_with_path

# jax.tree's short names (re-exports under a second name)
from ._core.tree import tree_all as all  # noqa: F401 (a short name)
from ._core.tree import tree_flatten as flatten  # noqa: F401 (a short name)
from ._core.tree import tree_leaves as leaves  # noqa: F401 (a short name)
from ._core.tree import tree_map as map  # noqa: F401 (a short name)
from ._core.tree import tree_reduce as reduce  # noqa: F401 (a short name)
from ._core.tree import tree_structure as structure  # noqa: F401 (a short name)
from ._core.tree import tree_transpose as transpose  # noqa: F401 (a short name)
from ._core.tree import tree_unflatten as unflatten  # noqa: F401 (a short name)
from ._core.tree_path import tree_flatten_with_path as flatten_with_path  # noqa: F401 (a short name)
from ._core.tree_path import tree_leaves_with_path as leaves_with_path  # noqa: F401 (a short name)
from ._core.tree_path import tree_map_with_path as map_with_path  # noqa: F401 (a short name)
