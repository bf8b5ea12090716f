"""JAX's `jax.nn.initializers`: factories such as `glorot_normal()` returning
`init(key, shape, dtype=np.float32)`, with JAX's definitions (`zeros` and `ones` are
initializers themselves). PyTorch-style initialisers are in `fnad_nn.init`."""

from ._initializers import zeros as zeros
from ._initializers import ones as ones
from ._initializers import constant as constant
from ._initializers import normal as normal
from ._initializers import uniform as uniform
from ._initializers import truncated_normal as truncated_normal
from ._initializers import variance_scaling as variance_scaling
from ._initializers import glorot_uniform as glorot_uniform
from ._initializers import glorot_normal as glorot_normal
from ._initializers import xavier_uniform as xavier_uniform
from ._initializers import xavier_normal as xavier_normal
from ._initializers import lecun_uniform as lecun_uniform
from ._initializers import lecun_normal as lecun_normal
from ._initializers import he_uniform as he_uniform
from ._initializers import he_normal as he_normal
from ._initializers import kaiming_uniform as kaiming_uniform
from ._initializers import kaiming_normal as kaiming_normal
from ._initializers import orthogonal as orthogonal
