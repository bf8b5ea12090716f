"""fnad.numpy.fft: differentiable discrete Fourier transforms with numpy.fft's names,
signatures (`n`, `axis`/`axes`, `s`, `norm`) and results; CuPy arrays go through cupy.fft."""

from ._fft import fft as fft
from ._fft import fft2 as fft2
from ._fft import fftfreq as fftfreq
from ._fft import fftn as fftn
from ._fft import fftshift as fftshift
from ._fft import ifft as ifft
from ._fft import ifft2 as ifft2
from ._fft import ifftn as ifftn
from ._fft import ifftshift as ifftshift
from ._fft import irfft as irfft
from ._fft import irfft2 as irfft2
from ._fft import irfftn as irfftn
from ._fft import rfft as rfft
from ._fft import rfft2 as rfft2
from ._fft import rfftfreq as rfftfreq
from ._fft import rfftn as rfftn

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq"]
