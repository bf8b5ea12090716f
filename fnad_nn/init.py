"""Initialisers `init(key, shape, dtype=np.float32, **options)` with PyTorch's formulas; the
random numbers come from `fnad.random`."""

from ._init import zeros as zeros
from ._init import ones as ones
from ._init import constant as constant
from ._init import normal as normal
from ._init import uniform as uniform
from ._init import truncated_normal as truncated_normal
from ._init import kaiming_uniform as kaiming_uniform
from ._init import kaiming_normal as kaiming_normal
from ._init import he_uniform as he_uniform
from ._init import he_normal as he_normal
from ._init import xavier_uniform as xavier_uniform
from ._init import xavier_normal as xavier_normal
from ._init import glorot_uniform as glorot_uniform
from ._init import glorot_normal as glorot_normal
from ._init import calculate_gain as calculate_gain
from ._init import fans as fans
from ._init import torch_default_uniform as torch_default_uniform
