"""fnad.scipy: differentiable pieces of SciPy."""

from . import integrate as integrate
from . import linalg as linalg
from . import signal as signal
from . import special as special
from . import stats as stats
from . import _batch_rules as _batch_rules  # registers vmap rules
