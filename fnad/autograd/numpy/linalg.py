"""autograd.numpy.linalg on fnad: `fnad.numpy.linalg`, else NumPy's (untraced)."""

import numpy as _onp

import fnad.numpy.linalg as _fla

from .._namespace import forwarding as _forwarding

__getattr__ = _forwarding(__name__, _fla, _onp.linalg)
