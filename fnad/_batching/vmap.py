"""Layer 2: vmap, the batching transform.

A `BatchTracer` holds a value with one extra axis, the batch axis `bdim`, and stands for
the slice of that value at one example: its `shape` is the value's shape without the batch
axis. A `BatchTrace` sends each primitive to its batching rule
`prim.batch(args, dims, **kwargs) -> (out, out_dims)`: `args` are the values (batched or
not), `dims` their batch axes (None where an argument is not batched; a tuple of them for a
tuple argument holding batched values, such as an index), and the rule returns the result
with the batch axis where `out_dims` says (a tuple for a multiple-result primitive).
Rules call primitives through their public functions (fnad.numpy), so the values may be
tracers of other transforms: grad of vmap, vmap of grad, jvp and nested vmaps compose.

A primitive without a rule runs once per example in a Python loop and the results are
stacked; a `BatchingFallbackWarning` names it the first time.
"""

import functools
import warnings

import numpy as np

from .._core.abstract import aval_of
from .._core.backend import array_module
from .._core.fpcheck import restate
from .._core.custom import (CustomJVPRule, CustomVJPRule, bind_checkpoint, bind_custom_jvp,
                            bind_custom_vjp)
from .._core.tracer import (Trace, Tracer, finish_trace, levels, raise_if_escaped,
                             require_callable, top_trace)
from .._core.tree import _sorted_keys, tree_flatten, tree_map, tree_unflatten

__all__ = ["vmap", "BatchTrace", "BatchTracer", "BatchingFallbackWarning", "batch_fallback",
           "FALLBACK_COUNTS", "unbatched_value", "index_dispatch", "move_axis", "namespace_of",
           "stack", "COLLECTIVES", "AXIS_ENV", "batch_custom_vjp", "batch_custom_jvp",
           "batch_checkpoint", "batch_by_loop"]


class BatchingFallbackWarning(UserWarning):
    """A primitive with no batching rule ran in a Python loop over the batch under vmap."""


FALLBACK_COUNTS = {}  # primitive name -> calls batched by the loop fallback (for reports)

# Collectives over named axes (fnad/lax/_collectives.py): primitive -> rule(vals, dims,
# axis_size, **kwargs) -> (out, out_dim), applied by the vmap trace whose axis_name is the
# call's `axis_name`; AXIS_ENV lists (name, trace) of the named vmaps running, innermost
# last, for the calls on values no such trace holds.
COLLECTIVES = {}
AXIS_ENV = []


def _drop(shape, d):
    return shape[:d] + shape[d + 1:]


class BatchTracer(Tracer):
    __slots__ = ("_value", "_bdim", "_trace")

    def __init__(self, value, bdim, trace):
        self._value = value
        self._bdim = bdim
        self._trace = trace

    @property
    def value(self):
        return self._value

    @property
    def aval(self):
        a = aval_of(self._value)
        return a.update(shape=_drop(a.shape, self._bdim))

    shape = property(lambda s: _drop(tuple(s._value.shape), s._bdim))
    dtype = property(lambda s: s._value.dtype)
    ndim = property(lambda s: s._value.ndim - 1)
    size = property(lambda s: int(np.prod(s.shape, dtype=np.int64)))

    def _concrete(self, what):
        if self._trace.escaped_from is not None:
            raise self._trace._escaped(f"{what}() of a traced value")
        return TypeError(
            f"vmap: {what}() of a batched value of shape {self.shape} (batch of "
            f"{self._value.shape[self._bdim]}): each example may give a different answer, so "
            "Python control flow cannot depend on it. Use fnp.where(cond, a, b) instead of "
            "`if`, or map that argument with in_axes=None if it is the same for every example.")

    def __bool__(self):
        raise self._concrete("bool")

    def __float__(self):
        raise self._concrete("float")

    def __int__(self):
        raise self._concrete("int")

    def __index__(self):
        raise self._concrete("index")

    def __array__(self, dtype=None, copy=None):
        raise_if_escaped(self, "numpy.asarray() (or another NumPy conversion)")
        cast = f" (x.astype({dtype}) to cast it)" if dtype is not None else ""
        raise TypeError(
            f"vmap: a batched value (shape {self.shape} per example) was passed to plain NumPy, "
            "which cannot see its batch axis; use fnad.numpy (import fnad.numpy as fnp) inside "
            f"functions you vmap{cast}, e.g. fnp.take(table, idx) rather than table[idx] for a "
            "plain array indexed by a batched index.")

    def __len__(self):
        s = self.shape
        if not s:
            raise TypeError("len() of a 0-d batched value")
        return s[0]

    def __repr__(self):
        return (f"BatchTracer(level={self._trace.level}, bdim={self._bdim}, "
                f"value={self._value!r})")


