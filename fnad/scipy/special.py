"""fnad.scipy.special: differentiable special functions with `scipy.special`'s names.

SciPy is not needed at run time: NumPy arrays use fnad's own kernels (accurate to about
1e-15 in float64), CuPy arrays `cupyx.scipy.special`. erf, erfc, erfcx, ndtr, log_ndtr, wofz,
softmax, log_softmax, logsumexp, xlogy and xlog1py also take complex input (the error
functions through the Faddeeva function, on either backend); the others raise TypeError on
complex input rather than drop its imaginary part.
"""

from ._special import (
    digamma as digamma,
    erf as erf,
    erfc as erfc,
    erfinv as erfinv,
    expit as expit,
    gammaln as gammaln,
    log_softmax as log_softmax,
    logit as logit,
    logsumexp as logsumexp,
    polygamma as polygamma,
    psi as psi,
    wofz as wofz,
    softmax as softmax,
    xlog1py as xlog1py,
    xlogy as xlogy,
)
from ._bessel import (
    i0 as i0,
    i0e as i0e,
    i1 as i1,
    i1e as i1e,
    iv as iv,
    ive as ive,
    j0 as j0,
    j1 as j1,
    jn as jn,
    y0 as y0,
    y1 as y1,
    yn as yn,
)
from ._special_extra import (
    beta as beta,
    betainc as betainc,
    betaincinv as betaincinv,
    betaln as betaln,
    erfcinv as erfcinv,
    erfcx as erfcx,
    gamma as gamma,
    gammasgn as gammasgn,
    gammainc as gammainc,
    gammaincc as gammaincc,
    gammaincinv as gammaincinv,
    log_ndtr as log_ndtr,
    multigammaln as multigammaln,
    ndtr as ndtr,
    ndtri as ndtri,
    rgamma as rgamma,
)

__all__ = ["digamma", "erf", "erfc", "erfinv", "expit", "gammaln", "log_softmax", "logit",
           "logsumexp", "polygamma", "psi", "softmax", "wofz", "xlog1py", "xlogy",
           "beta", "betainc", "betaln", "erfcinv", "erfcx", "gamma", "gammainc", "gammaincc",
           "gammasgn",
           "log_ndtr", "multigammaln", "ndtr", "ndtri", "rgamma",
           "betaincinv", "gammaincinv", "i0", "i0e", "i1", "i1e", "iv", "ive", "j0", "j1",
           "jn", "y0", "y1", "yn"]
