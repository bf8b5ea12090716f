"""autograd.misc on fnad: flatten, flatten_func, const_graph; submodules fixed_points and
optimizers."""

from .flatten import flatten as flatten
from .flatten import flatten_func as flatten_func
from .tracers import const_graph as const_graph
from . import fixed_points as fixed_points
from . import optimizers as optimizers
