"""autograd.scipy.stats.chi2 on fnad: `fnad.scipy.stats.chi2`'s functions, else SciPy's
(untraced)."""

import fnad.scipy.stats as _fst

from ..._namespace import forwarding as _forwarding

__getattr__ = _forwarding(__name__, _fst.chi2, "scipy.stats:chi2", plain=("rvs",))
