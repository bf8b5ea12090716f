"""Calls of functions that bring their own derivative rule (`fnad.custom_vjp`) or ask to be
recomputed in the backward pass (`fnad.checkpoint`), or their own JVP rule
(`fnad.custom_jvp`).

Such a call is handed to the innermost trace among its arguments, the way a primitive call
is handed to `Trace.process`: each trace has a hook (`process_custom_vjp`,
`process_custom_jvp`, `process_checkpoint`) that does what that transform needs (reverse
mode records the rule, or the transpose of a custom JVP; forward mode refuses a custom VJP
and calls a custom JVP; batching vmaps the function and its rules; staging records one
primitive). A hook that hands the call on to the traces below calls `bind_custom_vjp`,
`bind_custom_jvp` or `bind_checkpoint` again on the values inside its tracers. With no
tracer the function runs.
"""

from .tracer import Tracer, top_trace
from .tree import tree_flatten, tree_unflatten

__all__ = ["CustomVJPRule", "CustomJVPRule", "bind_custom_vjp", "bind_custom_jvp",
           "bind_checkpoint"]


class CustomVJPRule:
    """The parts of a custom_vjp function: `fun(*args)`, `fwd(*args) -> (out, residuals)`,
    `bwd(*nondiff_args, residuals, g) -> one cotangent per differentiable argument`, the
    sorted `nondiff_argnums` and the name used in errors."""

    __slots__ = ("fun", "fwd", "bwd", "nondiff_argnums", "name")

    def __init__(self, fun, fwd, bwd, nondiff_argnums=(), name="function"):
        self.fun, self.fwd, self.bwd = fun, fwd, bwd
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.name = name

    def diff_argnums(self, nargs):
        """The positions of the differentiable arguments of a call with `nargs` of them."""
        nondiff = self.nondiff_argnums
        return [i for i in range(nargs) if i not in nondiff]

    def flatten(self, args):
        """(leaves of the differentiable arguments, their tree: a tuple of arguments)."""
        return tree_flatten(tuple(args[i] for i in self.diff_argnums(len(args))))

    def fill(self, args, diff_values):
        """`args` with the differentiable arguments replaced by `diff_values` (in order)."""
        full = list(args)
        for i, v in zip(self.diff_argnums(len(args)), diff_values):
            full[i] = v
        return full

    def fill_leaves(self, args, leaves, in_tree):
        """`args` with the differentiable arguments rebuilt from `leaves`."""
        return self.fill(args, tree_unflatten(in_tree, list(leaves)))

    def leaf_cotangents(self, cts, in_tree):
        """`bwd`'s result (one pytree, or None for zero, per differentiable argument of the
        structure `in_tree`) as one cotangent or None per leaf, checked."""
        n = len(in_tree.children)
        if not isinstance(cts, (tuple, list)) or len(cts) != n:
            what = "argument" if not self.nondiff_argnums else "argument not in nondiff_argnums"
            got = (f"a {type(cts).__name__} of {len(cts)}" if isinstance(cts, (tuple, list))
                   else f"a {type(cts).__name__}")
            raise TypeError(f"custom_vjp {self.name}: bwd must return a tuple with one "
                            f"cotangent per {what} ({n}), got {got}.")
        out = []
        for k, (ct, arg_def) in enumerate(zip(cts, in_tree.children)):
            if ct is None:
                out.extend([None] * arg_def.num_leaves)
                continue
            leaves, ct_def = tree_flatten(ct, is_leaf=lambda c: c is None)
            if len(leaves) != arg_def.num_leaves:
                raise ValueError(f"custom_vjp {self.name}: bwd's cotangent {k} has structure "
                                 f"{ct_def} but the argument has structure {arg_def}.")
            out.extend(leaves)
        return out


class CustomJVPRule(CustomVJPRule):
    """The parts of a custom_jvp function: `fun(*args)`, `jvp(*nondiff_args, primals,
    tangents) -> (out, tangent_out)` (primals and tangents: tuples of the differentiable
    arguments), the sorted `nondiff_argnums` and the name used in errors."""

    __slots__ = ("jvp",)
    kind = "custom_jvp"

    def __init__(self, fun, jvp, nondiff_argnums=(), name="function"):
        super().__init__(fun, None, None, nondiff_argnums, name)
        self.jvp = jvp

    def jvp_leaves(self, args, in_tree, vals, tans):
        """`jvp` at the differentiable leaves `vals` with tangents `tans` (one per leaf):
        (out, tangent_out), checked to have one structure."""
        fixed = [args[i] for i in self.nondiff_argnums]
        res = self.jvp(*fixed, tuple(tree_unflatten(in_tree, list(vals))),
                       tuple(tree_unflatten(in_tree, list(tans))))
        if not isinstance(res, (tuple, list)) or len(res) != 2:
            raise TypeError(f"custom_jvp {self.name}: the jvp rule must return a pair "
                            f"(primal_out, tangent_out), got {type(res).__name__}.")
        out, t_out = res
        o_tree, t_tree = tree_flatten(out)[1], tree_flatten(t_out)[1]
        if o_tree != t_tree:
            raise TypeError(f"custom_jvp {self.name}: the jvp rule's primal and tangent outputs "
                            f"differ in structure:\n  primal:  {o_tree}\n  tangent: {t_tree}")
        return out, t_out


def _check_call(rule, args):
    kind = getattr(rule, "kind", "custom_vjp")
    nondiff = rule.nondiff_argnums
    if nondiff and nondiff[-1] >= len(args):
        raise ValueError(f"{kind} {rule.name}: nondiff_argnums={nondiff} but it was "
                         f"called with {len(args)} positional arguments.")
    for i in nondiff:
        if any(isinstance(x, Tracer) for x in tree_flatten(args[i])[0]):
            fix = ("bwd may return None for them" if kind == "custom_vjp"
                   else "their tangents may be ignored")
            raise TypeError(f"{kind} {rule.name}: argument {i} is in nondiff_argnums but "
                            "holds a traced value; nondiff_argnums are for Python values "
                            "(functions, flags, sizes). Pass arrays as ordinary arguments "
                            f"({fix}).")


def bind_custom_vjp(rule, args):
    """Call the custom_vjp function `rule` on `args`: the innermost trace among the
    differentiable arguments handles it (`process_custom_vjp`); with none, `rule.fun` runs."""
    return _bind_custom(rule, args, "process_custom_vjp")


def bind_custom_jvp(rule, args):
    """Call the custom_jvp function `rule` (a `CustomJVPRule`) on `args`, as
    `bind_custom_vjp` does (the hook: `process_custom_jvp`)."""
    return _bind_custom(rule, args, "process_custom_jvp")


def _bind_custom(rule, args, hook):
    _check_call(rule, args)
    top = top_trace(rule.flatten(args)[0])
    if top is None:
        return rule.fun(*args)
    return getattr(top, hook)(rule, args)


def bind_checkpoint(fun, args, kwargs, name):
    """Call the checkpointed function `fun`: the innermost trace among its arguments
    handles it (`process_checkpoint`); with none, `fun` runs."""
    top = top_trace(tree_flatten((args, kwargs))[0])
    if top is None:
        return fun(*args, **kwargs)
    return top.process_checkpoint(fun, args, kwargs, name)
