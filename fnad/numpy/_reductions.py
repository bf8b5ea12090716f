"""Reductions and their rules: sum, mean, prod, max/min, cumsum/cumprod, any/all.

max/min/amax/amin share the gradient equally among tied maxima (PyTorch's amax/amin
convention). prod and cumprod are exact at zeros and at every order: dividing by the input
serves first derivatives at inputs with no zero (nor tiny value); otherwise prod's rule
forms the products of the others from exclusive cumulative products, and cumprod's rules
solve their linear recurrence by products and sums only.
"""

import functools

import numpy as np

from .. import numpy as fnp
from .._core.backend import array_module
from .._core.tracer import Tracer, getval
from .._core.abstract import dtype_rule, reduction_rule
from .._batching.families import axis_batch
from .._core.rules import as_primitive, defabstract_eval, defbatch, defjvp, defjvp_linear, defvjp
from ._util import accepts_sequences, as_input, check_axes, check_axis, dtype_of, ndim, norm_axes
from ._util import shape, wrap
from ._util import values_hidden, wrap_nondiff


def _reduction(fun, kind):
    """`fun` (a reduction primitive taking an array first) also taking a list/tuple of traced
    values there; on a device, whose reductions (CuPy's) have no `where=` or `initial=`,
    those two are applied with fnad.numpy ops around the reduction: masked-out entries
    become the identity (`initial` for max/min), and `initial` joins the result. Plain
    NumPy calls pay one type check and one test of the keywords."""
    def reduce(a, *args, **kwargs):
        if type(a) is list or type(a) is tuple:
            a = as_input(a)
        if (kwargs and ("where" in kwargs or "initial" in kwargs)
                and (kwargs.get("where") is not None or kwargs.get("initial") is not None)
                and array_module(a) is not np):
            return _masked_reduction(fun, kind, a, args, kwargs)
        return fun(a, *args, **kwargs)
    functools.update_wrapper(reduce, fun)
    reduce.primitive = fun.primitive
    return reduce


_IDENTITY = {"sum": 0, "any": False, "all": True}
_JOIN = {"sum": lambda r, i: r + i, "max": lambda r, i: fnp.maximum(r, i),
         "min": lambda r, i: fnp.minimum(r, i)}


def _masked_reduction(fun, kind, a, args, kwargs):
    kwargs = dict(kwargs)
    where, initial = kwargs.pop("where", None), kwargs.pop("initial", None)
    if kind == "mean":
        if where is None:
            return fun(a, *args, **kwargs)
        where = fnp.broadcast_to(where, shape(a))
        axis = kwargs.get("axis", args[0] if args else None)
        keep = kwargs.get("keepdims", False)
        total = sum(fnp.where(where, a, 0), *args, **kwargs)
        return total / sum(where, axis=axis, keepdims=keep).astype(dtype_of(total))
    if where is not None:
        fill = _IDENTITY.get(kind, initial)
        if fill is None:
            raise ValueError(f"reduction operation '{kind}imum' does not have an identity, "
                             "so to use a where mask one has to specify 'initial'")
        a = fnp.where(where, a, fill)
    res = fun(a, *args, **kwargs)
    return res if initial is None else _JOIN[kind](res, initial)


# (a list of traced arrays is stacked first, as NumPy converts lists)
sum = _reduction(wrap(np.sum), "sum")
mean = _reduction(wrap(np.mean), "mean")
amax = _reduction(wrap(np.amax), "max")
amin = _reduction(wrap(np.amin), "min")
max = _reduction(wrap(np.max), "max")
min = _reduction(wrap(np.min), "min")
any = _reduction(wrap_nondiff(np.any, "any"), "any")
all = _reduction(wrap_nondiff(np.all, "all"), "all")
count_nonzero = accepts_sequences(wrap_nondiff(np.count_nonzero, "count_nonzero"))
# in the operand's own dtype: the callers convert first (to `dtype=`, or NumPy's accumulator)
_prod_p = wrap(lambda a, axis=None, keepdims=False: np.prod(a, axis=axis, keepdims=keepdims,
                                                            dtype=a.dtype), "prod")
_cumsum_p = wrap(lambda a, axis: np.cumsum(a, axis=axis, dtype=a.dtype), "cumsum")
_cumprod_p = wrap(lambda a, axis: np.cumprod(a, axis=axis, dtype=a.dtype), "cumprod")


