"""Small helpers shared by the layer modules."""

import difflib
from collections.abc import Mapping

import numpy as np

import fnad.random as random
from fnad.extend import Tracer

__all__ = ["split_key", "shape_of", "check_last_dim", "check_params", "check_layers",
           "default_dtype", "dtype_of", "as_array", "ParamSpec"]

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


class ParamSpec:
    """What a layer's params dict holds, for `check_params`: `ndims` maps each key to the
    number of axes of its array (None: not an array, e.g. a sublayer's dict, which that
    sublayer checks). Keys in `nullable` hold None where the layer has no such part (a
    bias, with `bias=False` at init: the key stays, so deleting it is an error and not a
    silently dropped bias); the keys in `absent` may be missing, all together (a variant of
    the layer, e.g. a gated feed-forward's "gate"). `same` lists `(key, axis, key2, axis2)`
    sizes that must agree; `init` names the initialiser for messages."""

    __slots__ = ("keys", "required", "ndims", "nullable", "absent", "same", "init")

    def __init__(self, init, ndims, *, nullable=(), absent=(), same=()):
        self.init = init
        self.keys = frozenset(ndims)
        self.absent = frozenset(absent)
        self.required = self.keys - self.absent
        self.ndims = tuple((k, n) for k, n in ndims.items() if n is not None)
        self.nullable = frozenset(nullable) | self.absent
        self.same = tuple(same)


def check_params(fname, params, x=None, init=None, call=None, spec=None, path="params"):
    """Raise naming `fname` unless `params` is a dict (a layer's params) that, with a
    `spec` (a `ParamSpec`), holds exactly the spec's keys with arrays of its numbers of
    axes: a TypeError for a value that is not a dict, a ValueError naming the key and what
    was expected otherwise.

    A type check, a set comparison of the keys and a few shape reads on the good path
    (traced values have shapes too), so every layer calls it on every call. It catches the
    common slips: the arguments swapped (`linear(x, params)`), one entry passed instead of
    the whole dict (`linear(params["w"], x)`), a key deleted or misspelt. `x` (the input)
    only sharpens the message; `init` names the initialiser (default the spec's, else
    `init_<fname>`), `call` the right call (default `<fname>(params, x)`), `path` where
    these params sit (e.g. "params['q']").
    """
    if not isinstance(params, dict) and not isinstance(params, Mapping):
        raise TypeError(_params_message(fname, params, x, init or getattr(spec, "init", None),
                                        "dict", call))
    if spec is None:
        return
    keys = params.keys()
    if keys != spec.keys and keys != spec.required:
        raise ValueError(_keys_message(fname, keys, spec, init or spec.init, path))
    for k, nd in spec.ndims:
        v = params.get(k)
        if getattr(v, "ndim", None) == nd:  # the good path: one attribute read
            continue
        if v is None:
            if k in spec.nullable:
                continue
            raise ValueError(f"{fname}: {path}[{k!r}] is None, but the layer needs a {nd}-d "
                             f"array there, as {init or spec.init} gives.")
        if len(shape_of(v)) != nd:
            raise ValueError(f"{fname}: {path}[{k!r}] has shape {shape_of(v)}, but the layer "
                             f"expects a {nd}-d array there, as {init or spec.init} gives.")
    for k, a, k2, a2 in spec.same:
        v, v2 = params.get(k), params.get(k2)
        if v is not None and v2 is not None and v.shape[a] != v2.shape[a2]:
            raise ValueError(f"{fname}: {path}[{k!r}] has shape {shape_of(v)}, which does not "
                             f"fit {path}[{k2!r}] of shape {shape_of(v2)} (axis {a} of the "
                             f"first must equal axis {a2} of the second).")


def _keys_message(fname, keys, spec, init, path):
    keys = set(keys)
    want = ", ".join(repr(k) for k in sorted(spec.keys))
    extra = sorted(keys - spec.keys, key=str)
    some = keys & spec.absent  # a variant's keys: all of them or none
    for k in sorted((spec.keys if some else spec.required) - keys):
        lowered = {str(e).lower(): e for e in extra}
        close = difflib.get_close_matches(k.lower(), list(lowered), 1, 0.5)
        if close:
            return (f"{fname}: {path} has no key {k!r} but the unexpected key "
                    f"{lowered[close[0]]!r} (a "
                    f"misspelling?); it takes the keys {want}, as {init} gives.")
        if k in spec.nullable and k not in spec.absent:
            return (f"{fname}: {path} has no key {k!r}. A layer without that part keeps the "
                    f"key with the value None, as {init}(..., bias=False) gives: put it back "
                    f"(the keys are {want}), or initialise the layer with bias=False.")
        return f"{fname}: {path} has no key {k!r}; it needs the keys {want}, as {init} gives."
    return (f"{fname}: {path} has the unexpected key {extra[0]!r}; it takes the keys {want}, "
            f"as {init} gives.")


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
