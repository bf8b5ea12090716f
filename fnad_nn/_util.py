"""Small helpers shared by the layer modules."""

import numpy as np

import fnad.random as random
from fnad.extend import Tracer

__all__ = ["split_key", "shape_of", "check_last_dim", "default_dtype", "dtype_of", "as_array"]

default_dtype = np.float32


def split_key(key, num):
    """`num` independent keys from `key` (via fnad.random.split)."""
    return list(random.split(key, num))


def shape_of(x):
    return tuple(getattr(x, "shape", ()))


def check_last_dim(fname, x, d, what="input"):
    """Raise a ValueError naming `fname` unless `x.shape[-1] == d`."""
    s = shape_of(x)
    if not s or s[-1] != d:
        raise ValueError(f"{fname}: the {what} has shape {s} but the parameters expect a last "
                         f"axis of size {d}; reshape the {what} or initialise the layer with "
                         f"d_in={s[-1] if s else None}.")


def dtype_of(x):
    """The dtype of an array or a traced value (from its abstract value), without reading
    any number."""
    return x.dtype if hasattr(x, "dtype") else np.result_type(x)


def as_array(xp, x):
    """`x` (a list, or an array of another backend) as an array of module `xp`; a traced
    value passes as it is (it already lives where the trace puts it)."""
    return x if isinstance(x, Tracer) else xp.asarray(x)
