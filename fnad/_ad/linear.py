"""`linearize` and `linear_transpose` (JAX's names), built on jvp and vjp."""

import numpy as np

from .._core.abstract import aval_of
from .._core.tracer import require_callable
from .._core.tree import tree_flatten, tree_unflatten
from .transforms import jvp, vjp_with_ints

__all__ = ["linearize", "linear_transpose"]


def linearize(fun, *primals, has_aux=False):
    """`fun`'s value at `primals` and its linear map (JAX's `jax.linearize`).

    Returns `(out, f_jvp)` (and `aux` third with has_aux=True): `f_jvp(*tangents)` is
    `jvp(fun, primals, tangents)[1]`, the Jacobian of `fun` at `primals` applied to the
    tangents. Unlike JAX, which keeps only the linear part, each `f_jvp` call runs the
    forward pass again (a jvp); jit the caller if that matters.

    Example:
      y, f_jvp = fnad.linearize(fnp.sin, x)
      f_jvp(t)                              # cos(x) * t
    """
    require_callable(fun, "linearize")
    if has_aux:
        out, aux = fun(*primals)
        call = lambda *a: fun(*a)[0]
    else:
        out, aux, call = fun(*primals), None, fun
    p_tree = tree_flatten(primals)[1]

    def f_jvp(*tangents):
        t_tree = tree_flatten(tangents)[1]
        if t_tree != p_tree:
            raise ValueError("linearize: the tangents' structure differs from the primals':\n"
                             f"  primals:  {p_tree}\n  tangents: {t_tree}")
        return jvp(call, primals, tangents)[1]

    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


def _zeros_like_struct(x, i):
    try:
        a = aval_of(x)
    except TypeError:
        if not (hasattr(x, "shape") and hasattr(x, "dtype")):
            raise TypeError(f"linear_transpose: primal leaf {i} is a {type(x).__name__}; pass "
                            "arrays or fnad.ShapeDtypeStructs (only shape and dtype are "
                            "used).") from None
        a = aval_of(np.zeros(x.shape, x.dtype))
    if a.dtype.kind not in "fc":
        raise TypeError(f"linear_transpose: primal leaf {i} has dtype {a.dtype}; the "
                        "transpose is defined for real and complex inputs only.")
    return a.xp.zeros(a.shape, a.dtype)


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function `fun` (JAX's `jax.linear_transpose`).

    Args:
      fun: a function linear in its arguments (not checked: a nonlinear one gets the
        transpose of its derivative at zero).
      *primals: arrays or `fnad.ShapeDtypeStruct`s: only their shapes and dtypes are used.

    Returns:
      `f_transpose(out_cotangent)`, returning a tuple with one cotangent per primal.

    Example:
      f_t = fnad.linear_transpose(lambda x: 2 * x, fnad.ShapeDtypeStruct((), "float64"))
      f_t(1.0)                              # (2.0,)
    """
    require_callable(fun, "linear_transpose")
    if reduce_axes:
        raise NotImplementedError("linear_transpose: reduce_axes (deprecated in JAX) is not "
                                  "supported.")
    flat, tree = tree_flatten(primals)
    zeros = tree_unflatten(tree, [_zeros_like_struct(x, i) for i, x in enumerate(flat)])
    f_vjp = vjp_with_ints(fun, *zeros)[1]

    def f_transpose(out_cotangent):
        return f_vjp(out_cotangent)

    return f_transpose

