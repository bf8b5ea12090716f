"""autograd.scipy.stats.t on fnad: `fnad.scipy.stats.t`'s functions, else SciPy's
(untraced)."""

import fnad.scipy.stats as _fst

from ..._namespace import forwarding as _forwarding

__getattr__ = _forwarding(__name__, _fst.t, "scipy.stats:t", plain=("rvs",))
