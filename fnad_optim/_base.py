"""The pieces every transform shares: GradientTransformation, chain, apply_updates, and the
small helpers for hyperparameters (floats or schedules), step counters and checked tree maps.
"""

import inspect
from typing import Any, Callable, NamedTuple

import numpy as np

import fnad
import fnad.numpy as fnp
from fnad.extend import Tracer, array_module

from ._shards import UNSHARDABLE, leaf_square_sums, refuse_sharded

__all__ = ["GradientTransformation", "GradientTransformationExtraArgs", "EmptyState",
           "ScheduleState", "chain", "identity", "apply_updates", "global_norm",
           "with_extra_args_support"]

_INT32_MAX = 2**31 - 1


class GradientTransformation(NamedTuple):
    """A pair of pure functions: `init(params) -> state` and
    `update(updates, state, params=None) -> (updates, state)`."""

    init: Callable[[Any], Any]
    update: Callable[..., Any]


class GradientTransformationExtraArgs(GradientTransformation):
    """A `GradientTransformation` whose `update(updates, state, params=None, **extra_args)`
    takes keyword arguments besides the updates: `value`, `grad` and `value_fn` for the line
    searches, or the extra inputs of `value_fn` (data). `chain` passes the extra args of its
    `update` to each of its transforms of this kind (or whose `update` has `**kwargs`), and
    to no other."""

    __slots__ = ()


class EmptyState(NamedTuple):
    """The state of a transform that keeps nothing."""


class ScheduleState(NamedTuple):
    """The state of an otherwise stateless transform whose hyperparameters are schedules."""

    count: Any


# ----------------------------------------------------------------------------- counters


def zero_count(like=None):
    """A fresh step counter: an int32 array of shape (), so checkpoints round-trip it; on the
    device of the arrays of the pytree `like` (the params: a state lives with them)."""
    leaves = fnad.tree_leaves(like) if like is not None else []
    if leaves:
        return fnp.zeros_like(leaves[0], shape=(), dtype=fnp.int32)
    return fnp.zeros([], fnp.int32)


def inc_count(count):
    """`count + 1` as an int32 array of shape (), saturating instead of wrapping (optax's
    `safe_int32_increment`): arithmetic on the array, so a staged step can trace it."""
    count = fnp.asarray(count, dtype=fnp.int32)
    return fnp.where(count < _INT32_MAX, count + 1, count)


def bias_correction(decay, count):
    """`1 - decay ** count` for a step counter `count` (an int32 array)."""
    return 1 - decay ** count


def div_as(x, d):
    """`x / d` in `x`'s dtype: `d` (e.g. a float64 bias correction of shape ()) is cast first,
    as a Python float would be, so float32 leaves stay float32."""
    return x / cast_like(d, x)


