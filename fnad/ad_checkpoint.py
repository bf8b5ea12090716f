"""JAX's `jax.ad_checkpoint`: `checkpoint` (= `fnad.checkpoint`, `fnad.remat`),
`checkpoint_name`, which tags a value for `checkpoint_policies.save_only_these_names`, and
`saved_residuals`/`print_saved_residuals`, which show what a backward pass keeps."""

from ._ad.custom import checkpoint as checkpoint
from ._ad.remat import checkpoint_name as checkpoint_name
from . import checkpoint_policies as checkpoint_policies
from ._ad.residuals import print_saved_residuals as print_saved_residuals
from ._ad.residuals import saved_residuals as saved_residuals