def unbatched_value(x):
    """`x` with the autodiff levels stripped but a BatchTracer kept (for index arrays, which
    primitives take inside a tuple: their values matter, their derivatives do not)."""
    for v in levels(x):
        if not isinstance(v, Tracer) or isinstance(v, BatchTracer):
            return v
    return v  # a staged value (jit): nothing more concrete below


def index_dispatch(impl, k):
    """`impl` made to send a call whose tuple argument `k` (an index) holds tracers, which
    only a batched index keeps (see `unbatched_value`), to the innermost of their traces:
    primitives dispatch on their top-level arguments only, and `x` itself may be plain.
    The primitive made from it must be stored as the returned function's `.primitive`."""
    def fun(*args, **kwargs):
        idx = args[k]
        if type(idx) is tuple:
            top = top_trace(idx)
            if top is not None:
                return top.process(fun.primitive, args, kwargs)
        return impl(*args, **kwargs)
    fun.__name__, fun.__doc__ = impl.__name__, impl.__doc__
    return fun


class BatchTrace(Trace):
    __slots__ = ("axis_size", "axis_name")

    def __init__(self, axis_size, axis_name=None):
        super().__init__()
        self.axis_size = axis_size
        self.axis_name = axis_name

    def _unbox(self, a):
        if isinstance(a, BatchTracer) and a._trace is self:
            return a._value, a._bdim
        if isinstance(a, tuple) and any(isinstance(x, BatchTracer) and x._trace is self
                                        for x in a):
            pairs = [self._unbox(x) for x in a]
            return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        return a, None

    def process(self, prim, args, kwargs):
        vals, dims = [], []
        for a in args:
            v, d = self._unbox(a)
            vals.append(v)
            dims.append(d)
        rule = prim.batch
        if self.axis_name is not None and kwargs.get("axis_name") == self.axis_name:
            rule = COLLECTIVES.get(prim, rule)
            if rule is not prim.batch:  # a collective over this very axis
                kwargs = dict(kwargs, size=self.axis_size)
        try:
            if rule is None:
                out, out_dims = batch_fallback(prim, vals, dims, kwargs, self.axis_size)
            else:
                out, out_dims = rule(vals, tuple(dims), **kwargs)
        except FloatingPointError as e:  # debug_nans: NumPy's check, named
            raise restate(e) from e
        if prim.multiple_results:
            outs = [self._box(o, d) for o, d in zip(out, out_dims)]
            return tuple(outs) if isinstance(out, tuple) else outs
        return self._box(out, out_dims)

    def _box(self, out, d):
        return out if d is None else BatchTracer(out, d, self)

    def _unbox_leaves(self, flat):
        vals, dims = [], []
        for x in flat:
            v, d = self._unbox(x)
            vals.append(v)
            dims.append(d)
        return vals, dims

    def process_custom_vjp(self, rule, args):
        flat, in_tree = rule.flatten(args)
        vals, dims = self._unbox_leaves(flat)
        outs = batch_custom_vjp(rule, args, vals, dims, in_tree)
        return tree_map(lambda o: BatchTracer(o, 0, self), outs)

    def process_custom_jvp(self, rule, args):
        flat, in_tree = rule.flatten(args)
        vals, dims = self._unbox_leaves(flat)
        outs = batch_custom_jvp(rule, args, vals, dims, in_tree)
        return tree_map(lambda o: BatchTracer(o, 0, self), outs)

    def process_checkpoint(self, fun, args, kwargs, name):
        flat, in_tree = tree_flatten((args, kwargs))
        vals, dims = self._unbox_leaves(flat)
        outs = batch_checkpoint(fun, vals, dims, in_tree, name)
        return tree_map(lambda o: BatchTracer(o, 0, self), outs)