def cond(pred, true_fun, false_fun, *operands):
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, pytrees of equal structure.

    A concrete `pred` (a plain array) runs one branch only; a traced one runs both and selects
    leaf by leaf with `fnp.where`, so that a whole step can be staged.
    """
    if not isinstance(pred, Tracer):
        return true_fun(*operands) if bool(pred) else false_fun(*operands)
    a, b = true_fun(*operands), false_fun(*operands)
    return fnad.tree_map(lambda x, y: fnp.where(pred, x, y), a, b)


# ----------------------------------------------------------------------------- hyperparameters


def as_scalar(v):
    """A concrete size-1 hyperparameter as a Python float (weakly typed, so float32 leaves stay
    float32 and any backend accepts it); traced, non-scalar and device values (a schedule of
    a counter on the GPU: reading it back would cost a synchronisation per step) pass
    through."""
    if isinstance(v, (Tracer, int, float)) or array_module(v) is not np:
        return v
    if getattr(v, "size", 1) == 1:
        return float(v)
    return v


def hyper(h, count):
    """The value of hyperparameter `h` (a number or a schedule `count -> value`) at `count`."""
    return as_scalar(h(count) if callable(h) else h)


def _is_number(v):
    return not callable(v) and not isinstance(v, Tracer) and getattr(v, "size", 1) == 1


def check_nonneg(fname, name, v):
    """Raise if the number `v` is negative (schedules and traced values are not checked)."""
    if v is not None and _is_number(v) and not float(v) >= 0:
        raise ValueError(f"{fname}: {name} must be >= 0, got {float(v)}; pass a non-negative "
                         "number or a schedule.")


def check_unit(fname, name, v):
    """Raise unless the number `v` lies in [0, 1) (decay rates such as betas and momentum)."""
    if v is not None and _is_number(v) and not 0 <= float(v) < 1:
        raise ValueError(f"{fname}: {name} must be in [0, 1), got {float(v)}; typical values "
                         "are 0.9 to 0.999.")


# ----------------------------------------------------------------------------- trees


def check_structures(fname, first, *others, names):
    """Flatten `first` and `others`; raise a ValueError naming both structures on a mismatch.

    Returns the leaves of each tree and the tree definition of `first`.
    """
    leaves, treedef = fnad.tree_flatten(first)
    out = [leaves]
    for name, other in zip(names[1:], others):
        o_leaves, o_def = fnad.tree_flatten(other)
        if o_def != treedef:
            raise ValueError(
                f"{fname}: {names[0]} and {name} have different pytree structures:\n"
                f"  {names[0]}: {treedef}\n  {name}: {o_def}\n"
                "They must come from the same params pytree; if the params changed, call "
                "the optimizer's init on the new params.")
        out.append(o_leaves)
    return out, treedef


def tree_map_checked(fname, f, tree, *others, names):
    """`fnad.tree_map(f, tree, *others)` whose structure error names `fname` and the trees."""
    all_leaves, treedef = check_structures(fname, tree, *others, names=names)
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves)])


def tree_zeros_like(tree):
    return fnad.tree_map(fnp.zeros_like, tree)


def tree_full_like(tree, value):
    return fnad.tree_map(lambda x: fnp.full_like(x, value), tree)


_NUMERIC_KINDS = frozenset("biufc")


def _is_numeric(x):
    if isinstance(x, (bool, int, float, complex, Tracer)):
        return True
    dtype = getattr(x, "dtype", None)
    return getattr(dtype, "kind", None) in _NUMERIC_KINDS


def check_param_leaves(fname, params):
    """Raise a TypeError naming `fname` and the leaf's path unless every leaf of `params` is
    a number or an array of numbers (a string or an object array would pass `init` and fail
    in the first `update` with an arithmetic error that names neither)."""
    leaves, treedef = fnad.tree_flatten(params)
    for i, x in enumerate(leaves):
        if not _is_numeric(x):
            dtype = getattr(x, "dtype", None)
            what = (f"an array of dtype {dtype}" if dtype is not None
                    else f"a {type(x).__name__} ({x!r:.40})")
            raise TypeError(
                f"{fname}: init got a params leaf at params{leaf_path(treedef, i)} that is "
                f"{what}; an optimizer updates numbers and arrays of numbers only. Keep "
                "this value out of the params pytree (pass it to the model as an argument of "
                "its own), or make it an array of numbers, then call init again.")


def check_state(fname, state, state_type):
    """Raise a TypeError naming `fname` if `state` is a plain tuple, list or dict holding
    values where `state_type` (a NamedTuple) is expected: what `fnad.load` returns for a
    state loaded without `like=`."""
    if type(state) in (tuple, list, dict) and len(state) and state_type is not None:
        raise TypeError(
            f"{fname}: the optimizer state is a plain {type(state).__name__}, not a "
            f"{state_type.__name__}; a state loaded with fnad.load(path) without like= has "
            "lost its classes. Load it with fnad.load(path, like=state), where state is "
            "opt.init(params) of the same optimizer (for a whole checkpoint, like= a tree of "
            "the same structure holding that state).")


def transform(fname, init, update, state_type, *, extra=False):
    """A `GradientTransformation` of `init` and `update` behind the checks every transform
    shares: `init` refuses params leaves that are not numbers (`check_param_leaves`),
    `update` a state that lost its class (`check_state`; one type test per call); both
    refuse to run inside `shard_optimizer_state` if `fname` is declared in `UNSHARDABLE`.
    With `extra=True`, `update` takes extra keyword arguments (passed on to `update`) and
    the result is a `GradientTransformationExtraArgs`."""
    unshardable = fname in UNSHARDABLE

    def checked_init(params):
        check_param_leaves(fname, params)
        if unshardable:
            refuse_sharded(fname)
        return init(params)

    def checked_update(updates, state, params=None, **extra_args):
        if unshardable:
            refuse_sharded(fname)
        if type(state) is not state_type:
            check_state(fname, state, state_type)
        return update(updates, state, params, **extra_args)

    checked_init.__qualname__ = f"{fname}.init"
    checked_update.__qualname__ = f"{fname}.update"
    if extra:
        return GradientTransformationExtraArgs(checked_init, checked_update)
    plain = lambda updates, state, params=None: checked_update(updates, state, params)
    plain.__qualname__ = checked_update.__qualname__
    return GradientTransformation(checked_init, plain)


def named(fname, tx):
    """`tx` whose `init` checks the params under the optimizer's own name (e.g. "adam")
    before its transforms do."""
    def init(params):
        check_param_leaves(fname, params)
        return tx.init(params)

    init.__qualname__ = f"{fname}.init"
    return type(tx)(init, tx.update)


def require_params(fname, params):
    if params is None:
        raise ValueError(f"{fname}: this transform needs the params; call "
                         "update(updates, state, params).")


def cast_like(x, leaf):
    """`x` with `leaf`'s dtype (so an array-valued factor never promotes a leaf)."""
    dtype = getattr(leaf, "dtype", None)
    if dtype is None or getattr(x, "dtype", dtype) == dtype:
        return x
    return fnp.astype(x, leaf.dtype, copy=False)


