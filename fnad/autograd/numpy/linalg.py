"""autograd.numpy.linalg on fnad: `fnad.numpy.linalg`, else NumPy's (untraced)."""

import numpy as _onp

import fnad.numpy as _fnp
import fnad.numpy.linalg as _fla

from .._namespace import forwarding as _forwarding

__getattr__ = _forwarding(__name__, _fla, _onp.linalg)


def T(x):
    """`x` with its last two axes swapped (autograd.numpy.linalg's helper)."""
    return _fnp.swapaxes(x, -1, -2)


def _dot(a, b):
    """Stacked matrix products (autograd.numpy.linalg's helper, used by its tests)."""
    return _fnp.matmul(a, b)
