"""Writing your own primitives: wrap a backend function, then register its rules.

Example:
  from fnad.extend import primitive, defvjp, defjvp
  import fnad.numpy as fnp

  def _softsign(x):                       # runs on plain NumPy/CuPy arrays
      return x / (1 + abs(x))
  softsign = primitive(_softsign)
  defvjp(softsign, lambda g, ans, x: g / (1 + fnp.abs(x)) ** 2)
  defjvp(softsign, lambda t, ans, x: t / (1 + fnp.abs(x)) ** 2)

A VJP rule `rule(g, ans, *args, **kwargs)` returns the cotangent of one argument;
a JVP rule `rule(t, ans, *args, **kwargs)` returns the tangent of the output
contributed by one argument's tangent `t`. An abstract evaluation
`rule(*avals_or_consts, **kwargs)` maps the ShapedArrays of the array arguments (other
arguments come as they are) to the result's ShapedArray, e.g.
`defabstract_eval(softsign, lambda x: x)`. Rules written with `fnad.numpy` are
themselves differentiable, so higher derivatives work.

Batching (fnad.vmap): `defbatch(fun, rule)` registers `rule(args, dims, **kwargs) ->
(out, out_dim)`; family helpers build rules: `elementwise_batch(prim)`, `axis_batch(prim)`
(reductions along `axis`), `stack_batch(prim)` (ops on stacks of matrices), `keep_batch(prim)`
(elementwise in the first argument only), with `to_front`, `batch_size`, `logical_ndim` and
`batch_fallback` (the loop over the batch) for writing your own.

Also exported for code above the core (fnad_nn, fnad_optim, your own primitives):
`array_module` (numpy or cupy, by the arrays given), `unbroadcast`, `shape`, `ndim`,
`dtype_of`, `norm_axes`, and `PRIMITIVES` (every primitive created).
"""

from ._core.abstract import AbstractEvalError as AbstractEvalError
from ._core.abstract import ShapedArray as ShapedArray
from ._core.abstract import abstract_eval as abstract_eval
from ._core.abstract import aval_of as aval_of
from ._core.abstract import data_dependent_rule as data_dependent_rule
from ._core.abstract import dtype_rule as dtype_rule
from ._core.abstract import elementwise_rule as elementwise_rule
from ._core.abstract import reduction_rule as reduction_rule
from ._core.abstract import same_rule as same_rule
from ._core.abstract import standin_rule as standin_rule
from ._core.backend import array_module as array_module
from ._batching.families import axis_batch as axis_batch
from ._batching.families import batch_size as batch_size
from ._batching.families import elementwise_batch as elementwise_batch
from ._batching.families import keep_batch as keep_batch
from ._batching.families import logical_ndim as logical_ndim
from ._batching.families import stack_batch as stack_batch
from ._batching.families import to_front as to_front
from ._batching.trace import batch_fallback as batch_fallback
from ._core.shapes import dtype_of as dtype_of
from ._core.shapes import ndim as ndim
from ._core.shapes import norm_axes as norm_axes
from ._core.shapes import shape as shape
from ._core.shapes import unbroadcast as unbroadcast
from ._core.tracer import PRIMITIVE_OF, PRIMITIVES, Primitive, Tracer, getval, primitive

__all__ = ["Primitive", "Tracer", "primitive", "defvjp", "defjvp", "defjvp_linear",
           "defvjp_all", "defvjp_multi", "getval", "as_primitive", "array_module",
           "unbroadcast", "shape", "ndim", "dtype_of", "norm_axes", "PRIMITIVES",
           "defabstract_eval", "ShapedArray", "aval_of", "abstract_eval", "AbstractEvalError",
           "data_dependent_rule", "dtype_rule", "elementwise_rule", "reduction_rule", "same_rule",
           "standin_rule", "defbatch", "elementwise_batch", "axis_batch", "stack_batch",
           "keep_batch", "batch_size", "to_front", "logical_ndim", "batch_fallback"]


def as_primitive(fun_or_prim):
    """The `Primitive` behind a function made by `primitive` (or the primitive itself)."""
    if isinstance(fun_or_prim, Primitive):
        return fun_or_prim
    prim = getattr(fun_or_prim, "primitive", None) or PRIMITIVE_OF.get(fun_or_prim)
    if prim is None:
        raise TypeError(f"{fun_or_prim!r} is not a primitive; wrap it with "
                        "fnad.extend.primitive first.")
    return prim


def defvjp(fun, *rules, argnums=None):
    """Register VJP rules, one per positional argument (None to leave one out).

    Example:
      defvjp(mul, lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x)
    """
    prim = as_primitive(fun)
    for i, rule in zip(range(len(rules)) if argnums is None else argnums, rules):
        if rule is not None:
            prim.vjps[i] = rule


def defjvp(fun, *rules, argnums=None):
    """Register JVP rules, one per positional argument (None to leave one out)."""
    prim = as_primitive(fun)
    for i, rule in zip(range(len(rules)) if argnums is None else argnums, rules):
        if rule is not None:
            prim.jvps[i] = rule


def defjvp_linear(fun, argnums=(0,)):
    """Declare `fun` linear (and zero at zero) in each argument of `argnums` separately.

    Its JVP in that argument is `fun` applied with the tangent in the argument's place,
    as for multiply, matmul, sum, reshape or indexing.
    """
    prim = as_primitive(fun)
    f = prim.fun or prim.bind
    for i in argnums:
        def rule(t, ans, *args, _i=i, **kwargs):
            args = list(args)
            args[_i] = t
            return f(*args, **kwargs)
        prim.jvps[i] = rule


def defvjp_all(fun, rule):
    """Register one VJP rule `rule(g, ans, *args, **kwargs)` returning a tuple with the
    cotangent of every positional argument (None where there is none).

    The backward pass calls it once per call of `fun`, whichever arguments are traced, and
    prefers it to per-argument rules. Use it where the cotangents share work.

    Example:
      defvjp_all(mul, lambda g, ans, x, y: (g * y, g * x))
    """
    as_primitive(fun).vjp_all = rule


def defvjp_multi(fun, rule, nargs=None):
    """`defvjp_all` under its older name (`nargs` is no longer needed)."""
    defvjp_all(fun, rule)


def defbatch(fun, rule):
    """Register the batching rule of `fun` for fnad.vmap.

    `rule(args, dims, **kwargs)` receives the argument values (batched ones carry an extra
    axis) and `dims`, each argument's batch axis (None where it is not batched); it returns
    `(out, out_dim)` (a tuple of dims for a multiple-result primitive). Write it with
    `fnad.numpy`, since the values may be tracers of other transforms.

    Example:
      defbatch(softsign, lambda args, dims: (softsign(args[0]), dims[0]))
    """
    as_primitive(fun).batch = rule


def defabstract_eval(fun, rule):
    """Register the abstract evaluation of `fun`: shapes and dtypes in, shape and dtype out.

    `rule(*avals_or_consts, **kwargs)` receives a `ShapedArray` for each array argument (and
    lists of them for list arguments) and every other argument as it is; it returns the
    result's `ShapedArray` (a tuple of them for a multiple-result primitive).

    Example:
      defabstract_eval(softsign, lambda x: x)
    """
    as_primitive(fun).abstract_eval = rule
