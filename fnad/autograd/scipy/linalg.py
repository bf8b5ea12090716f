"""autograd.scipy.linalg on fnad: `fnad.scipy.linalg`, else SciPy's (untraced)."""

import fnad.scipy.linalg as _fla

from .._namespace import forwarding as _forwarding

__getattr__ = _forwarding(__name__, _fla, "scipy.linalg")