def batch_custom_vjp(rule, args, vals, dims, in_tree):
    """A custom_vjp call on batched differentiable leaves `vals` (batch axes `dims`, None where
    unbatched) as a custom_vjp call of the vmapped function whose `fwd` and `bwd` are the
    vmapped rules, handed on to the traces below. Its arguments are the leaves; every output
    and residual comes back with its batch axis first, and the cotangent of an unbatched leaf
    is summed over the batch."""
    fixed = [args[i] for i in rule.nondiff_argnums]
    in_axes = tuple(dims)

    def batched(f):
        return vmap(lambda *leaves: f(*rule.fill_leaves(args, leaves, in_tree)), in_axes)

    def bwd(res, g):
        per_leaf = vmap(lambda r, gg: rule.leaf_cotangents(rule.bwd(*fixed, r, gg), in_tree))
        return tuple(None if c is None else c.sum(0) if d is None else move_axis(c, 0, d)
                     for c, d in zip(per_leaf(res, g), dims))

    leaf_rule = CustomVJPRule(batched(rule.fun), batched(rule.fwd), bwd, (), rule.name)
    return bind_custom_vjp(leaf_rule, vals)


def batch_custom_jvp(rule, args, vals, dims, in_tree):
    """A custom_jvp call on batched differentiable leaves `vals` (batch axes `dims`) as a
    custom_jvp call of the vmapped function whose jvp rule is the vmapped rule (a tangent
    has its primal's batch axis), handed on to the traces below; outputs come back with
    their batch axis first."""
    in_axes = tuple(dims)

    def fun(*leaves):
        return vmap(lambda *v: rule.fun(*rule.fill_leaves(args, v, in_tree)), in_axes)(*leaves)

    def jvp(primals, tangents):
        return vmap(lambda p, t: rule.jvp_leaves(args, in_tree, p, t),
                    (in_axes, in_axes))(tuple(primals), tuple(tangents))

    return bind_custom_jvp(CustomJVPRule(fun, jvp, (), rule.name), vals)


def batch_checkpoint(fun, vals, dims, in_tree, name):
    """A checkpoint call on batched leaves `vals` as a checkpoint call of the vmapped
    function of the leaves, handed on to the traces below (which then recompute the batched
    function). Outputs come back with their batch axis first."""
    def of_leaves(*leaves):
        args, kwargs = tree_unflatten(in_tree, leaves)
        return fun(*args, **kwargs)

    return bind_checkpoint(vmap(of_leaves, in_axes=tuple(dims)), tuple(vals), {}, name)


def _slice(v, d, i):
    """Example `i` of value `v` batched along `d` (a tuple argument slices each item)."""
    if d is None:
        return v
    if isinstance(d, tuple):
        return type(v)(_slice(x, dx, i) for x, dx in zip(v, d))
    return v[(slice(None),) * d + (i,)]


def namespace_of(parts):
    for p in parts:
        if isinstance(p, Tracer):
            return p.__array_namespace__()
    return array_module(*parts)


def stack(parts):
    """`parts` stacked along a new axis 0 by the namespace of the arrays themselves
    (fnad.numpy for traced ones), so the core imports no array layer."""
    parts = [p if isinstance(p, Tracer) or hasattr(p, "shape") else np.asarray(p)
             for p in parts]
    return namespace_of(parts).stack(parts)


def batch_fallback(prim, vals, dims, kwargs, size):
    """Batch `prim` by calling it on each example and stacking the results (axis 0)."""
    if prim.name not in FALLBACK_COUNTS:
        warnings.warn(f"vmap: primitive '{prim.name}' has no batching rule, so it runs once per "
                      "example in a Python loop (slow). Register one with "
                      "fnad.extend.defbatch.", BatchingFallbackWarning, stacklevel=4)
    FALLBACK_COUNTS[prim.name] = FALLBACK_COUNTS.get(prim.name, 0) + 1
    return batch_by_loop(prim, vals, dims, kwargs, size)


def batch_by_loop(prim, vals, dims, kwargs, size):
    """`prim` called on each example and the results stacked (batch axis 0): the rule of
    primitives whose examples are independent by nature (random draws, one per key)."""
    outs = [prim.bind(*[_slice(v, d, i) for v, d in zip(vals, dims)], **kwargs)
            for i in range(size)]
    if prim.multiple_results:
        n = len(outs[0]) if outs else 0
        return tuple(_stack_examples(prim, [o[k] for o in outs]) for k in range(n)), (0,) * n
    return _stack_examples(prim, outs), 0


