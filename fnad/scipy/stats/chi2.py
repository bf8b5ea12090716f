"""`import fnad.scipy.stats.chi2` (JAX's module form): the family object itself."""
from .._stats_util import stand_in_for_module
from .._stats_continuous import chi2
stand_in_for_module(__name__, chi2)
