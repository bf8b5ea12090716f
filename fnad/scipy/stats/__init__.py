"""fnad.scipy.stats: differentiable probability distributions with `scipy.stats`'s names.

Each family is an object with scipy's methods (`norm.logpdf(x, loc, scale)`, ...), written
with fnad.numpy and fnad.scipy.special so they are differentiable in the data and the
parameters and broadcast together; `rvs(key, ...)` samples with a fnad.random key.
Not differentiable: the shape parameters of the t and beta cdf/sf/ppf and binom's n in
cdf/sf (the incomplete beta function has no shape derivative here; asking raises
NotImplementedError), second derivatives in the gamma/chi2 shape parameter of cdf/sf/ppf,
and sampling in the shape parameters of gamma-based families.

`import fnad.scipy.stats.norm as norm` (JAX's `jax.scipy.stats.norm` module form) gives the
same family object: each family's module puts the object in its place.
"""

from .._stats_continuous import (
    beta as beta,
    cauchy as cauchy,
    chi2 as chi2,
    expon as expon,
    gamma as gamma,
    laplace as laplace,
    logistic as logistic,
    norm as norm,
    t as t,
    uniform as uniform,
)
from .._stats_discrete import bernoulli as bernoulli, binom as binom, poisson as poisson
from .._stats_multivariate import dirichlet as dirichlet, multivariate_normal as multivariate_normal

__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
           "laplace", "logistic", "multivariate_normal", "norm", "poisson", "t", "uniform"]