def _stack_examples(prim, parts):
    shapes = {tuple(np.shape(p)) for p in parts}
    if len(shapes) > 1:
        raise ValueError(f"vmap: primitive '{prim.name}' gives results of different shapes for "
                         f"different examples ({', '.join(map(str, sorted(shapes)))}), and a "
                         "vmapped result has one shape; call it per example in a Python loop, "
                         "or use a fixed-size form.")
    return stack(parts)


# ----------------------------------------------------------------------------- vmap


def _axes_error(fname, what, prefix, x):
    return ValueError(
        f"{fname}: {what}={prefix!r} does not match the structure of the values "
        f"{tree_flatten(x)[1]}; give an int or None, or a tuple/list/dict with one entry "
        "per item of the value.")


def _flat_axes(prefix, x, fname, what):
    """One axis (int or None) per leaf of `x`, from the pytree prefix `prefix`."""
    if prefix is None or isinstance(prefix, (int, np.integer)):
        return [prefix] * len(tree_flatten(x)[0])
    if isinstance(prefix, dict):
        if not isinstance(x, dict) or set(prefix) != set(x):
            raise _axes_error(fname, what, prefix, x)
        return [a for k in _sorted_keys(x) for a in _flat_axes(prefix[k], x[k], fname, what)]
    if isinstance(prefix, (tuple, list)):
        if not isinstance(x, (tuple, list)) or len(prefix) != len(x):
            raise _axes_error(fname, what, prefix, x)
        return [a for p, v in zip(prefix, x) for a in _flat_axes(p, v, fname, what)]
    raise TypeError(f"{fname}: {what} entries must be ints, None or tuples/lists/dicts of "
                    f"them; got {prefix!r} ({type(prefix).__name__}).")


def _check_axes_type(axes, what):
    leaves = tree_flatten(axes, is_leaf=lambda a: a is None)[0]
    for a in leaves:
        if a is not None and not isinstance(a, (int, np.integer)):
            raise TypeError(f"vmap: {what} must be an int, None or a pytree of them; got "
                            f"{axes!r} (holding {type(a).__name__}).")


def move_axis(x, src, dst):
    if src == dst:
        return x
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    return x.transpose(tuple(perm))


def _out_axis(ax, ndim, k):
    """out_axes entry `ax` for output leaf `k` of `ndim` axes per example, made non-negative;
    the batched output has ndim + 1 axes, so ax must lie in [-(ndim + 1), ndim]."""
    if not -(ndim + 1) <= ax <= ndim:
        raise ValueError(f"vmap: out_axes={ax} is out of range for output leaf {k}, which has "
                         f"{ndim} axes per example ({ndim + 1} with the batch axis); use an "
                         f"axis in [{-(ndim + 1)}, {ndim}].")
    return ax % (ndim + 1)


def _broadcast_out(x, axis, size):
    """Unbatched output `x` repeated `size` times along the new axis `axis`."""
    if not (isinstance(x, Tracer) or hasattr(x, "shape")):
        x = np.asarray(x)
    xp = namespace_of([x])
    shape = tuple(x.shape)
    axis = axis % (len(shape) + 1)
    return xp.broadcast_to(xp.expand_dims(x, axis), shape[:axis] + (size,) + shape[axis:])


def _size_error(flat, in_tree, axes, args):
    lines = []
    k = 0
    for n, child in enumerate(in_tree.children):
        for j in range(child.num_leaves):
            ax = axes[k]
            if ax is not None:
                s = tuple(np.shape(flat[k]))
                leaf = f" leaf {j}" if child.num_leaves > 1 else ""
                lines.append(f"  argument {n}{leaf} of shape {s}, in_axes {ax}: size {s[ax]}")
            k += 1
    return ValueError("vmap got inconsistent sizes for the mapped axes:\n" + "\n".join(lines)
                      + "\nEvery mapped axis must have the same size; fix the shapes, or map "
                      "an argument with in_axes=None to share it across the batch.")