def _in_dtype(a, dtype):
    """`a` converted to `dtype`; without one, NumPy's accumulator for sums and products:
    booleans and integers narrower than the platform integer widen to it (unsigned to
    unsigned), other dtypes stay."""
    if dtype is not None:
        return fnp.astype(a, dtype, copy=False)
    dt = dtype_of(a)
    if dt.kind == "b" or (dt.kind == "i" and dt.itemsize < np.dtype(np.int_).itemsize):
        return fnp.asarray(a, dtype=np.int_)
    if dt.kind == "u" and dt.itemsize < np.dtype(np.uint).itemsize:
        return fnp.asarray(a, dtype=np.uint)
    return a


def _no_out(fname, out):
    if out is not None:
        raise TypeError(f"fnad.numpy.{fname}: out= is not supported (arrays are immutable under "
                        "transforms); use the returned array.")


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product of elements over `axis` (NumPy semantics); exact gradients at zeros.

    Example:
      fnp.prod(x, axis=-1, keepdims=True)
    """
    _no_out("prod", out)
    a = as_input(a)
    a = _in_dtype(a, dtype)
    if where is not None:
        a = fnp.where(where, a, fnp.ones_like(a))
    if ndim(a) == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1):
        axis = ()  # NumPy's reductions take axis 0 or -1 of a 0-d array as no axis
    axis = None if axis is None else check_axes(axis, ndim(a))
    res = _prod_p(a, axis=axis, keepdims=bool(keepdims))
    return res if initial is None else res * initial


def _cumulative(prim, a, axis, dtype, out):
    """cumsum's and cumprod's shared body: `prim` along `axis` (of the flattened array when
    axis is None), after a cast to `dtype`."""
    _no_out(prim.__name__, out)
    a = _in_dtype(as_input(a), dtype)
    if axis is None:
        a, axis = fnp.ravel(a), 0
    elif ndim(a) == 0:  # NumPy takes axis 0 or -1 of a 0-d array as that of a 1-element one
        a, axis = fnp.reshape(a, (1,)), check_axis(axis, 1)
    return prim(a, check_axis(axis, ndim(a)))


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along `axis` (of the flattened array when axis is None)."""
    return _cumulative(_cumsum_p, a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along `axis`; exact gradients at zeros."""
    return _cumulative(_cumprod_p, a, axis, dtype, out)


def _array_api_cumulative(fun, name, x, axis, dtype, out, include_initial, initial):
    if axis is None:
        if ndim(x) > 1:
            raise ValueError(f"{name}: axis must be given for arrays with ndim > 1.")
        axis = 0
    res = fun(x, axis=axis, dtype=dtype, out=out)
    return _prepend(res, axis, initial) if include_initial else res


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """NumPy 2's array-API cumulative sum (`include_initial` prepends a zero)."""
    return _array_api_cumulative(cumsum, "cumulative_sum", x, axis, dtype, out,
                                 include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """NumPy 2's array-API cumulative product (`include_initial` prepends a one)."""
    return _array_api_cumulative(cumprod, "cumulative_prod", x, axis, dtype, out,
                                 include_initial, 1)


def _prepend(res, axis, value):
    s = list(shape(res))
    s[axis] = 1
    return fnp.concatenate([fnp.full_like(res, value, shape=tuple(s)), res], axis=axis)


# ----------------------------------------------------------------------------- sum, mean


def _expand_reduced(g, x_shape, axis, keepdims):
    """Reinsert reduced axes of size 1 so that `g` broadcasts against the input."""
    if keepdims:
        return g
    axes = norm_axes(axis, len(x_shape))
    kept = tuple(1 if i in axes else s for i, s in enumerate(x_shape))
    return g if shape(g) == kept else fnp.reshape(g, kept)


def _masked(g, x, where):
    """`g` broadcast to x's shape, zero where the reduction's `where=` mask is False."""
    g = fnp.broadcast_to(g, shape(x))
    return g if where is None else fnp.where(where, g, fnp.zeros_like(g))


def _vjp_sum(g, ans, x, axis=None, dtype=None, out=None, keepdims=False, where=None, **kw):
    return _masked(_expand_reduced(g, shape(x), axis, keepdims), x, where)


def _jvp_sum(t, ans, x, axis=None, dtype=None, out=None, keepdims=False, where=None, **kw):
    # `initial` is a constant: it adds to the value, not to the tangent
    kw = {} if where is None else {"where": where}
    return sum(t, axis=axis, dtype=dtype, keepdims=keepdims, **kw)


def _vjp_mean(g, ans, x, axis=None, dtype=None, out=None, keepdims=False, where=None, **kw):
    x_shape = shape(x)
    if where is None:
        n = int(np.prod([x_shape[a] for a in norm_axes(axis, len(x_shape))]))
    else:  # the count of selected elements in each reduced slice; a slice with none selected
        # has no derivative (its elements are all masked), so its count is taken as 1, not 0/0
        n = fnp.maximum(fnp.sum(fnp.broadcast_to(where, x_shape), axis=axis, keepdims=True), 1)
    return _vjp_sum(g, ans, x, axis, keepdims=keepdims, where=where) / n


defvjp(sum, _vjp_sum)
defjvp(sum, _jvp_sum)
defvjp(mean, _vjp_mean)
defjvp_linear(mean)

# ----------------------------------------------------------------------------- max, min
# Ties share the gradient equally (PyTorch's amax/amin and full max()/min() reductions).


def _extreme_hits(ans, x, axis, keepdims, where):
    """The elements equal to the extreme (and selected by `where=`), and their count in each
    reduced slice (0 where `initial=` was the extreme)."""
    hit = fnp.equal(x, _expand_reduced(ans, shape(x), axis, keepdims))
    if where is not None:
        hit = fnp.logical_and(hit, where)
    return hit, fnp.maximum(fnp.sum(hit, axis=axis, keepdims=True), 1)


def _vjp_extreme(g, ans, x, axis=None, out=None, keepdims=False, where=None, **kw):
    hit, count = _extreme_hits(ans, x, axis, keepdims, where)
    weight = fnp.where(hit, 1.0 / count, 0.0).astype(dtype_of(ans))
    return _vjp_sum(g, ans, x, axis, keepdims=keepdims) * weight


def _jvp_extreme(t, ans, x, axis=None, out=None, keepdims=False, where=None, **kw):
    hit, count = _extreme_hits(ans, x, axis, keepdims, where)
    total = fnp.sum(fnp.where(hit, t, fnp.zeros_like(t)) / count, axis=axis, keepdims=True)
    if keepdims or ndim(x) == 0:  # a 0-d x reduced over axis 0 stays 0-d, as NumPy's amax
        return total
    return fnp.squeeze(total, axis=norm_axes(axis, ndim(x)))


for _f in (amax, amin, max, min):
    defvjp(_f, _vjp_extreme)
    defjvp(_f, _jvp_extreme)
del _f

# ----------------------------------------------------------------------------- prod


def _others_last(x):
    """For `x` of shape (..., n): out[..., i] = prod_{k != i} x[..., k], exact at zeros: the
    exclusive products from the left times those from the right (no division)."""
    last = ndim(x) - 1
    before = _shift_in_one(_cumprod_p(x, last))
    return before * fnp.flip(_shift_in_one(_cumprod_p(fnp.flip(x, -1), last)), -1)


def _divides_safely(x, ans):
    """True when the quotient forms (ans / x) of prod's and cumprod's rules are exact: no
    zero or tiny input (0 * inf was NaN) and no product that underflowed to 0. False on a
    device, where checking would read values back: the product forms are exact anyway."""
    if values_hidden(x):
        return False
    v, out = getval(x), getval(ans)
    small = np.finfo(np.result_type(v.dtype, 1.0)).tiny ** 0.25
    return not bool((np.abs(v) < small).any()) and bool((out != 0).all())


def _first_order_safe(x, ans):
    """The quotient forms serve first derivatives only: where `x` is traced further (a
    higher order is being taken) their derivatives cancel catastrophically at small values,
    so the rules then use products alone."""
    return (not isinstance(x, Tracer) and not isinstance(ans, Tracer)
            and _divides_safely(x, ans))


def _prod_others(x, axis):
    """d prod(x, axis) / dx: the product of the other reduced elements, shaped like `x`."""
    xs = shape(x)
    axes = norm_axes(axis, len(xs))
    if not isinstance(x, Tracer):
        p = fnp.prod(x, axis=axes, keepdims=True)
        if _divides_safely(x, p):
            return p / x
    kept = [i for i in range(len(xs)) if i not in axes]
    perm = kept + list(axes)
    moved = fnp.transpose(x, perm)
    flat = fnp.reshape(moved, tuple(xs[i] for i in kept) + (-1,))
    others = fnp.reshape(_others_last(flat), shape(moved))
    return fnp.transpose(others, tuple(np.argsort(perm)))


def _vjp_prod(g, ans, x, axis=None, keepdims=False):
    return _vjp_sum(g, ans, x, axis, keepdims=keepdims) * _prod_others(x, axis)


def _jvp_prod(t, ans, x, axis=None, keepdims=False):
    return fnp.sum(t * _prod_others(x, axis), axis=axis, keepdims=keepdims)


defvjp(_prod_p, _vjp_prod)
defjvp(_prod_p, _jvp_prod)

# ----------------------------------------------------------------------------- cumsum, cumprod


def _rev_cumsum(g, axis):
    return fnp.flip(_cumsum_p(fnp.flip(g, axis), axis), axis)


defvjp(_cumsum_p, lambda g, ans, a, axis: _rev_cumsum(g, axis))
defjvp_linear(_cumsum_p)


def _linear_scan(a, b):
    """x[..., j] = a[..., j] * x[..., j - 1] + b[..., j] along the last axis (x[..., -1] = 0),
    in log2(n) doubling steps of products and sums: no division, so exact at zeros and tiny
    values to every order (the quotient forms cancelled catastrophically there)."""
    n, d = shape(b)[-1], 1
    while d < n:
        b = fnp.concatenate([b[..., :d], a[..., d:] * b[..., :-d] + b[..., d:]], axis=-1)
        a = fnp.concatenate([a[..., :d], a[..., d:] * a[..., :-d]], axis=-1)
        d *= 2
    return b


def _shift_in_one(x):
    """[1, x_0, ..., x_{n-2}] along the last axis (the exclusive products from inclusive)."""
    if shape(x)[-1] == 0:
        return x
    return fnp.concatenate([fnp.ones_like(x, shape=shape(x)[:-1] + (1,)), x[..., :-1]], axis=-1)


# out_j = out_{j-1} a_j, so d out_j = a_j d out_{j-1} + out_{j-1} t_j (a linear recurrence),
# and the VJP is out_{i-1} S_i with S_i = g_i + a_{i+1} S_{i+1} (the same, run backwards).
def _vjp_cumprod(g, ans, a, axis):
    if _first_order_safe(a, ans):
        return _rev_cumsum(g * ans, axis) / a
    al, gl = fnp.moveaxis(a, axis, -1), fnp.moveaxis(g, axis, -1)
    s = fnp.flip(_linear_scan(_shift_in_one(fnp.flip(al, -1)), fnp.flip(gl, -1)), -1)
    return fnp.moveaxis(_shift_in_one(fnp.moveaxis(ans, axis, -1)) * s, -1, axis)


def _jvp_cumprod(t, ans, a, axis):
    if _first_order_safe(a, ans):
        return ans * _cumsum_p(t / a, axis)
    al, tl = fnp.moveaxis(a, axis, -1), fnp.moveaxis(t, axis, -1)
    return fnp.moveaxis(_linear_scan(al, _shift_in_one(fnp.moveaxis(ans, axis, -1)) * tl),
                        -1, axis)


defvjp(_cumprod_p, _vjp_cumprod)
defjvp(_cumprod_p, _jvp_cumprod)

# ---------------------------------------------------------------- abstract evaluation, batching

for _f in (sum, mean, amax, amin, max, min, any, all, count_nonzero, _prod_p):
    defabstract_eval(_f, reduction_rule(as_primitive(_f).impl))
    defbatch(_f, axis_batch(_f))  # the batch axis first, `axis` shifted by one
for _f in (_cumsum_p, _cumprod_p):
    defabstract_eval(_f, dtype_rule(as_primitive(_f).impl))
    defbatch(_f, axis_batch(_f))
del _f
