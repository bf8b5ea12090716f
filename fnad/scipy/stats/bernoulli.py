"""`import fnad.scipy.stats.bernoulli` (JAX's module form): the family object itself."""
from .._stats_util import stand_in_for_module
from .._stats_discrete import bernoulli
stand_in_for_module(__name__, bernoulli)
