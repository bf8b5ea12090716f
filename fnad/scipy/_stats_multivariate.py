"""multivariate_normal and dirichlet for fnad.scipy.stats, written with fnad.numpy.

multivariate_normal uses the Cholesky factor of a positive definite covariance (its
gradient is defined for repeated eigenvalues too, e.g. sigma^2 I); a singular covariance
is rejected unless allow_singular=True, which switches to the eigendecomposition: the
pseudo-determinant over the eigenvalues above 1e6 eps max|w| (as SciPy), the density of
the degenerate distribution on mean + range(cov), and -inf off it. Eigenvector gradients
there need distinct retained eigenvalues.
"""

import math

import numpy as np

from .. import numpy as fnp
from .. import random as frandom
from .._core.backend import array_module
from .._core.tracer import Tracer
from ..numpy._util import is_staged, refuse_staged, values_hidden
from . import special as sp
from ._stats_util import NEG_INF, Family, arr, sample_shape, std_gamma, val, where

_LOG_2PI = math.log(2 * math.pi)


def _mvn_args(mean, cov, fname):
    """(mean (d,), cov (d, d), d) as SciPy reads them: cov a scalar, a vector (diagonal)
    or a matrix; the dimension from whichever of them has one."""
    mean = None if mean is None else arr(mean)
    cov = arr(cov)
    d = None
    if mean is not None and mean.ndim:
        d = mean.shape[-1]
    elif cov.ndim:
        d = cov.shape[-1]
    d = d or 1
    xp = array_module(cov, *(() if mean is None else (mean,)))  # constants on their device
    if mean is None:
        mean = xp.zeros((d,))
    elif not mean.ndim:
        mean = fnp.broadcast_to(mean, (d,))
    if cov.ndim == 0:
        cov = cov * xp.eye(d)
    elif cov.ndim == 1:
        cov = fnp.expand_dims(cov, -1) * xp.eye(d)
    if mean.ndim != 1 or cov.shape != (d, d):
        raise ValueError(f"fnad.scipy.stats.multivariate_normal.{fname}: mean must be (d,) and "
                         f"cov (d, d) (or a scalar / diagonal), got mean {mean.shape} and cov "
                         f"{cov.shape}.")
    return mean, cov, d


def _points(x, d):
    x = arr(x)
    if d == 1 and (x.ndim == 0 or x.shape[-1] != 1):
        x = fnp.expand_dims(x, -1)
    if x.shape[-1] != d:
        raise ValueError(f"fnad.scipy.stats.multivariate_normal: x's last axis has "
                         f"{x.shape[-1]} entries but the distribution has dimension {d}.")
    return x


def _is_singular(cov, allow_singular=True):
    if is_staged(cov):  # jit: no values; Cholesky, which refuses a singular cov when run
        if allow_singular:
            refuse_staged(cov, "fnad.scipy.stats.multivariate_normal", "detect a "
                          "singular covariance (allow_singular=True)", "pass cov as a "
                          "constant (close over it) or call it outside jit, or use "
                          "allow_singular=False")
        return False
    w = np.linalg.eigvalsh(val(cov))
    return w.min() <= 1e6 * np.finfo(np.float64).eps * max(np.abs(w).max(), 1e-300)


def _singular_error(fname):
    return ValueError(f"fnad.scipy.stats.multivariate_normal.{fname}: the covariance matrix is "
                      "singular (or not positive definite); pass allow_singular=True for the "
                      "degenerate distribution on its range.")


def _psd(cov):
    """(w, v): the eigenvalues above 1e6 eps max|w| and their eigenvectors."""
    w_all = np.linalg.eigvalsh(val(cov))
    if w_all.min() < -1e6 * np.finfo(np.float64).eps * np.abs(w_all).max():
        raise ValueError("fnad.scipy.stats.multivariate_normal: the covariance matrix has "
                         "negative eigenvalues; it must be positive semi-definite.")
    w, v = fnp.linalg.eigh(cov)
    keep = np.nonzero(val(w) > 1e6 * np.finfo(np.float64).eps * np.abs(val(w)).max())[0]
    return w[keep], v[:, keep]


def _logpdf(x, mean=None, cov=1, allow_singular=False):
    mean, cov, d = _mvn_args(mean, cov, "logpdf")
    dev = _points(x, d) - mean
    if not _is_singular(cov, allow_singular):
        low = fnp.linalg.cholesky(cov)
        z = fnp.linalg.solve(low, fnp.expand_dims(dev, -1))[..., 0]
        half_logdet = fnp.sum(fnp.log(fnp.diagonal(low)))
        return -0.5 * (d * _LOG_2PI + fnp.sum(z * z, axis=-1)) - half_logdet
    if not allow_singular:
        raise _singular_error("logpdf")
    w, v = _psd(cov)
    y = fnp.matmul(dev, v / fnp.sqrt(w))
    out = -0.5 * (len(val(w)) * _LOG_2PI + fnp.sum(fnp.log(w)) + fnp.sum(y * y, axis=-1))
    dv = val(dev)
    resid = dv - (dv @ val(v)) @ val(v).T
    scale = np.maximum(np.abs(dv).max(axis=-1), np.sqrt(np.abs(np.diag(val(cov))).max()))
    on_range = np.abs(resid).max(axis=-1) <= 1e-8 * scale
    return where(on_range, out, NEG_INF)


