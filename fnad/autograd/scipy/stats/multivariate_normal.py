"""autograd.scipy.stats.multivariate_normal on fnad: fnad.scipy.stats's functions, else
SciPy's (untraced)."""

import fnad.scipy.stats as _fst

from ..._namespace import forwarding as _forwarding

__getattr__ = _forwarding(__name__, _fst.multivariate_normal, "scipy.stats:multivariate_normal",
                          plain=("rvs",))
