"""autograd.scipy.stats.beta on fnad: `fnad.scipy.stats.beta`'s functions, else SciPy's
(untraced)."""

import fnad.scipy.stats as _fst

from ..._namespace import forwarding as _forwarding

__getattr__ = _forwarding(__name__, _fst.beta, "scipy.stats:beta", plain=("rvs",))
