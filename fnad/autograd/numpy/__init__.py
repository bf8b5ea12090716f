"""autograd.numpy on fnad: `import fnad.autograd.numpy as np`.

Every name comes from `fnad.numpy` (differentiable), else from NumPy itself with the
arguments untraced (no gradient, as autograd's non-differentiable wrappers). `np.random` is
NumPy's global generator (`numpy.random`), as in autograd: seed it with `np.random.seed`;
for fnad's explicit keys use `fnad.random`.
"""

import numpy as _onp

import fnad.numpy as _fnp

from .._namespace import forwarding as _forwarding
from ._extra import make_diagonal as make_diagonal
from ._extra import where as where
from . import fft as fft
from . import linalg as linalg
from . import random as random

__version__ = _onp.__version__  # NumPy's, as autograd.numpy's
__getattr__ = _forwarding(__name__, _fnp, _onp)


def __dir__():
    return sorted(set(dir(_fnp)) | set(dir(_onp)))
