"""fnad.random: explicit, splittable PRNG keys with JAX's semantics (threefry2x32).

The same key gives the same numbers, on CPU and GPU alike (bit for bit); derive new
keys with `split` or `fold_in` instead of reusing one. The numbers are JAX's for the same
key (with `jax_threefry_partitionable=False`), `randint` excepted. Draws are float32 unless
`dtype=` says otherwise, as in JAX, while `fnad.numpy` makes float64 as NumPy does: vjp and
jvp take a cotangent or tangent of the other float precision in the primal's dtype
(docs/coming-from-jax.md). Besides uniform/normal/bernoulli/categorical/randint/permutation:
gamma (differentiable in its shape, by implicit reparameterisation), loggamma, beta,
dirichlet, t, chisquare, f, exponential, laplace, logistic, cauchy, poisson, choice,
multivariate_normal, orthogonal, ball and JAX's other samplers.

Example:
  key = fnad.random.PRNGKey(0)
  key, sub = fnad.random.split(key)
  w = fnad.random.normal(sub, (784, 256), dtype=np.float32)
"""

from ._distributions import bernoulli as bernoulli
from ._distributions import categorical as categorical
from ._distributions import gumbel as gumbel
from ._distributions import normal as normal
from ._distributions import permutation as permutation
from ._distributions import randint as randint
from ._distributions import truncated_normal as truncated_normal
from ._distributions import uniform as uniform
from ._discrete import choice as choice
from ._discrete import poisson as poisson
from ._more import exponential as exponential
from ._more import laplace as laplace
from ._more import logistic as logistic
from ._more import cauchy as cauchy
from ._more import rademacher as rademacher
from ._more import t as t
from ._more import beta as beta
from ._more import dirichlet as dirichlet
from ._more import chisquare as chisquare
from ._more import f as f
from ._more import pareto as pareto
from ._more import lognormal as lognormal
from ._more import maxwell as maxwell
from ._more import double_sided_maxwell as double_sided_maxwell
from ._more import weibull_min as weibull_min
from ._more import rayleigh as rayleigh
from ._more import wald as wald
from ._more import triangular as triangular
from ._more import geometric as geometric
from ._more import generalized_normal as generalized_normal
from ._more import ball as ball
from ._more import orthogonal as orthogonal
from ._more import multivariate_normal as multivariate_normal
from ._more import key_data as key_data
from ._more import wrap_key_data as wrap_key_data
from ._more import clone as clone
from ._gamma import gamma as gamma
from ._gamma import loggamma as loggamma
from ._threefry import PRNGKey as PRNGKey
from ._threefry import bits as bits
from ._threefry import fold_in as fold_in
from ._threefry import key as key
from ._threefry import split as split
from ._threefry import threefry_2x32 as threefry_2x32
