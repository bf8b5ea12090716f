"""`import fnad.scipy.stats.cauchy` (JAX's module form): the family object itself."""
from .._stats_util import stand_in_for_module
from .._stats_continuous import cauchy
stand_in_for_module(__name__, cauchy)
