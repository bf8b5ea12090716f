"""autograd.scipy.stats.dirichlet on fnad: `fnad.scipy.stats.dirichlet`'s functions, else SciPy's
(untraced)."""

import fnad.scipy.stats as _fst

from ..._namespace import forwarding as _forwarding

__getattr__ = _forwarding(__name__, _fst.dirichlet, "scipy.stats:dirichlet", plain=("rvs",))
