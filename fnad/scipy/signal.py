"""fnad.scipy.signal: differentiable n-d convolve and correlate with `scipy.signal`'s names
(direct method, modes 'full', 'same' and 'valid')."""

from ._signal import convolve as convolve, correlate as correlate

__all__ = ["convolve", "correlate"]
