"""`jax.tree_util`'s name for `fnad.tree` (a JAX program's `import jax.tree_util as jtu`
becomes `import fnad.tree_util as jtu`)."""

from .tree import DictKey as DictKey
from .tree import FlattenedIndexKey as FlattenedIndexKey
from .tree import GetAttrKey as GetAttrKey
from .tree import Partial as Partial
from .tree import PyTreeDef as PyTreeDef
from .tree import SequenceKey as SequenceKey
from .tree import keystr as keystr
from .tree import register_dataclass as register_dataclass
from .tree import register_pytree_node as register_pytree_node
from .tree import register_pytree_node_class as register_pytree_node_class
from .tree import register_pytree_with_keys as register_pytree_with_keys
from .tree import tree_all as tree_all
from .tree import tree_flatten as tree_flatten
from .tree import tree_flatten_with_path as tree_flatten_with_path
from .tree import tree_leaves as tree_leaves
from .tree import tree_leaves_with_path as tree_leaves_with_path
from .tree import tree_map as tree_map
from .tree import tree_map_with_path as tree_map_with_path
from .tree import tree_reduce as tree_reduce
from .tree import tree_structure as tree_structure
from .tree import tree_transpose as tree_transpose
from .tree import tree_unflatten as tree_unflatten
from .tree import treedef_is_leaf as treedef_is_leaf
