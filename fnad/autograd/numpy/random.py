"""autograd.numpy.random: NumPy's global generator (`numpy.random`), exactly as autograd's.

It is process-wide state, seeded with `seed`; the draws are plain arrays with no gradient.
fnad's own randomness (`fnad.random`) takes explicit keys and works under jit and vmap.
"""

import numpy as _onp

from .._namespace import forwarding as _forwarding

__getattr__ = _forwarding(__name__, _onp.random)
