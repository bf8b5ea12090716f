"""Checkpoint policies (JAX's `jax.checkpoint_policies`) and `checkpoint_name`.

A policy `policy(prim, *args, **kwargs) -> bool` says whether the result of one primitive
call inside a `fnad.checkpoint(fun, policy=...)` is kept from the forward pass (True) or
recomputed in the backward pass (False). Reverse mode (fnad/_ad/reverse.py) runs `fun`
once, keeps the results the policy allows and drops the rest; the backward pass runs `fun`
again, taking the kept results instead of computing them.
"""

from .._core.abstract import same_rule
from .._core.rules import defabstract_eval, defbatch, defjvp_linear, defvjp
from .._core.tracer import primitive

__all__ = ["CheckpointName", "checkpoint_name", "nothing_saveable", "everything_saveable",
           "dots_saveable", "checkpoint_dots", "dots_with_no_batch_dims_saveable",
           "save_only_these_names", "save_anything_except_these_names", "save_any_names_but_these",
           "DOT_PRIMITIVES"]


class CheckpointName(str):
    """The name of a checkpoint call (what errors and graphs show), carrying its `policy`
    through every trace's checkpoint hook unchanged."""

    __slots__ = ("policy",)

    def __new__(cls, text, policy=None):
        self = super().__new__(cls, text)
        self.policy = policy
        return self


_name = primitive(lambda x, name: x, "checkpoint_name")
defvjp(_name, lambda g, ans, x, name: g)
defjvp_linear(_name)
defabstract_eval(_name, same_rule)
defbatch(_name, lambda args, dims, name: (_name(args[0], name=name), dims[0]))


def checkpoint_name(x, name):
    """`x` unchanged, tagged `name` for `save_only_these_names` (JAX's
    `jax.ad_checkpoint.checkpoint_name`).

    Example:
      h = checkpoint_name(fnp.tanh(x @ w), "hidden")
    """
    return _name(x, name=name)


# Products whose results dots_saveable keeps (fnad.numpy's, the kernels', lax's, convolutions).
DOT_PRIMITIVES = frozenset(("matmul", "einsum", "dot", "tensordot", "vdot", "inner", "outer",
                            "dot_general", "fnad.kernels.matmul"))


def _is_dot(prim):
    return prim.name in DOT_PRIMITIVES or "conv" in prim.name


def nothing_saveable(prim, *args, **kwargs):
    """Keep nothing: recompute every intermediate (what `checkpoint` does without a policy)."""
    return False


def everything_saveable(prim, *args, **kwargs):
    """Keep everything: no rematerialisation (as if `checkpoint` were not there)."""
    return True


def dots_saveable(prim, *args, **kwargs):
    """Keep the results of matrix products and convolutions; recompute the cheap rest."""
    return _is_dot(prim)


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim, *args, **kwargs):
    """Keep the results of products of plain matrices (2-d operands), not batched ones."""
    return _is_dot(prim) and all(getattr(a, "ndim", 0) <= 2 for a in args
                                 if hasattr(a, "ndim"))


def save_only_these_names(*names):
    """A policy keeping only the values tagged with one of `names` by `checkpoint_name`."""
    keep = frozenset(names)

    def policy(prim, *args, **kwargs):
        return prim is _name.primitive and kwargs.get("name") in keep
    return policy


def save_anything_except_these_names(*names):
    """A policy keeping every result except the values tagged with one of `names`."""
    drop = frozenset(names)

    def policy(prim, *args, **kwargs):
        return not (prim is _name.primitive and kwargs.get("name") in drop)
    return policy


save_any_names_but_these = save_anything_except_these_names  # JAX's other name for it
