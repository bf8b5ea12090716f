"""autograd's API on fnad's engine: replace `autograd` with `fnad.autograd` in the import
lines and an autograd program runs on fnad (docs/migrating-from-autograd.md).

  import fnad.autograd.numpy as np
  from fnad.autograd import grad, elementwise_grad

Each name is a thin mapping onto fnad's transforms (fnad.vjp, fnad.jvp, fnad.jacrev,
fnad.checkpoint) and fnad.numpy / fnad.scipy; autograd's conventions are kept where a user
can tell (`argnum=`, grad of a size-1 output, dict key order, the complex convention, which
is JAX's and fnad's too). Submodules: numpy (with random, linalg, fft), scipy, builtins,
extend, misc, test_util, core, tracer, util, wrap_util.
"""

from .builtins import dict as dict
from .builtins import isinstance as isinstance
from .builtins import list as list
from .builtins import tuple as tuple
from .builtins import type as type
from .core import primitive as primitive
from .differential_operators import checkpoint as checkpoint
from .differential_operators import deriv as deriv
from .differential_operators import elementwise_grad as elementwise_grad
from .differential_operators import grad as grad
from .differential_operators import grad_and_aux as grad_and_aux
from .differential_operators import grad_named as grad_named
from .differential_operators import hessian as hessian
from .differential_operators import hessian_tensor_product as hessian_tensor_product
from .differential_operators import hessian_vector_product as hessian_vector_product
from .differential_operators import holomorphic_grad as holomorphic_grad
from .differential_operators import jacobian as jacobian
from .differential_operators import make_ggnvp as make_ggnvp
from .differential_operators import make_hvp as make_hvp
from .differential_operators import make_jvp as make_jvp
from .differential_operators import make_vjp as make_vjp
from .differential_operators import multigrad_dict as multigrad_dict
from .differential_operators import tensor_jacobian_product as tensor_jacobian_product
from .differential_operators import value_and_grad as value_and_grad
from .differential_operators import vector_jacobian_product as vector_jacobian_product
from . import numpy as numpy
