"""fnad.scipy: differentiable pieces of SciPy."""

from . import special as special
