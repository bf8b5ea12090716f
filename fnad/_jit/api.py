"""JAX's names for looking at a function without running it, `eval_shape` (the shapes and
dtypes of its results) and `make_jaxpr` (its program, printed), which stage the function on
abstract values as jit does and run nothing; and `linearize`, whose linear map is a staged
program of the tangent computations alone."""

import functools

from .._core.abstract import ShapeDtypeStruct, aval_of
from .._core.tree import tree_flatten, tree_unflatten
from .._graph.ir import Var
from .._ad.transforms import jvp
from .._core.tracer import require_callable
from .jit import jit
from .staging import ConcretizationError, make_graph, trace_to_graph

__all__ = ["eval_shape", "make_jaxpr", "linearize"]


def _abstract_leaf(x, fname, i):
    """A leaf of `fname`'s arguments as an abstract value: arrays, Python scalars and
    ShapeDtypeStructs (anything with a `shape` and a `dtype`, as JAX takes)."""
    try:
        return aval_of(x)
    except TypeError:
        if hasattr(x, "shape") and hasattr(x, "dtype"):
            return aval_of(ShapeDtypeStruct(x.shape, x.dtype))
        raise TypeError(f"{fname}: argument leaf {i} is a {type(x).__name__}, which is not an "
                        "array, a Python scalar or a fnad.ShapeDtypeStruct; close over it "
                        "(functools.partial) if it is a Python value.") from None


def _struct(a):
    return ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes of `fun(*args, **kwargs)`, computed without running it.

    Args:
      fun: a function of arrays (pytrees of arrays).
      *args, **kwargs: arrays, Python scalars or `fnad.ShapeDtypeStruct`s (pytrees of
        them): only their shapes and dtypes are used.

    Returns:
      The pytree of `fun`'s result with a `ShapeDtypeStruct` at each leaf.

    Example:
      out = fnad.eval_shape(model, params, fnad.ShapeDtypeStruct((64, 784), "float32"))
      out.shape                                   # (64, 10), nothing computed
    """
    flat, in_tree = tree_flatten((args, kwargs))
    avals = [_abstract_leaf(x, "eval_shape", i) for i, x in enumerate(flat)]
    graph = trace_to_graph(fun, avals, in_tree, "eval_shape")
    outs = [_struct(v.aval if type(v) is Var else aval_of(v)) for v in graph.outvars]
    return tree_unflatten(graph.out_tree, outs)


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False,
               abstracted_axes=None):
    """JAX's `make_jaxpr`: a function that stages `fun` at its arguments' shapes and dtypes
    and returns the program, which prints one primitive application a line.

    The program is a `Graph` (as `fnad.make_graph` gives); `.jaxpr` is the graph itself,
    `.in_avals` and `.out_avals` its inputs' and outputs' abstract values, and `.eqns` its
    equations. The primitives are fnad's (fnad.numpy's names), not JAX's.

    Args:
      fun: the function to stage.
      static_argnums: positional arguments that are Python values, used as they are.
      axis_env, abstracted_axes: JAX's; only None is supported.
      return_shape: also return the result's `ShapeDtypeStruct`s, as `(graph, shapes)`.

    Example:
      print(fnad.make_jaxpr(lambda x: fnp.sin(x) * 2)(1.0))
      # { lambda ; a:~float64[] . let  b:float64[] = sin a  c:float64[] = multiply b 2 ...
    """
    if axis_env is not None or abstracted_axes is not None:
        raise NotImplementedError("make_jaxpr: axis_env and abstracted_axes are not supported "
                                  "by fnad; stage a vmap(..., axis_name=...) of the function "
                                  "instead of naming axes in axis_env.")
    make = make_graph(fun, static_argnums)

    @functools.wraps(fun)
    def jaxpr_maker(*args, **kwargs):
        graph = make(*args, **kwargs)
        if not return_shape:
            return graph
        outs = [_struct(a) for a in graph.out_avals]
        return graph, tree_unflatten(graph.out_tree, outs)

    return jaxpr_maker



def linearize(fun, *primals, has_aux=False):
    """`fun`'s value at `primals` and its linear map (JAX's `jax.linearize`).

    Returns `(out, f_jvp)` (and `aux` third with has_aux=True): `f_jvp(*tangents)` is
    `jvp(fun, primals, tangents)[1]`, the Jacobian of `fun` at `primals` applied to the
    tangents. The map is traced once (per tangent shape) with the primals fixed: their part
    of the computation runs while tracing, so `f_jvp` runs only the tangent operations, as
    JAX keeps only the linear part. (A jvp rule that needs the tangents' values makes each
    call a whole jvp instead.)

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
    staged = jit(lambda *tangents: jvp(call, primals, tangents)[1])

    def f_jvp(*tangents):
        t_tree = tree_flatten(tangents)[1]
        if t_tree != p_tree:
            raise ValueError("linearize: the tangents' structure differs from the primals':\n"
                             f"  primals:  {p_tree}\n  tangents: {t_tree}")
        try:
            return staged(*tangents)
        except ConcretizationError:
            return jvp(call, primals, tangents)[1]

    return (out, f_jvp, aux) if has_aux else (out, f_jvp)