def _entropy(mean=None, cov=1, allow_singular=False):
    mean, cov, d = _mvn_args(mean, cov, "entropy")
    if not _is_singular(cov, allow_singular):
        logdet = 2 * fnp.sum(fnp.log(fnp.diagonal(fnp.linalg.cholesky(cov))))
        return 0.5 * (d * (1 + _LOG_2PI) + logdet)
    if not allow_singular:
        raise _singular_error("entropy")
    w, _ = _psd(cov)
    return 0.5 * (len(val(w)) * (1 + _LOG_2PI) + fnp.sum(fnp.log(w)))


def _mvn_rvs(key, mean=None, cov=1, size=None):
    mean, cov, d = _mvn_args(mean, cov, "rvs")
    s = () if size is None else sample_shape(size)
    z = frandom.normal(key, s + (d,), np.float64)
    if _is_singular(cov):
        w, v = _psd(cov)
        factor = v * fnp.sqrt(w)
        z = z[..., :factor.shape[-1]]
    else:
        factor = fnp.linalg.cholesky(cov)
    return mean + fnp.matmul(z, fnp.swapaxes(factor, 0, 1))


multivariate_normal = Family(
    "multivariate_normal",
    "The multivariate normal distribution, as `scipy.stats.multivariate_normal`: "
    "logpdf/pdf(x, mean=None, cov=1, allow_singular=False) with x's last axis the components, "
    "entropy(mean, cov, allow_singular) and rvs(key, mean, cov, size=None). Differentiable in "
    "x, mean and cov.\n\nExample:\n"
    "  fnad.scipy.stats.multivariate_normal.logpdf(x, mean, cov)\n",
    logpdf=_logpdf,
    pdf=lambda x, mean=None, cov=1, allow_singular=False: fnp.exp(
        _logpdf(x, mean, cov, allow_singular)),
    entropy=_entropy, rvs=_mvn_rvs)

# ----------------------------------------------------------------------------- dirichlet


def _dirichlet_x(x, alpha, fname):
    """x with the components on axis 0 (K of them, or K - 1 completed by 1 - sum)."""
    x, alpha = arr(x), arr(alpha)
    if alpha.ndim != 1 or (not values_hidden(alpha) and not np.all(val(alpha) > 0)):
        raise ValueError(f"fnad.scipy.stats.dirichlet.{fname}: alpha must be a vector of "
                         f"positive entries, got shape {alpha.shape}.")
    k = alpha.shape[0]
    if x.shape[0] == k - 1:
        x = fnp.concatenate([x, 1 - fnp.sum(x, axis=0, keepdims=True)], axis=0)
    if x.shape[0] != k:
        raise ValueError(f"fnad.scipy.stats.dirichlet.{fname}: x must have {k} (or {k - 1}) "
                         f"components on axis 0 for alpha of length {k}, got shape {x.shape}.")
    xv = val(x)
    if values_hidden(xv):  # jit, device: the values are not read
        return x, alpha
    if np.any(xv < 0) or np.any(xv > 1) or np.any(np.abs(xv.sum(axis=0) - 1) > 1e-9):
        raise ValueError(f"fnad.scipy.stats.dirichlet.{fname}: every point of x must lie in "
                         "the simplex (entries in [0, 1] summing to 1 along axis 0).")
    return x, alpha


def _alpha_b(alpha):
    return fnp.sum(sp.gammaln(alpha)) - sp.gammaln(fnp.sum(alpha))


def _dirichlet_logpdf(x, alpha):
    x, alpha = _dirichlet_x(x, alpha, "logpdf")
    a = fnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    return fnp.sum(sp.xlogy(a - 1, x), axis=0) - _alpha_b(alpha)


def _dirichlet_entropy(alpha):
    alpha = arr(alpha)
    a0 = fnp.sum(alpha)
    k = alpha.shape[0]
    return (_alpha_b(alpha) + (a0 - k) * sp.digamma(a0)
            - fnp.sum((alpha - 1) * sp.digamma(alpha)))


def _dirichlet_rvs(key, alpha, size=None):
    if isinstance(alpha, Tracer):
        raise NotImplementedError("fnad.scipy.stats.dirichlet.rvs: sampling is not "
                                  "differentiable in `alpha`; pass it as a constant.")
    s = () if size is None else sample_shape(size)
    av = np.asarray(val(alpha), np.float64)
    g = std_gamma(key, av, s + av.shape)
    return g / g.sum(axis=-1, keepdims=True)


dirichlet = Family(
    "dirichlet",
    "The Dirichlet distribution, as `scipy.stats.dirichlet`: logpdf/pdf(x, alpha) with the "
    "components on x's axis 0, mean, var, entropy(alpha) and rvs(key, alpha, size=None) "
    "(samples with the components on the last axis, as SciPy). Differentiable in x and "
    "alpha (rvs is not).\n\nExample:\n  fnad.scipy.stats.dirichlet.logpdf(x, alpha)\n",
    logpdf=_dirichlet_logpdf,
    pdf=lambda x, alpha: fnp.exp(_dirichlet_logpdf(x, alpha)),
    mean=lambda alpha: arr(alpha) / fnp.sum(arr(alpha)),
    var=lambda alpha: (lambda a, a0: a * (a0 - a) / (a0 * a0 * (a0 + 1)))(
        arr(alpha), fnp.sum(arr(alpha))),
    entropy=_dirichlet_entropy, rvs=_dirichlet_rvs)

__all__ = ["multivariate_normal", "dirichlet"]
