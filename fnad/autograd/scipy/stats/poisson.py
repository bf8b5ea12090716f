"""autograd.scipy.stats.poisson on fnad: `fnad.scipy.stats.poisson`'s functions, else SciPy's
(untraced)."""

import fnad.scipy.stats as _fst

from ..._namespace import forwarding as _forwarding

__getattr__ = _forwarding(__name__, _fst.poisson, "scipy.stats:poisson", plain=("rvs",))
