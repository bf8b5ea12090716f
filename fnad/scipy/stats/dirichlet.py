"""`import fnad.scipy.stats.dirichlet` (JAX's module form): the family object itself."""
from .._stats_util import stand_in_for_module
from .._stats_multivariate import dirichlet
stand_in_for_module(__name__, dirichlet)
