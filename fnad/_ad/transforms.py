"""The differentiation transforms: vjp, grad, value_and_grad, jvp, custom_vjp, checkpoint."""

import functools

import numpy as np

from .reverse import (CustomNode, JVPTrace, JVPTracer, RevTrace, RevTracer, backward, tracers_of,
                      zeros_like_value)
from .._core.backend import array_module, is_array
from .._core.abstract import aval_of, same_rule
from .._core.tracer import Primitive, Tracer, bind_traced, finish_trace, getval, primitive
from .._core.tree import tree_flatten, tree_unflatten

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


def _is_value(x):
    """An array, a tracer or a Python number (what transforms can take as an input)."""
    return (type(x) is np.ndarray or isinstance(x, (Tracer, bool, int, float, complex))
            or is_array(x))


def _unbox_own(x, trace):
    if isinstance(x, Tracer) and x._trace is trace:
        return x.value
    return x


def _shape_dtype(x):
    if isinstance(x, Tracer):  # its own shape (a batched value's has no batch axis)
        return tuple(x.shape), x.dtype
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


def _vjp(fun, primals, has_aux, argnums=None, once=False, name="vjp"):
    """vjp; with `argnums` (the argument number of each primal) it is grad's and refuses
    non-float inputs, naming the argument. With `once`, the returned function may be called
    only once: its backward pass frees the forward values as it goes. `name` is the
    transform that tracers escaping `fun` are said to come from."""
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
    try:
        out = fun(*tree_unflatten(in_tree, boxed))
    finally:
        finish_trace(trace, name)
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
                if _shape_dtype(g) != _shape_dtype(x):
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
    x_shape, x_dtype = _shape_dtype(x)
    if _shape_dtype(g)[0] != x_shape:
        g = g + zeros_like_value(x)  # a rule returned a broadcastable cotangent
        if _shape_dtype(g)[0] != x_shape:
            raise ValueError(f"internal: cotangent of shape {_shape_dtype(g)[0]} for an input "
                             f"of shape {x_shape}")
    if _shape_dtype(g)[1] != x_dtype:
        g = g.astype(x_dtype)
    return g


def _argnums_tuple(argnums, nargs, fname):
    """`argnums` as a tuple of non-negative ints (duplicates kept, as given)."""
    if type(argnums) is int and 0 <= argnums < nargs:  # the common case
        return (argnums,)
    nums = (argnums,) if isinstance(argnums, (int, np.integer)) else argnums
    if not isinstance(nums, (tuple, list)):
        nums = (argnums,)
    out = []
    for a in nums:
        if not isinstance(a, (int, np.integer)):
            raise TypeError(f"{fname}: argnums must be an int or a tuple of ints, got "
                            f"{argnums!r} ({type(argnums).__name__}); e.g. argnums=0 or "
                            "argnums=(0, 1).")
        if not -nargs <= a < nargs:
            raise ValueError(f"{fname}: argnums={argnums!r} is out of range for a call with "
                             f"{nargs} positional arguments.")
        out.append(int(a) % nargs)
    return tuple(out)


def _spread(grads, uniq, nums):
    """Per-argument results `grads` for the distinct argnums `uniq`, laid out for `nums`
    (JAX: a repeated argnum gets the whole derivative for that argument each time)."""
    return grads if uniq == nums else tuple(grads[uniq.index(n)] for n in nums)


def _dyn_args(args, nums, fname):
    """The distinct argnums among `nums` and the arguments they choose, Python scalars made
    arrays (for jacrev/jacfwd, as grad does)."""
    uniq = nums if len(nums) == 1 else tuple(dict.fromkeys(nums))
    leaves, tree = tree_flatten(tuple(args[n] for n in uniq))
    return uniq, tree_unflatten(tree, [_as_input(x, fname, "argument leaf") for x in leaves])


def _layout(jac, argnums, uniq, nums):
    """Per-argument results for the distinct argnums `uniq`, as `argnums` asked for them."""
    return jac[0] if not isinstance(argnums, (tuple, list)) else _spread(jac, uniq, nums)