def _batch_inputs(flat, axes, in_tree, args, axis_size):
    """The axis size, and each leaf's mapped axis made non-negative (checked)."""
    sizes = set()
    for k, (x, ax) in enumerate(zip(flat, axes)):
        if ax is None:
            continue
        s = tuple(np.shape(x)) if not isinstance(x, Tracer) else x.shape
        if not isinstance(x, Tracer) and not hasattr(x, "shape"):
            raise ValueError(f"vmap: in_axes={ax} maps leaf {k} of the arguments, a Python "
                             f"{type(x).__name__}, which has no axis; pass an array or give "
                             "it in_axes=None.")
        if not -len(s) <= ax < len(s):
            raise ValueError(f"vmap: in_axes={ax} is out of range for an argument of shape "
                             f"{s} (ndim {len(s)}); use an axis in [{-len(s)}, {len(s)}) or "
                             "None to leave it unmapped.")
        axes[k] = ax % len(s)
        sizes.add(s[axes[k]])
    if len(sizes) > 1:
        raise _size_error(flat, in_tree, axes, args)
    if not sizes:
        if axis_size is None:
            raise ValueError("vmap: no argument is mapped (every in_axes is None), so the "
                             "batch size is unknown; pass axis_size=n.")
        return axis_size
    size = sizes.pop()
    if axis_size is not None and axis_size != size:
        raise ValueError(f"vmap: axis_size={axis_size} but the mapped axes have size {size}.")
    return size


def vmap(fun, in_axes=0, out_axes=0, axis_size=None, axis_name=None, spmd_axis_name=None):
    """Vectorise `fun` over an axis of its inputs: `vmap(f)(xs)` is `stack([f(x) for x in xs])`
    computed with batched primitives (no Python loop).

    Args:
      fun: a function of arrays (pytrees of arrays) returning a pytree of arrays.
      in_axes: the mapped axis of every argument: an int (negative counts from the end),
        None (not mapped: the same value for every example), or a tuple with one entry per
        positional argument, each an int, None or a pytree prefix of that argument.
        Keyword arguments are mapped along axis 0.
      out_axes: where the batch axis goes in each output (int, None or a pytree prefix); None
        only for outputs that do not depend on the mapped inputs.
      axis_size: the batch size when no argument is mapped.
      axis_name: a name for the mapped axis (any hashable), which the collectives inside
        `fun` name: `fnad.lax.psum(x, "i")`, `pmean`, `pmax`, `pmin`, `all_gather`,
        `axis_index`. `spmd_axis_name` (JAX's, for sharding) is accepted and unused.

    Returns:
      The vectorised function.

    Example:
      per_example = fnad.vmap(fnad.grad(loss), in_axes=(None, 0, 0))(params, xs, ys)
      fnad.vmap(fnp.dot, in_axes=(0, None))(xs, w)   # each row of xs dotted with w
    """
    require_callable(fun, "vmap")
    _check_axes_type(in_axes, "in_axes")
    _check_axes_type(out_axes, "out_axes")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    @functools.wraps(fun)
    def batched(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(f"vmap: in_axes has {len(in_axes)} entries but the function was "
                             f"called with {len(args)} positional arguments; give one entry "
                             "per argument (or a single int/None for all).")
        axes = _flat_axes(in_axes, args, "vmap", "in_axes") + _flat_axes(0, kwargs, "vmap", "")
        flat, in_tree = tree_flatten((args, kwargs))
        size = _batch_inputs(flat, axes, in_tree.children[0], args, axis_size)
        trace = BatchTrace(size, axis_name)
        boxed = [x if ax is None else BatchTracer(x, ax, trace) for x, ax in zip(flat, axes)]
        b_args, b_kwargs = tree_unflatten(in_tree, boxed)
        if axis_name is not None:
            AXIS_ENV.append((axis_name, trace))
        try:
            out = fun(*b_args, **b_kwargs)
        finally:
            if axis_name is not None:
                AXIS_ENV.pop()
            finish_trace(trace, "vmap")
        out_flat, out_tree = tree_flatten(out)
        o_axes = _flat_axes(out_axes, out, "vmap", "out_axes")
        res = []
        for k, (o, ax) in enumerate(zip(out_flat, o_axes)):
            if isinstance(o, BatchTracer) and o._trace is trace:
                if ax is None:
                    raise ValueError(f"vmap: out_axes=None for an output of shape {o.shape} "
                                     "that depends on the mapped inputs; give it an axis.")
                o = move_axis(o._value, o._bdim, _out_axis(ax, len(o.shape), k))
            elif ax is not None:
                o = _broadcast_out(o, _out_axis(ax, len(np.shape(o) if not isinstance(
                    o, Tracer) else o.shape), k), size)
            res.append(o)
        return tree_unflatten(out_tree, res)

    return batched