# ----------------------------------------------------------------------------- public


def stateless(fname, fn, **hypers):
    """A transform `updates -> fn(updates, params, **values)` with no state of its own.

    If any hyperparameter is a schedule, the state is a `ScheduleState` holding the step count.
    """
    scheduled = any(callable(h) for h in hypers.values())

    def init(params):
        return ScheduleState(count=zero_count(params)) if scheduled else EmptyState()

    def update(updates, state, params=None):
        count = state.count if scheduled else 0
        values = {k: hyper(h, count) for k, h in hypers.items()}
        new_state = ScheduleState(count=inc_count(count)) if scheduled else state
        return fn(updates, params, **values), new_state

    return transform(fname, init, update, ScheduleState if scheduled else EmptyState)


def identity():
    """The transform that leaves updates unchanged.

    Returns:
      A `GradientTransformation` with an `EmptyState`.

    Example:
      tx = identity()
      updates, state = tx.update(grads, tx.init(params))
    """
    return transform("identity", lambda params: EmptyState(),
                     lambda updates, state, params=None: (updates, state), EmptyState)


def chain(*transforms):
    """Apply transforms one after another; the state is the tuple of their states.

    Args:
      *transforms: `GradientTransformation`s, applied left to right.

    Returns:
      A `GradientTransformation`.

    Example:
      tx = chain(clip_by_global_norm(1.0), scale_by_adam(), scale_by_learning_rate(1e-3))
      state = tx.init(params)
    """
    for i, t in enumerate(transforms):
        if not isinstance(t, GradientTransformation):
            raise TypeError(f"chain: argument {i} is a {type(t).__name__}, not a "
                            "GradientTransformation; build it with a transform such as "
                            "fnad_optim.scale(0.1).")

    takes_extra = [takes_extra_args(t) for t in transforms]

    def init(params):
        check_param_leaves("chain", params)
        return tuple(t.init(params) for t in transforms)

    def update(updates, state, params=None, **extra_args):
        if not isinstance(state, tuple) or len(state) != len(transforms):
            raise ValueError(f"chain: expected a state tuple of {len(transforms)} inner states "
                             f"(from this chain's init), got {type(state).__name__}.")
        new_state = []
        for t, s, extra in zip(transforms, state, takes_extra):
            updates, s = (t.update(updates, s, params, **extra_args) if extra
                          else t.update(updates, s, params))
            new_state.append(s)
        return updates, tuple(new_state)

    return GradientTransformationExtraArgs(init, update)


def takes_extra_args(tx):
    """Whether `tx.update` takes extra keyword arguments: a `GradientTransformationExtraArgs`,
    or a plain one whose update has a `**kwargs` parameter."""
    if isinstance(tx, GradientTransformationExtraArgs):
        return True
    try:
        params = inspect.signature(tx.update).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind is p.VAR_KEYWORD for p in params)


def extra_args_caller(tx):
    """A function `(updates, state, params, extra_args) -> tx.update(...)` passing the extra
    args on if `tx` takes them (`takes_extra_args`, decided once here) and dropping them
    otherwise: how a wrapper calls the transform it wraps, as optax's wrappers do through
    `with_extra_args_support`."""
    if takes_extra_args(tx):
        return lambda updates, state, params, extra_args: tx.update(updates, state, params,
                                                                     **extra_args)
    return lambda updates, state, params, extra_args: tx.update(updates, state, params)


