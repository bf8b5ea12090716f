"""autograd.scipy.special on fnad: `fnad.scipy.special`, else SciPy's (untraced)."""

import fnad.scipy.special as _fsp

from .._namespace import forwarding as _forwarding

__getattr__ = _forwarding(__name__, _fsp, "scipy.special")
