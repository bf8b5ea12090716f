"""What the contrib optimizers share: the dtype their scalar state is kept in."""

import numpy as np

import fnad

__all__ = ["lowest_float_dtype"]


def lowest_float_dtype(params):
    """The floating dtype of least precision among the leaves of `params` (optax's
    `tree.dtype(params, "lowest")`); float64 for a tree without floating leaves."""
    dtypes = [np.asarray(x).dtype if not hasattr(x, "dtype") else x.dtype
              for x in fnad.tree_leaves(params)]
    floats = [d for d in dtypes if d.kind in "fc"]
    if not floats:
        return np.dtype(np.float64)
    return min(floats, key=lambda d: (np.finfo(d).bits, d.kind == "c"))
