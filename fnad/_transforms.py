"""The differentiation transforms: vjp, grad, value_and_grad, jvp, custom_vjp, checkpoint."""

import functools

import numpy as np

from ._autodiff import (CustomNode, JVPTrace, JVPTracer, RevTrace, RevTracer, backward,
                        tracers_of, zeros_like_value)
from ._backend import array_module, is_array
from ._abstract import same_rule
from ._tracer import Tracer, getval, primitive
from ._tree import tree_flatten, tree_unflatten

__all__ = ["vjp", "grad", "value_and_grad", "jvp", "custom_vjp", "checkpoint",
           "stop_gradient"]


def _as_input(x, fname, what, i=None):
    if type(x) is np.ndarray or isinstance(x, Tracer) or is_array(x):
        return x
    if isinstance(x, (bool, int, float, complex)):
        return np.asarray(x)
    what = what if i is None else f"{what} {i}"
    raise TypeError(f"{fname}: {what} has type {type(x).__name__}, which is not an array, a "
                    "Python scalar or a pytree of them; convert it with fnad.numpy.asarray.")


def _is_float(x):
    return getval(x).dtype.kind in "fc"


def _unbox_own(x, trace):
    if isinstance(x, Tracer) and x._trace is trace:
        return x.value
    return x


def _shape_dtype(x):
    v = getval(x)
    if not hasattr(v, "dtype"):  # a Python scalar
        v = np.asarray(v)
    return tuple(v.shape), v.dtype


def vjp(fun, *primals, has_aux=False):
    """Evaluate `fun(*primals)` and return its value and a function pulling cotangents back.

    Args:
      fun: a function of arrays (pytrees of arrays) returning a pytree of arrays.
      *primals: the point at which to linearise.
      has_aux: if True, `fun` returns `(out, aux)` and aux is returned third.

    Returns:
      `(out, vjp_fun)` or `(out, vjp_fun, aux)`; `vjp_fun(ct)` returns a tuple with one
      cotangent per primal, each shaped like its primal.

    Example:
      y, f_vjp = fnad.vjp(fnp.sin, x)
      (x_bar,) = f_vjp(fnp.ones_like(y))
    """
    return _vjp(fun, primals, has_aux)


def _vjp(fun, primals, has_aux, argnums=None, once=False):
    """vjp; with `argnums` (the argument number of each primal) it is grad's and refuses
    non-float inputs, naming the argument. With `once`, the returned function may be called
    only once: its backward pass frees the forward values as it goes."""
    flat, in_tree = tree_flatten(primals)
    trace = RevTrace()
    boxed = []
    for i, x in enumerate(flat):
        x = flat[i] = _as_input(x, "vjp", "primal leaf", i)
        if getval(x).dtype.kind in "fc":
            x = trace.new_input(x)
        elif argnums is not None:
            _refuse_leaf(flat, in_tree, argnums, i)
        boxed.append(x)
    out = fun(*tree_unflatten(in_tree, boxed))
    aux = None
    if has_aux:
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError("vjp(..., has_aux=True): the function must return a pair (out, aux); "
                            f"it returned {type(out).__name__}.")
        out, aux = out
        aux_flat, aux_tree = tree_flatten(aux)
        aux = tree_unflatten(aux_tree, [_unbox_own(a, trace) for a in aux_flat])
    out_flat, out_tree = tree_flatten(out)
    out_vals = [_unbox_own(o, trace) for o in out_flat]
    out_specs = [_shape_dtype(o) for o in out_vals]

    def vjp_fun(ct):
        ct_flat, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise ValueError("vjp function: the cotangent's structure differs from the output's:"
                             f"\n  output:    {out_tree}\n  cotangent: {ct_tree}")
        seeds = []
        for k, (o, c, spec) in enumerate(zip(out_flat, ct_flat, out_specs)):
            c = _checked_ct(k, c, spec)
            if isinstance(o, RevTracer) and o._trace is trace:
                seeds.append((o._idx, c))
        grads = backward(trace.tape, seeds, consume=once)
        res = []
        for x, b in zip(flat, boxed):
            g = None if b is x else grads[b._idx]
            if g is None:
                g = zeros_like_value(x)
            else:
                gv, xv = getval(g), getval(x)
                if gv.dtype != xv.dtype or gv.shape != xv.shape:
                    g = _fix_ct(g, x)
            res.append(g)
        return tuple(tree_unflatten(in_tree, res))

    out_primal = tree_unflatten(out_tree, out_vals)
    return (out_primal, vjp_fun, aux) if has_aux else (out_primal, vjp_fun)


def _checked_ct(k, c, spec):
    """Cotangent `k`, checked against its output's (shape, dtype); a Python scalar for a
    0-d output becomes an array."""
    shape, dtype = spec
    c_shape, c_dtype = _shape_dtype(c)
    if c_shape != shape:
        raise ValueError(f"vjp function: cotangent {k} has shape {c_shape} but the output "
                         f"has shape {shape}; pass a cotangent shaped like the output.")
    if c_dtype != dtype and not (isinstance(c, (int, float)) and shape == ()):
        raise ValueError(f"vjp function: cotangent {k} has dtype {c_dtype} but the output "
                         f"has dtype {dtype}; cast it with .astype({dtype}).")
    if isinstance(c, (int, float)):
        c = np.asarray(c, dtype=dtype)
    return c


