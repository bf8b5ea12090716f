"""autograd.numpy.fft on fnad: `fnad.numpy.fft`, else NumPy's (untraced)."""

import numpy as _onp

import fnad.numpy.fft as _ffft

from .._namespace import forwarding as _forwarding

__getattr__ = _forwarding(__name__, _ffft, _onp.fft)
