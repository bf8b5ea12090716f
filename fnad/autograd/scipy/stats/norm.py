"""autograd.scipy.stats.norm on fnad: `fnad.scipy.stats.norm`'s functions, else SciPy's
(untraced)."""

import fnad.scipy.stats as _fst

from ..._namespace import forwarding as _forwarding

__getattr__ = _forwarding(__name__, _fst.norm, "scipy.stats:norm", plain=("rvs",))