def _fix_ct(g, x):
    v = getval(x)
    if getval(g).shape != v.shape:
        g = g + zeros_like_value(v)  # a rule returned a broadcastable cotangent
        if getval(g).shape != v.shape:
            raise ValueError(f"internal: cotangent of shape {getval(g).shape} for an input of "
                             f"shape {v.shape}")
    if getval(g).dtype != v.dtype:
        g = g.astype(v.dtype)
    return g


def _argnums_tuple(argnums, nargs, fname):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not isinstance(a, int) or not -nargs <= a < nargs:
            raise ValueError(f"{fname}: argnums={argnums!r} is out of range for a call with "
                             f"{nargs} positional arguments.")
    return tuple(a % nargs for a in nums)


def _refuse_leaf(flat, in_tree, argnums, i):
    """grad's error for the non-float leaf `i`, naming its argument."""
    k = 0
    for n, child in zip(argnums, in_tree.children):
        k += child.num_leaves
        if i < k:
            raise TypeError(f"grad requires real- or complex-valued inputs, but argument "
                            f"{n} has dtype {getval(flat[i]).dtype}; pass floats, e.g. "
                            "x.astype(float), or leave it out of argnums.")


def value_and_grad(fun, argnums=0, has_aux=False):
    """Return a function computing `fun`'s value and its gradient.

    Args:
      fun: returns a scalar float (or `(scalar, aux)` with has_aux).
      argnums: int or tuple of ints: which positional arguments to differentiate.
      has_aux: whether `fun` returns auxiliary data as a second output.

    Returns:
      A function returning `(value, grad)` or `((value, aux), grad)`; grad has the pytree
      structure of the chosen argument (a tuple of them when argnums is a tuple).

    Example:
      loss, g = fnad.value_and_grad(loss_fn)(params, batch)
    """
    name = getattr(fun, "__name__", "function")

    @functools.wraps(fun)
    def value_and_grad_fun(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "grad")

        def partial(*dyn):
            full = list(args)
            for n, d in zip(nums, dyn):
                full[n] = d
            return fun(*full, **kwargs)

        res = _vjp(partial, tuple(args[n] for n in nums), has_aux, nums, once=True)
        out, f_vjp = res[0], res[1]
        if not (isinstance(out, (Tracer, float)) or is_array(out)):
            shape = None
        else:
            shape, dtype = _shape_dtype(out)
        if shape != ():
            raise TypeError(f"grad requires {name} to return a scalar, but it returned "
                            f"{_describe(out)}; use fnad.jacrev or fnad.vjp for non-scalar "
                            "outputs.")
        if np.dtype(dtype).kind not in "fc":
            raise TypeError(f"grad requires {name} to return a float scalar, but it returned "
                            f"dtype {dtype}; cast the output to a float dtype.")
        xp = array_module(getval(out))
        g = f_vjp(xp.ones((), dtype=dtype))
        g = g[0] if isinstance(argnums, int) else g
        return ((out, res[2]), g) if has_aux else (out, g)

    return value_and_grad_fun


def _describe(x):
    if isinstance(x, (tuple, list, dict)):
        return f"a {type(x).__name__} (a pytree)"
    shape, dtype = _shape_dtype(x)
    return f"an array of shape {shape} and dtype {dtype}"


def grad(fun, argnums=0, has_aux=False):
    """Return a function computing the gradient of scalar-valued `fun`.

    Example:
      dfdx = fnad.grad(lambda x: fnp.sum(fnp.tanh(x) ** 2))
      dfdx(fnp.ones(3))
    """
    vg = value_and_grad(fun, argnums, has_aux)

    @functools.wraps(fun)
    def grad_fun(*args, **kwargs):
        res = vg(*args, **kwargs)
        if has_aux:
            (_, aux), g = res
            return g, aux
        return res[1]

    return grad_fun


