"""Parameter groups and small building blocks with optax's names: `partition` /
`multi_transform` (a transform per label), `set_to_zero`, `freeze`, `selective_transform`,
`named_chain`, and the public `stateless` / `stateless_with_tree_map`."""

from typing import Any, NamedTuple

import fnad
import fnad.numpy as fnp

from ._base import (EmptyState, GradientTransformation, GradientTransformationExtraArgs,
                    extra_args_caller, identity, transform)
from ._wrappers import masked

__all__ = ["PartitionState", "MultiTransformState", "partition", "multi_transform",
           "set_to_zero", "freeze", "selective_transform", "named_chain", "stateless",
           "stateless_with_tree_map"]


class PartitionState(NamedTuple):
    """For each label, the `MaskedState` of its transform over the leaves of that label."""

    inner_states: Any


MultiTransformState = PartitionState  # optax's older name


def _labels(fname, param_labels, tree, transforms):
    labels = param_labels(tree) if callable(param_labels) else param_labels
    missing = set(fnad.tree_leaves(labels)) - set(transforms)
    if missing:
        raise ValueError(f"{fname}: the labels {sorted(map(str, missing))} have no transform; "
                         f"the transforms are for {sorted(map(str, transforms))}. Give every "
                         "label a transform (set_to_zero() to freeze a group).")
    return labels


def _grouped(fname, state_type, transforms, param_labels):
    """The body of `partition`."""
    transforms = dict(transforms)
    for k, t in transforms.items():
        if not isinstance(t, GradientTransformation):
            raise TypeError(f"{fname}: the transform for label {k!r} is a "
                            f"{type(t).__name__}, not a GradientTransformation.")

    def group(labels, label):
        return masked(transforms[label], fnad.tree_map(lambda x: x == label, labels))

    def init(params):
        labels = _labels(fname, param_labels, params, transforms)
        return state_type({k: group(labels, k).init(params) for k in transforms})

    def update(updates, state, params=None, **extra_args):
        labels = _labels(fname, param_labels, updates, transforms)
        new = {}
        for k in transforms:
            updates, new[k] = group(labels, k).update(updates, state.inner_states[k], params,
                                                      **extra_args)
        return updates, state_type(new)

    return transform(fname, init, update, state_type, extra=True)


def partition(transforms, param_labels):
    """A transform per group of leaves: leaf `i` is updated by `transforms[label_i]`.

    Args:
      transforms: a dict `label -> GradientTransformation`.
      param_labels: a pytree of labels shaped like the params, or a function of the params
        returning one.

    Returns:
      A `GradientTransformationExtraArgs` with a `PartitionState` (extra args of `update`
      go to each transform that takes them).

    Example:
      labels = lambda p: fnad.tree_map(lambda x: "decay" if x.ndim > 1 else "plain", p)
      opt = partition({"decay": adamw(1e-3), "plain": adam(1e-3)}, labels)
    """
    return _grouped("partition", PartitionState, transforms, param_labels)


multi_transform = partition  # optax's older name


def set_to_zero():
    """The transform whose updates are all zeros (a frozen group in `partition`).

    Example:
      opt = partition({"train": adam(1e-3), "frozen": set_to_zero()}, labels)
    """
    return transform("set_to_zero", lambda params: EmptyState(),
                     lambda updates, state, params=None: (
                         fnad.tree_map(fnp.zeros_like, updates), state), EmptyState)


def freeze(mask):
    """Zero the updates of the leaves where `mask` is True (a pytree of bools, a function of
    the params returning one, or one bool for all).

    Example:
      opt = chain(freeze({"encoder": True, "head": False}), adam(1e-3))
    """
    if isinstance(mask, bool):
        return set_to_zero() if mask else identity()
    return masked(set_to_zero(), mask)


def selective_transform(optimizer, *, freeze_mask):
    """`optimizer` on the leaves where `freeze_mask` is False, zero updates elsewhere.

    Example:
      opt = selective_transform(adam(1e-3), freeze_mask={"encoder": True, "head": False})
    """
    labels = fnad.tree_map(lambda m: "freeze" if m else "train", freeze_mask)
    return partition({"train": optimizer, "freeze": set_to_zero()}, lambda params: labels)


def named_chain(*transforms):
    """`chain` whose state is a dict by name: `named_chain(("clip", clip(1.0)), ("adam",
    adam(1e-3)))`.

    Args:
      *transforms: `(name, GradientTransformation)` pairs with distinct names.

    Returns:
      A `GradientTransformationExtraArgs` whose state is a dict `name -> state` (extra args
      of `update` go to each transform that takes them).

    Example:
      opt = named_chain(("clip", clip_by_global_norm(1.0)), ("adam", adam(1e-3)))
      opt.init(params)["adam"]
    """
    names = [n for n, _ in transforms]
    if len(names) != len(set(names)):
        raise ValueError(f"named_chain: the names must be distinct, got {names}.")
    for n, t in transforms:
        if not isinstance(t, GradientTransformation):
            raise TypeError(f"named_chain: {n!r} is a {type(t).__name__}, not a "
                            "GradientTransformation.")

    callers = [(n, extra_args_caller(t)) for n, t in transforms]

    def init(params):
        return {n: t.init(params) for n, t in transforms}

    def update(updates, state, params=None, **extra_args):
        if not isinstance(state, dict) or set(state) != set(names):
            raise ValueError(f"named_chain: expected a dict state with keys {names} (from "
                             f"this chain's init), got {type(state).__name__}.")
        new = {}
        for n, call in callers:
            updates, new[n] = call(updates, state[n], params, extra_args)
        return updates, new

    return GradientTransformationExtraArgs(init, update)


def stateless(f):
    """A transform with no state: `updates -> f(updates, params)`.

    Example:
      tx = stateless(lambda u, p: fnad.tree_map(lambda g: 2 * g, u))
    """
    return GradientTransformation(lambda params: EmptyState(),
                                  lambda updates, state, params=None: (f(updates, params),
                                                                       EmptyState()))


def stateless_with_tree_map(f):
    """A transform with no state applying `f(update, param)` leaf by leaf (`param` None when
    no params are passed).

    Example:
      tx = stateless_with_tree_map(lambda g, p: g + 1e-4 * p)
    """
    def update(updates, state, params=None):
        if params is None:
            return fnad.tree_map(lambda u: f(u, None), updates), EmptyState()
        return fnad.tree_map(f, updates, params), EmptyState()

    return GradientTransformation(lambda params: EmptyState(), update)
