"""JAX's `jax.checkpoint_policies`: what `fnad.checkpoint(f, policy=...)` keeps from the
forward pass instead of recomputing it."""

from ._ad.remat import checkpoint_dots as checkpoint_dots
from ._ad.remat import dots_saveable as dots_saveable
from ._ad.remat import dots_with_no_batch_dims_saveable as dots_with_no_batch_dims_saveable
from ._ad.remat import everything_saveable as everything_saveable
from ._ad.remat import nothing_saveable as nothing_saveable
from ._ad.remat import save_anything_except_these_names as save_anything_except_these_names
from ._ad.remat import save_only_these_names as save_only_these_names
from ._ad.remat import save_any_names_but_these as save_any_names_but_these
