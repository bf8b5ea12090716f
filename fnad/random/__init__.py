"""fnad.random: explicit, splittable PRNG keys with JAX's semantics (threefry2x32).

The same key gives the same numbers, on CPU and GPU alike (bit for bit); derive new
keys with `split` or `fold_in` instead of reusing one.

Example:
  key = fnad.random.PRNGKey(0)
  key, sub = fnad.random.split(key)
  w = fnad.random.normal(sub, (784, 256), dtype=np.float32)
"""

from ._random import PRNGKey as PRNGKey
from ._random import bernoulli as bernoulli
from ._random import bits as bits
from ._random import categorical as categorical
from ._random import fold_in as fold_in
from ._random import gumbel as gumbel
from ._random import key as key
from ._random import normal as normal
from ._random import permutation as permutation
from ._random import randint as randint
from ._random import split as split
from ._random import threefry_2x32 as threefry_2x32
from ._random import truncated_normal as truncated_normal
from ._random import uniform as uniform
