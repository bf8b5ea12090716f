"""Jacobians and Hessians, built from vjp (one pull-back per output element) and jvp (one
push-forward per input element).

The rows are stacked by the namespace of the arrays themselves: numpy/cupy for plain
arrays, and for traced ones (a Jacobian inside another transform) the namespace their
`__array_namespace__` names (fnad.numpy), so this module imports no array layer.
"""

import functools

from .._core.backend import array_module
from .._core.tracer import Tracer, getval, require_callable
from .._core.tree import tree_flatten, tree_unflatten
from .transforms import argnums_tuple, dyn_args, jvp, layout, require_complex, vjp
from .values import shape_dtype

__all__ = ["jacrev", "jacfwd", "hessian", "jacobian"]


def _partial(fun, args, nums, kwargs):
    def f(*dyn):
        full = list(args)
        for n, d in zip(nums, dyn):
            full[n] = d
        return fun(*full, **kwargs)
    return f


def _chosen(fname, fun, args, kwargs, argnums, holomorphic):
    """What jacrev and jacfwd both start from: the argnums as given (`nums`), the distinct
    ones (`uniq`), the chosen arguments (`primals`, Python scalars made arrays) and `fun` of
    those alone. With holomorphic=True the inputs must be complex."""
    nums = argnums_tuple(argnums, len(args), fname)
    uniq, primals = dyn_args(args, nums, fname, fun)
    if holomorphic:
        require_complex(fname, "inputs", primals)
    return nums, uniq, primals, _partial(fun, args, uniq, kwargs)


def _size(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _stack(parts, axis, shape, dtype):
    """`parts` stacked along `axis` and reshaped to `shape` (zeros of `shape` if none)."""
    if not parts:
        return array_module().zeros(shape, dtype)
    for p in parts:
        if isinstance(p, Tracer):
            return p.__array_namespace__().stack(parts, axis=axis).reshape(shape)
    return array_module(*parts).stack(parts, axis=axis).reshape(shape)


def _basis(leaves, k_leaf, k):
    """Cotangents/tangents: zeros everywhere but a 1 at element k of leaf k_leaf."""
    out = []
    for i, x in enumerate(leaves):
        xp = array_module(getval(x))
        shape, dtype = shape_dtype(x)  # a batched value's own shape (no batch axis)
        z = xp.zeros(_size(shape), dtype=dtype)
        if i == k_leaf:
            z[k] = 1
        out.append(z.reshape(shape))
    return out


def _require_real(fname, what, values, mode):
    """JAX's check without holomorphic=True: jacrev needs real outputs, jacfwd real inputs."""
    for v in tree_flatten(values)[0]:
        dt = getattr(getval(v), "dtype", None)
        if dt is not None and dt.kind == "c":
            raise TypeError(f"{fname} requires real-valued {what}, but got dtype {dt}; for "
                            "holomorphic differentiation pass holomorphic=True, and for a "
                            f"non-holomorphic function of complex values use fnad.{mode} "
                            "directly.")


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False):
    """Jacobian of `fun` by reverse mode: one VJP per output element.

    Returns a function giving, for each output leaf of shape S_out and input leaf of shape
    S_in, an array of shape S_out + S_in, nested as output tree of (argument trees).
    Outputs must be real unless `holomorphic=True` (complex inputs and outputs, entries
    f'(z)), as in JAX; complex inputs of a real function get JAX's convention (see grad).

    Example:
      J = fnad.jacrev(fnp.tanh)(x)    # shape x.shape + x.shape
    """
    require_callable(fun, "jacrev")

    @functools.wraps(fun)
    def jacfun(*args, **kwargs):
        nums, uniq, primals, f = _chosen("jacrev", fun, args, kwargs, argnums, holomorphic)
        res = vjp(f, *primals, has_aux=has_aux)
        out, f_vjp = res[0], res[1]
        if holomorphic:
            require_complex("jacrev", "outputs", out)
        else:
            _require_real("jacrev", "outputs", out, "vjp")
        out_flat, out_tree = tree_flatten(out)
        in_flat, in_tree = tree_flatten(primals)
        per_out = []
        for j, o in enumerate(out_flat):
            rows = [tree_flatten(f_vjp(tree_unflatten(out_tree, _basis(out_flat, j, k))))[0]
                    for k in range(_size(shape_dtype(o)[0]))]
            o_shape = shape_dtype(o)[0]
            cols = []
            for i, x in enumerate(in_flat):
                cols.append(_stack([r[i] for r in rows], 0, o_shape + shape_dtype(x)[0],
                                   shape_dtype(x)[1]))
            jac = tree_unflatten(in_tree, cols)
            per_out.append(layout(jac, argnums, uniq, nums))
        result = tree_unflatten(out_tree, per_out)
        return (result, res[2]) if has_aux else result

    return jacfun


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """Jacobian of `fun` by forward mode: one JVP per input element.

    Same output layout as `jacrev`. Inputs must be real unless `holomorphic=True` (complex
    inputs and outputs), as in JAX.

    Example:
      J = fnad.jacfwd(lambda x: x ** 3)(x)
    """
    require_callable(fun, "jacfwd")

    @functools.wraps(fun)
    def jacfun(*args, **kwargs):
        nums, uniq, primals, f = _chosen("jacfwd", fun, args, kwargs, argnums, holomorphic)
        if not holomorphic:
            _require_real("jacfwd", "inputs", primals, "jvp")
        in_flat, in_tree = tree_flatten(primals)
        aux = None
        if has_aux:
            aux = f(*primals)[1]

            def f(*dyn, _f=f):
                return _f(*dyn)[0]
        cols_per_in = []
        out_flat = out_tree = None
        for i, x in enumerate(in_flat):
            cols = []
            for k in range(_size(shape_dtype(x)[0])):
                t = tree_unflatten(in_tree, _basis(in_flat, i, k))
                out, t_out = jvp(f, primals, tuple(t))
                out_flat, out_tree = tree_flatten(out)
                cols.append(tree_flatten(t_out)[0])
            cols_per_in.append(cols)
        if out_tree is None:  # every input is empty
            out, _ = jvp(f, primals, primals)
            out_flat, out_tree = tree_flatten(out)
        if holomorphic:
            require_complex("jacfwd", "outputs", out)
        per_out = []
        for j, o in enumerate(out_flat):
            o_shape = shape_dtype(o)[0]
            jac_leaves = []
            for i, x in enumerate(in_flat):
                jac_leaves.append(_stack([c[j] for c in cols_per_in[i]], -1,
                                         o_shape + shape_dtype(x)[0], shape_dtype(o)[1]))
            jac = tree_unflatten(in_tree, jac_leaves)
            per_out.append(layout(jac, argnums, uniq, nums))
        result = tree_unflatten(out_tree, per_out)
        return (result, aux) if has_aux else result

    return jacfun


def hessian(fun, argnums=0, holomorphic=False):
    """Hessian of scalar `fun`: `jacfwd(jacrev(fun))` (`holomorphic` as for both).

    Example:
      H = fnad.hessian(lambda x: fnp.sum(x ** 3))(x)   # shape x.shape + x.shape
    """
    require_callable(fun, "hessian")
    hess = jacfwd(jacrev(fun, argnums, holomorphic=holomorphic), argnums,
                  holomorphic=holomorphic)

    @functools.wraps(fun)
    def hessfun(*args, **kwargs):
        dyn_args(args, argnums_tuple(argnums, len(args), "hessian"), "hessian", fun)  # checks
        return hess(*args, **kwargs)

    return hessfun


jacobian = jacrev  # JAX's name (jax.jacobian is jax.jacrev)
