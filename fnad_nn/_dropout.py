"""Dropout with an explicit key."""

import fnad.random as random

from ._util import dtype_of, shape_of

__all__ = ["dropout"]


def dropout(x, rate, *, key=None, train=True):
    """Zero each element with probability `rate` and scale the rest by `1 / (1 - rate)`, so
    the mean is preserved. The identity when `train` is False or `rate` is 0.

    Args:
      x: array of any shape.
      rate: drop probability in [0, 1).
      key: a `fnad.random.PRNGKey` (keyword-only; required in training). The same key drops
        the same elements.
      train: apply dropout (True) or return `x` unchanged (False).

    Returns:
      An array shaped like `x`.

    Example:
      y = dropout(x, 0.1, key=fnad.random.PRNGKey(0))
      dropout(x, 0.1, train=False) is x   # True
    """
    if not train or rate == 0:
        return x
    if not 0 <= rate < 1:
        raise ValueError(f"dropout: rate={rate} must be in [0, 1) (it is the drop probability).")
    if key is None:
        raise ValueError("dropout: training needs a key; pass key=fnad.random.PRNGKey(...) "
                         "(split a fresh one per call), or train=False.")
    keep = random.bernoulli(key, 1.0 - rate, shape_of(x))
    dt = dtype_of(x)
    return x * (keep.astype(dt) * dt.type(1.0 / (1.0 - rate)))
