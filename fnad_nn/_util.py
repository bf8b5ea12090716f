"""Small helpers shared by the layer modules."""

from collections.abc import Mapping

import numpy as np

import fnad.random as random
from fnad.extend import Tracer

__all__ = ["split_key", "shape_of", "check_last_dim", "check_params", "check_layers",
           "default_dtype", "dtype_of", "as_array"]

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


def check_params(fname, params, x=None, init=None, call=None):
    """Raise a TypeError naming `fname` unless `params` is a dict (a layer's params).

    One type check on the good path, so every layer calls it on every call. It catches the
    two common slips: the arguments swapped (`linear(x, params)`) and one entry passed
    instead of the whole dict (`linear(params["w"], x)`). `x` (the input) only sharpens
    the message; `init` names the initialiser (default `init_<fname>`), `call` the right
    call (default `<fname>(params, x)`).
    """
    if not isinstance(params, dict) and not isinstance(params, Mapping):
        raise TypeError(_params_message(fname, params, x, init, "dict", call))


def check_layers(fname, params, x=None, init=None, single=None):
    """Raise a TypeError naming `fname` unless `params` is a list (or tuple) of per-layer
    params, as `init_mlp`, `init_rnn`, ... return; `single` names the one-layer function
    to suggest when one layer's dict comes instead."""
    if isinstance(params, (list, tuple)):
        return
    if isinstance(params, Mapping) and single is not None:
        raise TypeError(f"{fname}: params must be the list of per-layer params from "
                        f"{init or 'init_' + fname}, got one layer's dict; for a single layer "
                        f"use {single}, or wrap the dict in a list.")
    raise TypeError(_params_message(fname, params, x, init, "list", None))


def _describe(v):
    """A short description of a value for an error message."""
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return f"an array of shape {tuple(v.shape)} and dtype {v.dtype}"
    if isinstance(v, (list, tuple)):
        return f"a {type(v).__name__} of {len(v)} items"
    return f"a {type(v).__name__}"


def _params_message(fname, params, x, init, kind, call):
    init, call = init or f"init_{fname}", call or f"{fname}(params, x)"
    if isinstance(x, (Mapping, list, tuple)):
        hint = f"the arguments look swapped: call {call}, params first"
    else:
        hint = (f"pass the whole {kind} that {init} returns, not one entry such as "
                f"params['w'], as the first argument: {call}")
    return (f"{fname}: params must be the {kind} returned by {init}, got {_describe(params)}; "
            f"{hint}.")


def dtype_of(x):
    """The dtype of an array or a traced value (from its abstract value), without reading
    any number."""
    return x.dtype if hasattr(x, "dtype") else np.result_type(x)


def as_array(xp, x):
    """`x` (a list, or an array of another backend) as an array of module `xp`; a traced
    value passes as it is (it already lives where the trace puts it)."""
    return x if isinstance(x, Tracer) else xp.asarray(x)
