"""`import fnad.scipy.stats.beta` (JAX's module form): the family object itself."""
from .._stats_util import stand_in_for_module
from .._stats_continuous import beta
stand_in_for_module(__name__, beta)