def with_extra_args_support(tx):
    """`tx` as a `GradientTransformationExtraArgs`: its `update` accepts extra keyword
    arguments and ignores them (a transform that already takes them is returned as it is).

    Args:
      tx: a `GradientTransformation`.

    Returns:
      A `GradientTransformationExtraArgs`.

    Example:
      tx = with_extra_args_support(scale(-0.1))
      updates, state = tx.update(grads, tx.init(params), params, value=loss)
    """
    if isinstance(tx, GradientTransformationExtraArgs):
        return tx
    if not isinstance(tx, GradientTransformation):
        raise TypeError(f"with_extra_args_support: got a {type(tx).__name__}, not a "
                        "GradientTransformation; build one with a transform such as "
                        "fnad_optim.scale(0.1).")

    def update(updates, state, params=None, **extra_args):
        return tx.update(updates, state, params)

    return GradientTransformationExtraArgs(tx.init, update)


def apply_updates(params, updates):
    """Add `updates` to `params` leaf by leaf, keeping each param's dtype.

    Args:
      params: a pytree of arrays.
      updates: a pytree of the same structure (from a transform's `update`).

    Returns:
      The new params.

    Example:
      updates, opt_state = opt.update(grads, opt_state, params)
      params = apply_updates(params, updates)
    """
    (p_leaves, u_leaves), treedef = check_structures("apply_updates", params, updates,
                                                     names=("params", "updates"))
    out = []
    for p, u in zip(p_leaves, u_leaves):
        if getattr(p, "shape", ()) != getattr(u, "shape", ()) or _truncates(p, u):
            _leaf_mismatch(treedef, len(out), p, u)
        out.append(cast_like(p + u, p))
    return treedef.unflatten(out)


_PY_KINDS = {bool: "b", int: "i", float: "f", complex: "c"}


def _kind(x):
    dtype = getattr(x, "dtype", None)
    return dtype.kind if dtype is not None else _PY_KINDS.get(type(x), "f")


def _truncates(p, u):
    """Whether adding update `u` to param `p` and casting back to p's dtype loses a part of u
    (a fraction into an integer param, an imaginary part into a real one)."""
    pk, uk = _kind(p), _kind(u)
    return (pk in "biu" and uk in "fc") or (uk == "c" and pk != "c")


def _describe(x):
    dtype = getattr(x, "dtype", None)
    return f"{dtype if dtype is not None else type(x).__name__}{tuple(getattr(x, 'shape', ()))}"


def leaf_path(treedef, i):
    """The path of leaf `i` of `treedef`, written as in Python: `['layer']['w']`, `.mu`, `[0]`."""
    parts, node = [], treedef
    while node.node_type is not None:
        for j, child in enumerate(node.children):
            if i < child.num_leaves:
                break
            i -= child.num_leaves
        t, aux = node.node_type, node.aux
        if issubclass(t, dict) and isinstance(aux, tuple) and len(aux) == len(node.children):
            parts.append(f"[{aux[j]!r}]")
        elif issubclass(t, tuple) and hasattr(t, "_fields"):
            parts.append(f".{t._fields[j]}")
        else:
            parts.append(f"[{j}]")
        node = child
    return "".join(parts) or "(root)"


def _leaf_mismatch(treedef, i, p, u):
    where, ps, us = leaf_path(treedef, i), _describe(p), _describe(u)
    if getattr(p, "shape", ()) != getattr(u, "shape", ()):
        raise ValueError(f"apply_updates: the update at {where} is {us} but its param is {ps}; "
                         "each update must have its param's shape (a gradient of another "
                         "shape would silently broadcast the param). Check that the grads "
                         "come from a loss of these params.")
    raise TypeError(f"apply_updates: the update at {where} is {us} but its param is {ps}; "
                    f"adding it would silently truncate the update to {getattr(p, 'dtype', ps)}. "
                    "Keep integer leaves (step counters, indices) out of the params the "
                    "optimizer updates, or make the param a float (complex) array.")


def global_norm(updates):
    """The L2 norm of all leaves together, as one would log the gradient norm.

    Args:
      updates: a pytree of arrays (e.g. grads).

    Returns:
      A scalar array.

    Example:
      print(f"grad norm {float(global_norm(grads)):.3f}")
    """
    leaves = fnad.tree_leaves(updates)
    if not leaves:
        return fnp.asarray(0.0)
    return fnp.sqrt(sum(leaf_square_sums(leaves)))
