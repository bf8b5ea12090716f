"""Registering a primitive's rules: each `def*` fills one slot of the `Primitive` behind a
function made by `primitive` (fnad/_core/tracer.py). `fnad.extend` exports them."""

from .tracer import PRIMITIVE_OF, Primitive

__all__ = ["as_primitive", "defvjp", "defjvp", "defjvp_linear", "defvjp_all", "defjvp_all",
           "defbatch", "defabstract_eval"]


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


def defjvp_all(fun, rule):
    """Register one JVP rule `rule(tangents, ans, *args, **kwargs)` for every argument at once:
    `tangents` has one entry per positional argument (None where it is not traced); the rule
    returns the output tangent (a tuple, None for a zero, for a multiple-result primitive).

    Forward mode prefers it to per-argument rules. Use it where the tangents share work, e.g.
    a linear operation over many arrays applied to all their tangents in one call.

    Example:
      defjvp_all(mul, lambda ts, ans, x, y: (0 if ts[0] is None else ts[0] * y)
                                            + (0 if ts[1] is None else x * ts[1]))
    """
    as_primitive(fun).jvp_all = rule


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
