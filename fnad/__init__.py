"""fnad: functional automatic differentiation over plain NumPy and CuPy arrays.

This module only re-exports. The code lives in private wings that stack with no import
circle (docs/design.md): `_core` (tracers, pytrees, abstract values, backend, rules),
`_ad` (reverse and forward mode, custom_vjp, checkpoint, jacobians), `_batching` (vmap),
`_io` (checkpoint files), `_graph` (the program representation), `_jit` (staging,
optimisation, compilation), and the public packages `lax`, `numpy`, `random`, `scipy`,
`kernels`, `distributed`, `export`.
"""

from ._ad.custom import checkpoint as checkpoint
from ._ad.custom import remat as remat
from ._ad.custom import custom_jvp as custom_jvp
from ._ad.custom import custom_vjp as custom_vjp
from ._ad.jacobians import hessian as hessian
from ._ad.jacobians import jacfwd as jacfwd
from ._ad.jacobians import jacobian as jacobian
from ._ad.jacobians import jacrev as jacrev
from ._ad.linear import linear_transpose as linear_transpose
from ._ad.transforms import grad as grad
from ._ad.transforms import jvp as jvp
from ._ad.transforms import stop_gradient as stop_gradient
from ._ad.transforms import value_and_grad as value_and_grad
from ._ad.transforms import vjp as vjp
from ._batching.vmap import vmap as vmap
from ._core.backend import diagnose_impl_error as _diagnose_impl_error
from ._core.abstract import ShapeDtypeStruct as ShapeDtypeStruct
from ._core.devices import block_until_ready as block_until_ready
from ._core.devices import device_put as device_put
from ._core.devices import devices as devices
from ._core.devices import to_numpy as to_numpy
from ._core.backend import Array as Array
from ._core.dlpack import from_dlpack as from_dlpack
from ._core.dlpack import to_dlpack as to_dlpack
from ._core.heap import keep_freed_memory as _keep_freed_memory
from ._core.tracer import UnexpectedTracerError as UnexpectedTracerError
from ._core.tracer import register_array_methods as _register_array_methods
from ._core.tracer import set_array_like_hook as _set_array_like_hook
from ._core.tracer import set_impl_error_hook as _set_impl_error_hook
from ._core.tree import register_pytree_node as register_pytree_node
from ._core.tree import tree_flatten as tree_flatten
from ._core.tree import tree_leaves as tree_leaves
from ._core.tree import tree_map as tree_map
from ._core.tree import tree_structure as tree_structure
from ._core.tree import tree_unflatten as tree_unflatten
from ._io.checkpoint import load as load
from ._io.format import CheckpointError as CheckpointError
from ._io.checkpoint import save as save
from ._jit.api import eval_shape as eval_shape
from ._jit.api import linearize as linearize
from ._jit.debug import config as config
from ._jit.api import make_jaxpr as make_jaxpr
from ._jit.jit import clear_caches as clear_caches
from ._jit.jit import jit as jit
from ._jit.scopes import named_scope as named_scope
from ._jit.staging import ConcretizationError as ConcretizationError
from ._jit.staging import make_graph as make_graph
from . import ad_checkpoint as ad_checkpoint
from . import checkpoint_policies as checkpoint_policies
from . import debug as debug
from . import distributed as distributed
from . import export as export
from . import extend as extend
from . import kernels as kernels
from . import lax as lax
from . import numpy as numpy
from . import random as random
from . import test_util as test_util
from . import tree as tree
from . import tree_util as tree_util
from .numpy._methods import ArrayTracerMethods as _ArrayTracerMethods

# The three explicit hooks of the layers below: tracers get fnad.numpy's array methods and
# operators, a list of traced values passed to a primitive becomes one array (as NumPy takes
# any array_like), and a failing implementation gets the backend's clearer device errors.
_register_array_methods(_ArrayTracerMethods)
_set_array_like_hook(numpy.asarray)
_set_impl_error_hook(_diagnose_impl_error)
_keep_freed_memory()  # only with FNAD_MALLOC=keep (an opt-in; fnad/_core/heap.py)

__version__ = "0.1.0"