def _refuse_leaf(flat, in_tree, argnums, i):
    """grad's error for the non-float leaf `i`, naming its argument."""
    k = 0
    for n, child in zip(argnums, in_tree.children):
        k += child.num_leaves
        if i < k:
            raise TypeError(f"grad requires real- or complex-valued inputs, but argument "
                            f"{n} has dtype {getval(flat[i]).dtype}; pass floats, e.g. "
                            "x.astype(float), or leave it out of argnums.")


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False):
    """Return a function computing `fun`'s value and its gradient.

    Args:
      fun: returns a real scalar (or `(scalar, aux)` with has_aux); with holomorphic=True a
        complex scalar of complex inputs.
      argnums: int or tuple of ints: which positional arguments to differentiate.
      has_aux: whether `fun` returns auxiliary data as a second output.
      holomorphic: `fun` is holomorphic in complex inputs: the gradient is f'(z).

    Complex inputs follow JAX's convention: for a real `fun` of complex z = x + iy the
    gradient is df/dx - i df/dy (grad of |z|^2 is 2 conj(z)); step against its conjugate
    to descend.

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
        uniq = nums if len(nums) == 1 else tuple(dict.fromkeys(nums))

        def partial(*dyn):
            full = list(args)
            for n, d in zip(uniq, dyn):
                full[n] = d
            return fun(*full, **kwargs)

        dyn = tuple(args[n] for n in uniq)
        if holomorphic:
            _require_complex("grad", "inputs", dyn)
        res = _vjp(partial, dyn, has_aux, uniq, once=True, name="grad")
        out, f_vjp = res[0], res[1]
        if not (isinstance(out, (Tracer, float)) or is_array(out)):
            shape = None
        else:
            shape, dtype = _shape_dtype(out)
        if shape != ():
            raise TypeError(f"grad requires {name} to return a scalar, but it returned "
                            f"{_describe(out)}; use fnad.jacrev or fnad.vjp for non-scalar "
                            "outputs.")
        if holomorphic:
            _require_complex("grad", "outputs", (out,))
        elif np.dtype(dtype).kind != "f":
            hint = ("for holomorphic differentiation pass holomorphic=True; otherwise take "
                    "fnp.real or fnp.abs of it, or use fnad.vjp with a complex cotangent"
                    if np.dtype(dtype).kind == "c" else "cast the output to a float dtype")
            raise TypeError(f"grad requires real-valued outputs, but {name} returned dtype "
                            f"{dtype}; {hint}.")
        xp = array_module(getval(out))
        g = f_vjp(xp.ones((), dtype=dtype))
        g = _layout(g, argnums, uniq, nums)
        return ((out, res[2]), g) if has_aux else (out, g)

    return value_and_grad_fun


def _require_complex(fname, what, values):
    """holomorphic=True's check (JAX's): every leaf of `values` has a complex dtype."""
    for v in tree_flatten(values)[0]:
        dt = _shape_dtype(v)[1] if _is_value(v) else None
        if dt is None or dt.kind != "c":
            raise TypeError(f"{fname} with holomorphic=True requires {what} with complex dtype, "
                            f"but got {dt if dt is not None else type(v).__name__}; cast with "
                            ".astype(complex), or drop holomorphic=True for a real-valued "
                            "function.")


def _describe(x):
    if x is None:
        return "None"
    if isinstance(x, (tuple, list, dict)):
        return f"a {type(x).__name__} (a pytree)"
    if not (isinstance(x, (Tracer, bool, int, float, complex)) or is_array(x)):
        return f"a {type(x).__name__} ({x!r:.40})"
    shape, dtype = _shape_dtype(x)
    return f"an array of shape {shape} and dtype {dtype}"


def grad(fun, argnums=0, has_aux=False, holomorphic=False):
    """Return a function computing the gradient of scalar-valued `fun` (see value_and_grad
    for `holomorphic` and the convention for complex inputs).

    Example:
      dfdx = fnad.grad(lambda x: fnp.sum(fnp.tanh(x) ** 2))
      dfdx(fnp.ones(3))
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic)

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
        (p_shape, p_dtype), (t_shape, t_dtype) = _shape_dtype(p), _shape_dtype(t)
        if p_shape != t_shape:
            raise ValueError(f"jvp: primal {i} has shape {p_shape} but its tangent has "
                             f"shape {t_shape}.")
        if p_dtype.kind in "fc":
            if t_dtype != p_dtype:
                if not isinstance(t_flat[i], (int, float)) or t_dtype.kind not in "iuf":
                    raise TypeError(f"jvp: primal {i} has dtype {p_dtype} but its tangent has "
                                    f"dtype {t_dtype}; tangents must have their primal's dtype "
                                    f"(cast with .astype({p_dtype})).")
                t = t.astype(p_dtype)  # a Python scalar tangent takes the primal's dtype
            p = JVPTracer(p, t, trace)
        boxed.append(p)
    try:
        out = fun(*tree_unflatten(p_tree, boxed))
    finally:
        finish_trace(trace, "jvp")
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

    `fwd(*args)` returns `(out, residuals)`; `bwd(residuals, g)` returns a tuple with one
    cotangent per positional argument (None for zero), each shaped like its argument. With
    `nondiff_argnums` (JAX semantics), those arguments (Python values such as a function or
    a flag, not arrays to differentiate) get no cotangent: `fwd` still receives every
    argument, and `bwd(*nondiff_args, residuals, g)` returns cotangents for the others only.
    Forward mode (jvp, jacfwd, hessian) raises, as in JAX: use fnad.jacrev, or write the
    function without custom_vjp.
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.fwd = None
        self.bwd = None
        nums = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else nondiff_argnums
        self.nondiff_argnums = tuple(sorted(set(nums)))

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args):
        name = self.__name__
        if self.fwd is None:
            raise TypeError(f"custom_vjp function {name} has no rule yet; call "
                            f"{name}.defvjp(fwd, bwd) before using it.")
        nargs = len(args)
        nondiff = self.nondiff_argnums
        if nondiff and nondiff[-1] >= nargs:
            raise ValueError(f"custom_vjp {name}: nondiff_argnums={nondiff} but it was "
                             f"called with {nargs} positional arguments.")
        diff = [i for i in range(nargs) if i not in nondiff]
        flat, in_tree = tree_flatten(tuple(args[i] for i in diff))
        if nondiff:
            _refuse_traced_nondiff(name, args, nondiff)
        top = tracers_of(flat)
        if top is None:
            return self.fun(*args)
        _refuse_forward_mode(name, flat)
        if not isinstance(top, RevTrace):  # staged (jit): one primitive carrying the rule
            return _stage_custom(self, args, diff, flat, in_tree)
        fwd, bwd = self.fwd, self.bwd
        fixed = [args[i] for i in nondiff]

        def run_fwd(vals_tree):
            full = list(args)
            for i, v in zip(diff, vals_tree):
                full[i] = v
            out, res = fwd(*full)
            return out, res

        def to_cts(res, out_tree, g):
            cts = bwd(*fixed, res, tree_unflatten(out_tree, list(g)))
            if not isinstance(cts, (tuple, list)) or len(cts) != len(diff):
                what = "argument" if not nondiff else "argument not in nondiff_argnums"
                raise TypeError(f"custom_vjp {name}: bwd must return a tuple with one cotangent "
                                f"per {what} ({len(diff)}), got {_describe_cts(cts)}.")
            return cts

        return _record_custom(top, flat, in_tree, run_fwd, to_cts, name)


