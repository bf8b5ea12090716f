"""fnad.random: explicit, splittable PRNG keys with JAX's semantics (threefry2x32).

The same key gives the same numbers, on CPU and GPU alike (bit for bit); derive new
keys with `split` or `fold_in` instead of reusing one.

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
from ._threefry import PRNGKey as PRNGKey
from ._threefry import bits as bits
from ._threefry import fold_in as fold_in
from ._threefry import key as key
from ._threefry import split as split
from ._threefry import threefry_2x32 as threefry_2x32