def jvp(fun, primals, tangents):
    """Forward-mode derivative: `(fun(*primals), J @ tangents)`.

    Args:
      fun: a function of arrays (pytrees) returning a pytree of arrays.
      primals, tangents: tuples (or lists) of equal structure, shapes and dtypes.

    Example:
      y, y_dot = fnad.jvp(fnp.sin, (x,), (fnp.ones_like(x),))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples, e.g. jvp(f, (x,), (t,)); got "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    p_flat, p_tree = tree_flatten(tuple(primals))
    t_flat, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise ValueError(f"jvp: primals and tangents differ in structure:\n  primals:  {p_tree}"
                         f"\n  tangents: {t_tree}")
    trace = JVPTrace()
    boxed = []
    for i, (p, t) in enumerate(zip(p_flat, t_flat)):
        p = _as_input(p, "jvp", "primal leaf", i)
        t = _as_input(t, "jvp", "tangent leaf", i)
        if _shape_dtype(p)[0] != _shape_dtype(t)[0]:
            raise ValueError(f"jvp: primal {i} has shape {_shape_dtype(p)[0]} but its tangent has "
                             f"shape {_shape_dtype(t)[0]}.")
        boxed.append(JVPTracer(p, t, trace) if _is_float(p) else p)
    out = fun(*tree_unflatten(p_tree, boxed))
    out_flat, out_tree = tree_flatten(out)
    prim_out, tan_out = [], []
    for o in out_flat:
        if isinstance(o, JVPTracer) and o._trace is trace:
            prim_out.append(o._value)
            tan_out.append(o._tangent if o._tangent is not None else zeros_like_value(o._value))
        else:
            prim_out.append(o)
            tan_out.append(zeros_like_value(o))
    return tree_unflatten(out_tree, prim_out), tree_unflatten(out_tree, tan_out)


stop_gradient_p = primitive(lambda x: x, "stop_gradient", nondiff=True)
stop_gradient_p.primitive.abstract_eval = same_rule


def stop_gradient(x):
    """Return `x` (any pytree) with no derivative at any level of tracing."""
    if isinstance(x, Tracer):  # a single traced array, the common case
        return stop_gradient_p(x)
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [stop_gradient_p(v) if isinstance(v, Tracer) else v
                                 for v in leaves])


class custom_vjp:
    """A function with a hand-written VJP (JAX semantics).

    Example:
      @fnad.custom_vjp
      def f(x): return fnp.sin(x)
      def f_fwd(x): return fnp.sin(x), fnp.cos(x)
      def f_bwd(cos_x, g): return (g * cos_x,)
      f.defvjp(f_fwd, f_bwd)

    `bwd(residuals, g)` returns a tuple with one cotangent per positional argument
    (None for zero). Under forward mode, `fun` itself is differentiated.
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.fwd = None
        self.bwd = None
        self.nondiff_argnums = tuple(nondiff_argnums)

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args):
        if self.fwd is None:
            raise TypeError(f"custom_vjp function {self.__name__} has no rule yet; call "
                            f"{self.__name__}.defvjp(fwd, bwd) before using it.")
        flat, in_tree = tree_flatten(args)
        top = tracers_of(flat)
        if not isinstance(top, RevTrace):
            return self.fun(*args)
        nargs = len(args)
        fwd, bwd, name = self.fwd, self.bwd, self.__name__

        def run_fwd(vals_tree):
            out, res = fwd(*vals_tree)
            return out, res

        def to_cts(res, out_tree, g):
            cts = bwd(res, tree_unflatten(out_tree, list(g)))
            if not isinstance(cts, (tuple, list)) or len(cts) != nargs:
                raise TypeError(f"custom_vjp {name}: bwd must return a tuple with one cotangent "
                                f"per argument ({nargs}), got {type(cts).__name__}.")
            return cts

        return _record_custom(top, flat, in_tree, run_fwd, to_cts, name)


def _record_custom(trace, flat, in_tree, run_fwd, to_cts, name):
    """Record one tape node for a whole function with its own VJP."""
    vals = [_unbox_own(x, trace) for x in flat]
    parents = [(i, x._idx) for i, x in enumerate(flat)
               if isinstance(x, RevTracer) and x._trace is trace]
    out, res = run_fwd(tree_unflatten(in_tree, vals))
    out_flat, out_tree = tree_flatten(out)

    def vjp_all(g):
        cts = to_cts(res, out_tree, g)
        ct_flat = _flatten_cts(cts, in_tree, vals)
        return ct_flat

    node = CustomNode(name, vjp_all)
    outs = trace.record(node, tuple(out_flat), vals, {}, parents)
    return tree_unflatten(out_tree, list(outs))


def _flatten_cts(cts, in_tree, vals):
    ct_flat, _ = tree_flatten(tuple(cts), is_leaf=lambda c: c is None)
    if len(ct_flat) != len(vals):  # a None standing for a whole subtree
        ct_flat = []
        for arg_ct, arg_def in zip(cts, in_tree.children):
            if arg_ct is None:
                ct_flat.extend([None] * arg_def.num_leaves)
            else:
                ct_flat.extend(tree_flatten(arg_ct)[0])
    return [zeros_like_value(v) if c is None else c for c, v in zip(ct_flat, vals)]


def checkpoint(fun):
    """Rematerialise `fun`'s intermediates in the backward pass instead of storing them.

    The forward pass keeps only `fun`'s inputs; the backward pass reruns `fun` under
    `vjp`. Use it around blocks whose activations dominate memory.

    Example:
      block = fnad.checkpoint(transformer_block)
    """

    @functools.wraps(fun)
    def checkpointed(*args):
        flat, in_tree = tree_flatten(args)
        top = tracers_of(flat)
        if not isinstance(top, RevTrace):
            return fun(*args)

        def run_fwd(vals_tree):
            return fun(*vals_tree), vals_tree

        def to_cts(vals_tree, out_tree, g):
            _, f_vjp = vjp(fun, *vals_tree)
            return f_vjp(tree_unflatten(out_tree, list(g)))

        return _record_custom(top, flat, in_tree, run_fwd, to_cts, f"checkpoint({fun.__name__})")

    return checkpointed

