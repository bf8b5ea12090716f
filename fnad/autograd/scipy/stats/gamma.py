"""autograd.scipy.stats.gamma on fnad: `fnad.scipy.stats.gamma`'s functions, else SciPy's
(untraced)."""

import fnad.scipy.stats as _fst

from ..._namespace import forwarding as _forwarding

__getattr__ = _forwarding(__name__, _fst.gamma, "scipy.stats:gamma", plain=("rvs",))