def _describe_cts(cts):
    if isinstance(cts, (tuple, list)):
        return f"a {type(cts).__name__} of {len(cts)}"
    return _describe(cts)


def _refuse_traced_nondiff(name, args, nondiff):
    for i in nondiff:
        if any(isinstance(x, Tracer) for x in tree_flatten(args[i])[0]):
            raise TypeError(f"custom_vjp {name}: argument {i} is in nondiff_argnums but holds a "
                            "traced value; nondiff_argnums are for Python values (functions, "
                            "flags, sizes). Pass arrays as ordinary arguments (bwd may return "
                            "None for them).")


def _refuse_forward_mode(name, flat):
    """custom_vjp defines only a VJP: forward mode at any level is refused, as in JAX."""
    for x in flat:
        while isinstance(x, Tracer):
            if isinstance(x, JVPTracer):
                raise TypeError(f"can't apply forward-mode autodiff (jvp, jacfwd, hessian) to "
                                f"the custom_vjp function {name}: it defines only a VJP. Use "
                                "reverse mode (grad, vjp, jacrev; jacrev(jacrev(f)) for a "
                                "Hessian), or call a version of the function without custom_vjp.")
            v = x.value
            if v is x:  # a staged value (jit): nothing below it
                break
            x = v


def _stage_custom(cv, args, diff, flat, in_tree):
    """A custom_vjp call inside jit: one primitive in the graph whose implementation is the
    function and whose VJP reruns `fwd` for the residuals, then `bwd`; so grad of the staged
    program, in either order, uses the custom rule."""
    from .._graph.ir import Var  # noqa: PLC0415 - staging builds on this module
    from .._jit.staging import trace_to_graph  # noqa: PLC0415

    name, fixed = cv.__name__, [args[i] for i in cv.nondiff_argnums]

    def full(vals):
        out = list(args)
        for i, v in zip(diff, tree_unflatten(in_tree, list(vals))):
            out[i] = v
        return out

    def impl(*vals):
        return tuple(tree_flatten(cv.fun(*full(vals)))[0])

    def vjp_all(g, ans, *vals):
        out, res = cv.fwd(*full(vals))
        cts = cv.bwd(*fixed, res, tree_unflatten(tree_flatten(out)[1], list(g)))
        if not isinstance(cts, (tuple, list)) or len(cts) != len(diff):
            raise TypeError(f"custom_vjp {name}: bwd must return a tuple with one cotangent "
                            f"per differentiable argument ({len(diff)}), got "
                            f"{_describe_cts(cts)}.")
        return tuple(_flatten_cts(cts, in_tree, list(vals), name))

    flat_tree = tree_flatten((tuple(flat), {}))[1]
    graph = trace_to_graph(lambda *vals: cv.fun(*full(vals)), [aval_of(x) for x in flat],
                           flat_tree, "jit")  # for the outputs' structure, shapes and dtypes
    out_avals = tuple(aval_of(v) if type(v) is not Var else v.aval for v in graph.outvars)
    prim = Primitive(f"custom_vjp[{name}]", impl, multiple_results=True)
    prim.vjp_all = vjp_all
    prim.abstract_eval = lambda *avals: out_avals
    outs = bind_traced(prim, tuple(flat), {})
    return tree_unflatten(graph.out_tree, list(outs))


