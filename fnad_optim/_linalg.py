"""optax's non-negative least squares (`nnls`) and its diagonal normal distribution
(`multi_normal`), written with fnad.numpy."""

import math

import fnad.lax as flax
import fnad.numpy as fnp
import fnad.random as frandom

__all__ = ["nnls", "multi_normal", "MultiNormalDiagFromLogScale"]


def nnls(A, b, iters, unroll=1, L=None):
    """Non-negative least squares, `argmin_{x >= 0} ||A x - b||`, by `iters` steps of
    accelerated projected gradient descent (FISTA) with step `1 / L` (default: a bound on
    the spectral radius of `A^T A`, the smaller of its Frobenius and 1-norms).

    Args:
      A: a (m, n) matrix.
      b: a (m,) vector or (m, k) matrix of right-hand sides.
      unroll: accepted for optax's signature (the loop is not unrolled).

    Returns:
      x, of shape (n,) or (n, k).

    Example:
      x = nnls(A, b, iters=500)
    """
    A, b = fnp.asarray(A), fnp.asarray(b)
    if A.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != A.shape[0]:
        raise ValueError(f"nnls: A must be (m, n) and b (m,) or (m, k) with the same m, got "
                         f"{A.shape} and {b.shape}.")
    Q, q = A.T @ A, A.T @ b
    if L is None:
        fro = fnp.sqrt(fnp.sum(Q * Q))
        one = fnp.max(fnp.sum(fnp.abs(Q), axis=0)) if Q.size else 0.0
        L = fnp.minimum(fro, one)
    L = fnp.where(L == 0, 1.0, L)

    def body(i, carry):
        x, p, c = carry
        cn = (1 + fnp.sqrt(1 + 4 * c ** 2)) / 2
        s = (c - 1) / cn
        xn = fnp.clip(p - (Q @ p - q) / L, 0, None)
        return xn, xn + s * (xn - x), cn

    x = fnp.zeros_like(b, shape=A.shape[-1:] + b.shape[1:])
    x, _, _ = flax.fori_loop(0, iters, body, (x, x, fnp.asarray(0.0)))
    return x


class MultiNormalDiagFromLogScale:
    """A normal distribution with independent coordinates, mean `loc` and standard
    deviation `exp(log_scale)`: `sample(shape, key)` (with fnad.random) and `log_prob(x)`
    (summed over the parameter's axes)."""

    def __init__(self, loc, log_scale):
        self._log_scale = fnp.asarray(log_scale)
        self._scale = fnp.exp(self._log_scale)
        self._mean = fnp.asarray(loc)
        self._param_shape = fnp.broadcast_shapes(fnp.shape(self._mean), fnp.shape(self._scale))

    def sample(self, shape, key):
        """Draws of shape `shape + param_shape`."""
        z = frandom.normal(key, tuple(shape) + self._param_shape,
                           dtype=fnp.result_type(self._mean))
        return z * self._scale + self._mean

    def log_prob(self, x):
        """The log density of `x`, summed over the parameter's axes."""
        z = (fnp.asarray(x) - self._mean) / self._scale
        lp = -0.5 * z * z - fnp.log(self._scale) - 0.5 * math.log(2 * math.pi)
        return fnp.sum(lp, axis=tuple(-(i + 1) for i in range(len(self._param_shape))))

    @property
    def log_scale(self):
        """The log standard deviations."""
        return self._log_scale

    @property
    def params(self):
        """`[loc, log_scale]`."""
        return [self._mean, self._log_scale]


def multi_normal(loc, log_scale):
    """The diagonal normal distribution with mean `loc` and log standard deviations
    `log_scale` (for perturbation methods).

    Example:
      dist = multi_normal(np.zeros(3), np.zeros(3))
      x = dist.sample((10,), fnad.random.PRNGKey(0))
    """
    return MultiNormalDiagFromLogScale(loc, log_scale)
