"""The differentiation transforms: vjp, grad, value_and_grad, jvp, stop_gradient."""

import functools
import inspect

import numpy as np

from .._core.abstract import same_rule
from .._core.backend import array_module, is_array
from .._core.rules import defbatch
from .._core.tracer import Tracer, getval, primitive, require_callable
from .._core.tree import leaf_path, tree_flatten, tree_unflatten
from .forward import trace_forward, unbox_forward
from .reverse import pull_back, tape_bytes, tape_residuals, trace_reverse
from .values import fit_cotangent, shape_dtype, zeros_like_value

__all__ = ["vjp", "grad", "value_and_grad", "jvp", "stop_gradient", "argnums_tuple",
           "dyn_args", "layout", "require_complex", "as_input", "describe", "vjp_with_ints",
           "jvp_with_ints"]


def as_input(x, fname, what, i=None, tree=None, argnums=None, fun=None):
    """`x`, a leaf of a transform's inputs, as an array (Python numbers become arrays);
    anything else is refused, naming its place: leaf `i` of `tree`, whose top-level entries
    are the arguments `argnums` (0, 1, ... if None) of `fun`."""
    if type(x) is np.ndarray or isinstance(x, Tracer) or is_array(x):
        return x
    if isinstance(x, (bool, int, float, complex)):
        return np.asarray(x)
    if tree is not None:
        raise _refused_leaf(x, fname, what, tree, i, argnums, fun)
    what = what if i is None else f"{what} {i}"
    raise TypeError(f"{fname}: {what} has type {type(x).__name__}, which is not an array, a "
                    "Python scalar or a pytree of them; convert it with fnad.numpy.asarray.")


