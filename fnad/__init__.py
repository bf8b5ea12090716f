"""fnad: functional automatic differentiation over plain NumPy and CuPy arrays."""

from ._ad.transforms import checkpoint as checkpoint
from ._ad.transforms import custom_vjp as custom_vjp
from ._ad.transforms import grad as grad
from ._ad.transforms import jvp as jvp
from ._ad.transforms import stop_gradient as stop_gradient
from ._ad.transforms import value_and_grad as value_and_grad
from ._ad.transforms import vjp as vjp
from ._core.tracer import UnexpectedTracerError as UnexpectedTracerError
from ._core.tree import register_pytree_node as register_pytree_node
from ._core.tree import tree_flatten as tree_flatten
from ._core.tree import tree_leaves as tree_leaves
from ._core.tree import tree_map as tree_map
from ._core.tree import tree_structure as tree_structure
from ._core.tree import tree_unflatten as tree_unflatten
from . import numpy as numpy  # noqa: E402
from ._core.backend import diagnose_impl_error as _diagnose_impl_error  # noqa: E402
from ._core.tracer import register_array_methods as _register_array_methods  # noqa: E402
from ._core.tracer import set_impl_error_hook as _set_impl_error_hook  # noqa: E402
from .numpy._methods import ArrayTracerMethods as _ArrayTracerMethods  # noqa: E402

# The two explicit hooks of the layers below: tracers get fnad.numpy's array methods and
# operators, and a failing implementation gets the backend's clearer device errors.
_register_array_methods(_ArrayTracerMethods)
_set_impl_error_hook(_diagnose_impl_error)
from ._batching.trace import vmap as vmap  # noqa: E402
from ._ad.jacobians import hessian as hessian  # noqa: E402
from ._ad.jacobians import jacfwd as jacfwd  # noqa: E402
from ._ad.jacobians import jacrev as jacrev  # noqa: E402
from . import tree as tree  # noqa: E402
from . import extend as extend  # noqa: E402
from . import test_util as test_util  # noqa: E402
from ._io.checkpoint import load as load  # noqa: E402
from ._io.checkpoint import save as save  # noqa: E402
from ._core.devices import device_put as device_put  # noqa: E402
from ._core.devices import devices as devices  # noqa: E402
from ._core.devices import to_numpy as to_numpy  # noqa: E402
from . import random as random  # noqa: E402
from . import kernels as kernels  # noqa: E402
from ._jit.jit import jit as jit  # noqa: E402
from . import lax as lax  # noqa: E402
from ._jit.staging import ConcretizationError as ConcretizationError  # noqa: E402
from ._jit.staging import make_graph as make_graph  # noqa: E402
from ._jit.staging import named_scope as named_scope  # noqa: E402

__version__ = "0.1.0"
