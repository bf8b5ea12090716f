"""JAX's `jax.ad_checkpoint.saved_residuals` and `print_saved_residuals`: the arrays that
`vjp` of a function keeps for its backward pass, and where each comes from, to see what
`checkpoint` and its policies save."""

import inspect

import numpy as np

from .._core.abstract import ShapeDtypeStruct
from .._core.tree import tree_leaves
from .transforms import vjp

__all__ = ["saved_residuals", "print_saved_residuals"]

_SHORT = {"f": "f", "i": "i", "u": "u", "c": "c", "b": "bool"}


def _type_str(x):
    dtype = np.dtype(x.dtype)
    kind, bits = dtype.kind, dtype.itemsize * 8
    name = "bool" if kind == "b" else f"{_SHORT.get(kind, dtype.name)}{bits}"
    return f"{name}[{','.join(str(d) for d in x.shape)}]"


def _argument_names(fun, args):
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = {}
    for i, a in enumerate(args):
        p = params[i].name if i < len(params) and params[i].kind in (
            params[i].POSITIONAL_ONLY, params[i].POSITIONAL_OR_KEYWORD) else f"args[{i}]"
        for leaf in tree_leaves(a):
            names.setdefault(id(leaf), p)
    return names


def saved_residuals(fun, *args, **kwargs):
    """The residuals of `vjp(fun, *args)`: [(ShapeDtypeStruct, description)], one per
    distinct array the backward pass keeps ("from the argument W1", "output of sin", "saved
    by checkpoint g"). fnad keeps each recorded operation's inputs and outputs, so the list
    is what fnad holds, which can differ from what XLA would keep for the same program.

    Example:
      saved_residuals(lambda x: fnp.sin(fnp.sin(x)), fnp.ones(3))
    """
    _, vjp_fun = vjp(lambda *a: fun(*a, **kwargs), *args)
    names = _argument_names(fun, args)
    return [(ShapeDtypeStruct(x.shape, x.dtype),
             f"from the argument {names[id(x)]}" if id(x) in names else where)
            for x, where in vjp_fun.residuals()]


def print_saved_residuals(fun, *args, **kwargs):
    """Print `saved_residuals(fun, *args, **kwargs)`, one line per array, as JAX's
    `jax.ad_checkpoint.print_saved_residuals` (e.g. "f32[5,4] from the argument W1")."""
    for struct, where in saved_residuals(fun, *args, **kwargs):
        print(_type_str(struct), where)
