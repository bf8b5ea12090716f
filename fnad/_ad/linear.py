"""`linear_transpose` (JAX's name), built on vjp (`linearize` is in fnad/_jit/api.py: it
stages the tangent map)."""

import numpy as np

from .._core.abstract import aval_of
from .._core.tracer import require_callable
from .._core.tree import tree_flatten, tree_unflatten
from .transforms import vjp_with_ints

__all__ = ["linear_transpose"]


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

