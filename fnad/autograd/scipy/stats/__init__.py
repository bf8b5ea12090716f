"""autograd.scipy.stats on fnad: one module per distribution autograd has (norm, t, beta,
chi2, gamma, poisson, multivariate_normal, dirichlet), each forwarding to fnad.scipy.stats;
other distributions come from fnad.scipy.stats too."""

import fnad.scipy.stats as _fst

from ..._namespace import forwarding as _forwarding
from . import beta as beta
from . import chi2 as chi2
from . import dirichlet as dirichlet
from . import gamma as gamma
from . import multivariate_normal as multivariate_normal
from . import norm as norm
from . import poisson as poisson
from . import t as t

__getattr__ = _forwarding(__name__, _fst)
