"""autograd.scipy on fnad: special, stats, signal, linalg, integrate, misc."""

from . import integrate as integrate
from . import linalg as linalg
from . import misc as misc
from . import signal as signal
from . import special as special
from . import stats as stats