def _param_name(fun, n):
    """The name of `fun`'s positional parameter `n`, or None."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return None
    if n < len(params) and params[n].kind in (params[n].POSITIONAL_ONLY,
                                               params[n].POSITIONAL_OR_KEYWORD):
        return params[n].name
    return None


def _refused_leaf(x, fname, what, tree, i, argnums, fun):
    """The TypeError for leaf `i` of `tree` that the transform cannot take, and what to do
    about it: a value that is not an array or a number (named by its pytree path, e.g.
    params['layer']['name']), or an array that is neither real nor complex (an integer or
    bool one has no derivative: every transform refuses it, where JAX's grad, jacrev and
    jacfwd refuse it and its vjp and jvp want float0 cotangents and tangents)."""
    keys = leaf_path(tree, i)
    j = int(keys[0][1:-1]) if keys and keys[0].startswith("[") else 0
    n = argnums[j] if argnums is not None else j
    name = _param_name(fun, n) if fun is not None else None
    path = (name or f"{what} {n}") + "".join(keys[1:])
    where = f"{path} (argument {n})" if name or keys[1:] else path
    if _is_value(x):
        if argnums is None:  # vjp and jvp: every primal is differentiated
            fix = ("close over it (functools.partial or a lambda) to hold it fixed")
        else:
            fix = "leave it out of argnums"
        return TypeError(f"{fname} requires real- or complex-valued inputs, but {where} has "
                         f"dtype {getval(x).dtype}, which has no derivative; pass floats, "
                         f"e.g. x.astype(float), or {fix}.")
    value = (f"{x!r:.40} ({type(x).__name__})" if isinstance(x, str)
             else f"a {type(x).__name__}")
    if fname in ("grad", "jacrev", "jacfwd"):
        fix = ("so it cannot be differentiated. Remove it from that pytree, or pass it as a "
               f"separate argument left out of argnums (fnad.{fname}(f, argnums=0)(params, "
               "name)) or closed over; under jit, mark that argument static with "
               "static_argnums")
    else:
        fix = (f"and {fname} takes arrays, Python numbers and pytrees of them. Close over it "
               "in the function instead, or convert it with fnad.numpy.asarray if it is "
               "numeric")
    return TypeError(f"{fname}: {where} is {value}, not an array or a Python number, "
                     f"{fix}.")


def _is_value(x):
    """An array, a tracer or a Python number (what transforms can take as an input)."""
    return (type(x) is np.ndarray or isinstance(x, (Tracer, bool, int, float, complex))
            or is_array(x))


def _unbox_own(x, trace):
    if isinstance(x, Tracer) and x._trace is trace:
        return x.value
    return x


def vjp(fun, *primals, has_aux=False):
    """Evaluate `fun(*primals)` and return its value and a function pulling cotangents back.

    Args:
      fun: a function of arrays (pytrees of arrays) returning a pytree of arrays.
      *primals: the point at which to linearise: real or complex arrays (an integer or bool
        one has no derivative and raises a TypeError; close over it instead).
      has_aux: if True, `fun` returns `(out, aux)` and aux is returned third.

    Returns:
      `(out, vjp_fun)` or `(out, vjp_fun, aux)`; `vjp_fun(ct)` returns a tuple with one
      cotangent per primal, each shaped like its primal. `vjp_fun.residual_bytes()` gives
      the bytes of the arrays kept for the backward pass (what `fnad.checkpoint` saves).

    Example:
      y, f_vjp = fnad.vjp(fnp.sin, x)
      (x_bar,) = f_vjp(fnp.ones_like(y))
    """
    return _vjp(fun, primals, has_aux, ints="vjp")


def vjp_with_ints(fun, *primals, has_aux=False):
    """`vjp` for the library's own rules (jit's and lax's graphs, odeint, check_grads):
    integer and bool primals are held fixed and get zero cotangents."""
    return _vjp(fun, primals, has_aux)


def _vjp(fun, primals, has_aux, argnums=None, once=False, name="vjp", user_fun=None,
         ints=None):
    """vjp; with `argnums` (the argument number of each primal) it is grad's and refuses
    non-float inputs, naming the argument, and so does it with `ints` (the public vjp's
    name), naming the primal. With `once`, the returned function may be called
    only once: its backward pass frees the forward values as it goes. `name` is the
    transform that tracers escaping `fun` are said to come from, and that errors name;
    `user_fun` the function whose parameter names they use."""
    flat, in_tree = tree_flatten(primals)
    traced = []
    for i, x in enumerate(flat):
        x = flat[i] = as_input(x, name, "primal", i, in_tree, argnums, user_fun or fun)
        if getval(x).dtype.kind in "fc":
            traced.append(i)
        elif argnums is not None or ints:
            raise _refused_leaf(x, name, "primal", in_tree, i, argnums, user_fun or fun)
    trace, boxed, out = trace_reverse(lambda t: fun(*t), flat, traced, in_tree, name)
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
    out_specs = [shape_dtype(o) for o in out_vals]

    def vjp_fun(ct):
        ct_flat, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise ValueError("vjp function: the cotangent's structure differs from the output's:"
                             f"\n  output:    {out_tree}\n  cotangent: {ct_tree}")
        cts = [_checked_ct(k, c, spec) for k, (c, spec) in enumerate(zip(ct_flat, out_specs))]
        grads = pull_back(trace, out_flat, cts, consume=once)
        res = []
        for x, b in zip(flat, boxed):
            g = None if b is x else grads[b._idx]
            res.append(zeros_like_value(x) if g is None else fit_cotangent(g, x))
        return tuple(tree_unflatten(in_tree, res))

    vjp_fun.residual_bytes = lambda: tape_bytes(trace)
    vjp_fun.residuals = lambda: tape_residuals(trace)
    out_primal = tree_unflatten(out_tree, out_vals)
    return (out_primal, vjp_fun, aux) if has_aux else (out_primal, vjp_fun)


def _checked_ct(k, c, spec):
    """Cotangent `k`, checked against its output's (shape, dtype); a Python scalar for a
    0-d output becomes an array."""
    shape, dtype = spec
    c_shape, c_dtype = shape_dtype(c)
    if c_shape != shape:
        raise ValueError(f"vjp function: cotangent {k} has shape {c_shape} but the output "
                         f"has shape {shape}; pass a cotangent shaped like the output.")
    if c_dtype != dtype and not (isinstance(c, (int, float)) and shape == ()):
        if c_dtype.kind != dtype.kind or dtype.kind not in "fc":
            raise ValueError(f"vjp function: cotangent {k} has dtype {c_dtype} but the output "
                             f"has dtype {dtype}; cast it with .astype({dtype}).")
        # another precision of the same kind (a float32 draw of fnad.random for float64
        # NumPy data): taken in the output's precision, as a Python float is
        return c.astype(dtype)
    if isinstance(c, (int, float)):
        c = np.asarray(c, dtype=dtype)
    return c


def argnums_tuple(argnums, nargs, fname):
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


def dyn_args(args, nums, fname, fun=None):
    """The distinct argnums among `nums` and the arguments they choose, Python scalars made
    arrays (for jacrev/jacfwd/hessian, as grad does); integer and bool ones are refused, as
    grad refuses them; `fun`'s parameter names label refused ones."""
    uniq = nums if len(nums) == 1 else tuple(dict.fromkeys(nums))
    leaves, tree = tree_flatten(tuple(args[n] for n in uniq))
    out = []
    for i, x in enumerate(leaves):
        x = as_input(x, fname, "argument", i, tree, uniq, fun)
        if getval(x).dtype.kind not in "fc":
            raise _refused_leaf(x, fname, "argument", tree, i, uniq, fun)
        out.append(x)
    return uniq, tree_unflatten(tree, out)


