"""JAX's `jax.example_libraries` for JAX programs that use them: `stax` (layers as
`(init_fun, apply_fun)` pairs) and `optimizers` (`(opt_init, opt_update, get_params)`
triples), with JAX's definitions, so the same key gives JAX's parameters.

fnad's own layers and optimizers are `fnad_nn` and `fnad_optim`; these two small modules
exist so that JAX's example programs run with their import lines changed.
"""

from . import optimizers as optimizers
from . import stax as stax
