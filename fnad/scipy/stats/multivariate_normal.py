"""`import fnad.scipy.stats.multivariate_normal` (JAX's module form): the family object itself."""
from .._stats_util import stand_in_for_module
from .._stats_multivariate import multivariate_normal
stand_in_for_module(__name__, multivariate_normal)