def layout(jac, argnums, uniq, nums):
    """Per-argument results for the distinct argnums `uniq`, as `argnums` asked for them."""
    return jac[0] if not isinstance(argnums, (tuple, list)) else _spread(jac, uniq, nums)


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
    require_callable(fun, "value_and_grad")
    name = getattr(fun, "__name__", "function")

    @functools.wraps(fun)
    def value_and_grad_fun(*args, **kwargs):
        nums = argnums_tuple(argnums, len(args), "grad")
        uniq = nums if len(nums) == 1 else tuple(dict.fromkeys(nums))

        def partial(*dyn):
            full = list(args)
            for n, d in zip(uniq, dyn):
                full[n] = d
            return fun(*full, **kwargs)

        dyn = tuple(args[n] for n in uniq)
        if holomorphic:
            require_complex("grad", "inputs", dyn)
        res = _vjp(partial, dyn, has_aux, uniq, once=True, name="grad", user_fun=fun)
        out, f_vjp = res[0], res[1]
        if not (isinstance(out, (Tracer, float)) or is_array(out)):
            shape = None
        else:
            shape, dtype = shape_dtype(out)
        if shape != ():
            raise TypeError(f"grad requires {name} to return a scalar, but it returned "
                            f"{describe(out)}; use fnad.jacrev or fnad.vjp for non-scalar "
                            "outputs.")
        if holomorphic:
            require_complex("grad", "outputs", (out,))
        elif np.dtype(dtype).kind != "f":
            hint = ("for holomorphic differentiation pass holomorphic=True; otherwise take "
                    "fnp.real or fnp.abs of it, or use fnad.vjp with a complex cotangent"
                    if np.dtype(dtype).kind == "c" else "cast the output to a float dtype")
            raise TypeError(f"grad requires real-valued outputs, but {name} returned dtype "
                            f"{dtype}; {hint}.")
        xp = array_module(getval(out))
        g = f_vjp(xp.ones((), dtype=dtype))
        g = layout(g, argnums, uniq, nums)
        return ((out, res[2]), g) if has_aux else (out, g)

    return value_and_grad_fun


def require_complex(fname, what, values):
    """holomorphic=True's check (JAX's): every leaf of `values` has a complex dtype."""
    for v in tree_flatten(values)[0]:
        dt = shape_dtype(v)[1] if _is_value(v) else None
        if dt is None or dt.kind != "c":
            raise TypeError(f"{fname} with holomorphic=True requires {what} with complex dtype, "
                            f"but got {dt if dt is not None else type(v).__name__}; cast with "
                            ".astype(complex), or drop holomorphic=True for a real-valued "
                            "function.")


