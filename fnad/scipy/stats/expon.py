"""`import fnad.scipy.stats.expon` (JAX's module form): the family object itself."""
from .._stats_util import stand_in_for_module
from .._stats_continuous import expon
stand_in_for_module(__name__, expon)
