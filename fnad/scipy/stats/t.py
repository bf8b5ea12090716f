"""`import fnad.scipy.stats.t` (JAX's module form): the family object itself."""
from .._stats_util import stand_in_for_module
from .._stats_continuous import t
stand_in_for_module(__name__, t)