def _record_custom(trace, flat, in_tree, run_fwd, to_cts, name):
    """Record one tape node for a whole function with its own VJP."""
    vals = [_unbox_own(x, trace) for x in flat]
    parents = [(i, x._idx) for i, x in enumerate(flat)
               if isinstance(x, RevTracer) and x._trace is trace]
    out, res = run_fwd(tree_unflatten(in_tree, vals))
    out_flat, out_tree = tree_flatten(out)

    def vjp_all(g):
        return _flatten_cts(to_cts(res, out_tree, g), in_tree, vals, name)

    node = CustomNode(name, vjp_all)
    outs = trace.record(node, tuple(out_flat), vals, {}, parents)
    return tree_unflatten(out_tree, list(outs))


def _flatten_cts(cts, in_tree, vals, name):
    """The cotangents `cts` (one pytree or None per argument) as a list of leaves, checked
    against the inputs' structure and shapes."""
    ct_flat, _ = tree_flatten(tuple(cts), is_leaf=lambda c: c is None)
    if len(ct_flat) != len(vals):  # a None standing for a whole subtree
        ct_flat = []
        for k, (arg_ct, arg_def) in enumerate(zip(cts, in_tree.children)):
            if arg_ct is None:
                ct_flat.extend([None] * arg_def.num_leaves)
                continue
            leaves, ct_def = tree_flatten(arg_ct, is_leaf=lambda c: c is None)
            if len(leaves) != arg_def.num_leaves:
                raise ValueError(f"custom_vjp {name}: bwd's cotangent {k} has structure "
                                 f"{ct_def} but the argument has structure {arg_def}.")
            ct_flat.extend(leaves)
    out = []
    for i, (c, v) in enumerate(zip(ct_flat, vals)):
        if c is None:
            out.append(zeros_like_value(v))
            continue
        c_shape, v_shape = _shape_dtype(c)[0], _shape_dtype(v)[0]
        if c_shape != v_shape:
            raise ValueError(f"custom_vjp {name}: bwd returned a cotangent of shape {c_shape} "
                             f"for input leaf {i} of shape {v_shape}; each cotangent must have "
                             "its input's shape (broadcastable is not enough).")
        out.append(c)
    return out


def checkpoint(fun):
    """Rematerialise `fun`'s intermediates in the backward pass instead of storing them.

    The forward pass keeps only `fun`'s inputs; the backward pass reruns `fun` under
    `vjp`. Use it around blocks whose activations dominate memory.

    Example:
      block = fnad.checkpoint(transformer_block)
    """

    name = f"checkpoint({getattr(fun, '__name__', 'function')})"

    def call(args, kwargs):
        return fun(*args, **kwargs)

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        flat, in_tree = tree_flatten((args, kwargs))  # keyword arguments are traced too
        top = tracers_of(flat)
        if not isinstance(top, RevTrace):
            return fun(*args, **kwargs)

        def run_fwd(vals_tree):
            return call(*vals_tree), vals_tree

        def to_cts(vals_tree, out_tree, g):
            # rerun `fun` under vjp; leaves that are not arrays (strings, flags given as
            # keyword arguments) stay fixed and get no cotangent
            leaves, tree = tree_flatten(vals_tree)
            keep = [i for i, v in enumerate(leaves) if _is_value(v)]

            def f(*dyn):
                full = list(leaves)
                for i, d in zip(keep, dyn):
                    full[i] = d
                return call(*tree_unflatten(tree, full))

            _, f_vjp = _vjp(f, tuple(leaves[i] for i in keep), False, name=name)
            cts = [None] * len(leaves)
            for i, c in zip(keep, f_vjp(tree_unflatten(out_tree, list(g)))):
                cts[i] = c
            return tree_unflatten(tree, cts)

        return _record_custom(top, flat, in_tree, run_fwd, to_cts, name)

    return checkpointed

