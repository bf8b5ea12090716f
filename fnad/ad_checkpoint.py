"""JAX's `jax.ad_checkpoint`: `checkpoint` (= `fnad.checkpoint`, `fnad.remat`) and
`checkpoint_name`, which tags a value for `checkpoint_policies.save_only_these_names`."""

from ._ad.custom import checkpoint as checkpoint
from ._ad.remat import checkpoint_name as checkpoint_name
from . import checkpoint_policies as checkpoint_policies