def describe(x):
    """A short description of a returned value, for errors."""
    if x is None:
        return "None"
    if isinstance(x, (tuple, list, dict)):
        return f"a {type(x).__name__} (a pytree)"
    if not (isinstance(x, (Tracer, bool, int, float, complex)) or is_array(x)):
        return f"a {type(x).__name__} ({x!r:.40})"
    shape, dtype = shape_dtype(x)
    return f"an array of shape {shape} and dtype {dtype}"


def grad(fun, argnums=0, has_aux=False, holomorphic=False):
    """Return a function computing the gradient of scalar-valued `fun` (see value_and_grad
    for `holomorphic` and the convention for complex inputs).

    Example:
      dfdx = fnad.grad(lambda x: fnp.sum(fnp.tanh(x) ** 2))
      dfdx(fnp.ones(3))
    """
    require_callable(fun, "grad")
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
      primals, tangents: tuples (or lists) of equal structure, shapes and dtypes; real or
        complex (an integer or bool primal has no tangent and raises a TypeError; close
        over it instead).

    Example:
      y, y_dot = fnad.jvp(fnp.sin, (x,), (fnp.ones_like(x),))
    """
    return _jvp(fun, primals, tangents, ints="jvp")


def jvp_with_ints(fun, primals, tangents):
    """`jvp` for the library's own rules: integer and bool primals are held fixed (their
    tangents ignored)."""
    return _jvp(fun, primals, tangents)


def _jvp(fun, primals, tangents, ints=None):
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples, e.g. jvp(f, (x,), (t,)); got "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    p_flat, p_tree = tree_flatten(tuple(primals))
    t_flat, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise ValueError(f"jvp: primals and tangents differ in structure:\n  primals:  {p_tree}"
                         f"\n  tangents: {t_tree}")
    prims, tans = [], []
    for i, (p, t) in enumerate(zip(p_flat, t_flat)):
        p = as_input(p, "jvp", "primal", i, p_tree, None, fun)
        t = as_input(t, "jvp", "tangent", i, t_tree, None, fun)
        (p_shape, p_dtype), (t_shape, t_dtype) = shape_dtype(p), shape_dtype(t)
        if p_shape != t_shape:
            raise ValueError(f"jvp: primal {i} has shape {p_shape} but its tangent has "
                             f"shape {t_shape}.")
        if p_dtype.kind not in "fc" and ints:
            raise _refused_leaf(p, ints, "primal", p_tree, i, None, fun)
        if p_dtype.kind in "fc":
            if t_dtype != p_dtype:
                # a Python scalar, or another precision of the same kind (float32 and float64
                # meet where fnad.random's float32 draws meet NumPy's float64 data)
                same_kind = t_dtype.kind == p_dtype.kind
                if not same_kind and (not isinstance(t_flat[i], (int, float))
                                      or t_dtype.kind not in "iuf"):
                    raise TypeError(f"jvp: primal {i} has dtype {p_dtype} but its tangent has "
                                    f"dtype {t_dtype}; tangents must have their primal's dtype "
                                    f"(cast with .astype({p_dtype})).")
                t = t.astype(p_dtype)  # taken in the primal's dtype
        else:
            t = None
        prims.append(p)
        tans.append(t)
    trace, out = trace_forward(lambda t: fun(*t), prims, tans, p_tree, "jvp")
    out_flat, out_tree = tree_flatten(out)
    prim_out, tan_out = unbox_forward(trace, out_flat)
    return tree_unflatten(out_tree, prim_out), tree_unflatten(out_tree, tan_out)


stop_gradient_p = primitive(lambda x: x, "stop_gradient", nondiff=True)
stop_gradient_p.primitive.abstract_eval = same_rule
defbatch(stop_gradient_p, lambda args, dims: (stop_gradient_p(*args), dims[0]))  # axis kept


def stop_gradient(x):
    """Return `x` (any pytree) with no derivative at any level of tracing."""
    if isinstance(x, Tracer):  # a single traced array, the common case
        return stop_gradient_p(x)
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [stop_gradient_p(v) if isinstance(v, Tracer) else v
                                 for v in leaves])
