"""`jax.lax`'s reductions, windowed reductions and dot products, from fnad.numpy.

`reduce` with one of lax's (or fnad.numpy's) add/mul/max/min/and/or as its computation
runs fnad.numpy's reduction; any other computation runs as a tree of vectorised calls
(log2 of the reduced size deep), so it must be associative and commutative, as XLA
requires. `reduce_window` folds `computation` over the strided slices of the padded
operand, one per window position. `precision=` is accepted and ignored (docs/lax.md).
"""

import itertools

import numpy as np

from .. import numpy as fnp
from .._core.abstract import aval_of
from .._core.tree import tree_flatten, tree_unflatten
from ..numpy._precision import preferred_operands
from . import _elementwise as _ew
from ._structural import pad, scalar_like

__all__ = ["reduce", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
           "reduce_or", "reduce_xor", "argmax", "argmin", "reduce_window",
           "reduce_window_shape_tuple", "padtype_to_pads", "dot_general", "dot", "batch_matmul"]

# computations recognised by `reduce`: fnad.numpy's reduction for each
def keep_dtype(fn):
    """`fn` (sum, prod, cumsum, cumprod) keeping an integer operand's dtype, as lax does
    (NumPy widens int32 and uint8 sums to 64 bits; the cast back wraps as the narrow sum
    would have)."""
    def kept(x, axis):
        dt = aval_of(x).dtype
        return fn(x, axis=axis).astype(dt) if dt.kind in "iu" else fn(x, axis=axis)
    return kept


_sum, _prod = keep_dtype(fnp.sum), keep_dtype(fnp.prod)
_MONOIDS = {_ew.add: _sum, fnp.add: _sum, _ew.mul: _prod, fnp.multiply: _prod,
            _ew.max: fnp.max, fnp.maximum: fnp.max, _ew.min: fnp.min, fnp.minimum: fnp.min,
            fnp.logical_and: fnp.all, fnp.logical_or: fnp.any}


# max and min windows choose an entry (NaN first) rather than combine two, so that ties
# send the derivative to one entry, not half to each
_CHOOSERS = {_ew.max: fnp.greater, fnp.maximum: fnp.greater, _ew.min: fnp.less,
             fnp.minimum: fnp.less}


def _choose(beats, init, slices):
    """The window entry that `beats` all before it (NaN first), then `init` if it beats that:
    JAX's max/min windows, whose derivative goes to a window's first extreme entry."""
    acc = slices[0]
    for b in slices[1:]:
        acc = fnp.where(beats(b, acc) | fnp.isnan(b), b, acc)
    return fnp.where(beats(init, acc), init, acc)


def _dims(fname, dimensions, nd):
    dims = tuple(int(d) for d in dimensions)
    if any(not 0 <= d < nd for d in dims) or len(set(dims)) != len(dims):
        raise ValueError(f"{fname}: dimensions {dims} must be distinct axes in [0, {nd}).")
    return dims


def _tree_reduce(combine, leaves):
    """Combine the entries along axis 0 pairwise, halving the count each level."""
    n = aval_of(leaves[0]).shape[0]
    while n > 1:
        half = n // 2
        out = combine([x[:half] for x in leaves], [x[half:2 * half] for x in leaves])
        if n % 2:
            out = [fnp.concatenate([o, x[2 * half:]]) for o, x in zip(out, leaves)]
        leaves, n = out, half + n % 2
    return [x[0] for x in leaves]


def _operands(fname, operands, init_values, computation):
    """The leaves of the operands and of the init values (in the operands' dtypes), their
    structure, and `computation` as a function of lists of leaves."""
    leaves, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if init_tree != tree or not leaves:
        raise TypeError(f"{fname}: operands {tree} and init values {init_tree} must have the "
                        "same structure, with at least one array.")
    leaves = [fnp.asarray(x) for x in leaves]
    if any(aval_of(x).shape != aval_of(leaves[0]).shape for x in leaves):
        raise ValueError(f"{fname}: every operand must have the same shape.")
    inits = [scalar_like(i, aval_of(x).dtype) for i, x in zip(inits, leaves)]

    def combine(a, b):
        out, out_tree = tree_flatten(computation(tree_unflatten(tree, a),
                                                 tree_unflatten(tree, b)))
        if out_tree != tree:
            raise TypeError(f"{fname}: computation must return the structure {tree}, got "
                            f"{out_tree}.")
        return out
    return leaves, inits, tree, combine


def reduce(operands, init_values, computation, dimensions):
    """Reduce `operands` over `dimensions` with `computation(acc, x)`, starting from
    `init_values` (`jax.lax.reduce`); operands and init values may be matching pytrees.

    Example:
      reduce(x, 0.0, lax.add, (0,))  # x.sum(0)
      reduce((v, i), (-np.inf, 0), lambda a, b: ..., (0,))  # a variadic argmax
    """
    leaves, inits, tree, combine = _operands("lax.reduce", operands, init_values, computation)
    shape = aval_of(leaves[0]).shape
    dims = _dims("lax.reduce", dimensions, len(shape))
    kept = tuple(s for i, s in enumerate(shape) if i not in dims)
    if any(shape[d] == 0 for d in dims):
        return tree_unflatten(tree, [fnp.full_like(x, i, shape=kept)
                                     for i, x in zip(inits, leaves)])
    monoid = _MONOIDS.get(computation) if len(leaves) == 1 else None
    if monoid is not None:
        return tree_unflatten(tree, combine(inits, [monoid(leaves[0], axis=dims)]))
    rest = [d for d in range(len(shape)) if d not in dims]
    flat = [fnp.reshape(fnp.transpose(x, dims + tuple(rest)), (-1,) + kept) for x in leaves]
    return tree_unflatten(tree, combine(inits, _tree_reduce(combine, flat)))


def _over_axes(fn, name, what):
    def reduction(operand, axes):
        return fn(operand, axis=tuple(int(a) for a in axes))
    reduction.__name__ = reduction.__qualname__ = name
    reduction.__doc__ = f"{what} over `axes` (`jax.lax.{name}`)."
    return reduction


reduce_sum = _over_axes(_sum, "reduce_sum", "The sum")
reduce_prod = _over_axes(_prod, "reduce_prod", "The product")
reduce_max = _over_axes(fnp.max, "reduce_max", "The maximum")
reduce_min = _over_axes(fnp.min, "reduce_min", "The minimum")
reduce_and = _over_axes(fnp.all, "reduce_and", "Logical and")
reduce_or = _over_axes(fnp.any, "reduce_or", "Logical or")


def reduce_xor(operand, axes):
    """Bitwise (logical, for booleans) exclusive or over `axes` (`jax.lax.reduce_xor`)."""
    return reduce(operand, 0, fnp.bitwise_xor, axes)


def argmax(operand, axis, index_dtype):
    """The index of the first maximum along `axis`, as `index_dtype` (`jax.lax.argmax`)."""
    return fnp.argmax(operand, axis=int(axis)).astype(np.dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    """The index of the first minimum along `axis`, as `index_dtype` (`jax.lax.argmin`)."""
    return fnp.argmin(operand, axis=int(axis)).astype(np.dtype(index_dtype))


# ----------------------------------------------------------------------------- windows

def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Per-axis `(low, high)` pads for a padding name (`jax.lax.padtype_to_pads`): 'VALID'
    pads nothing; 'SAME' pads so the output has `ceil(in / stride)` entries, the odd one
    at the end ('SAME_LOWER': at the start).

    Example:
      padtype_to_pads((5,), (3,), (2,), "SAME")  # [(1, 1)]
    """
    name = str(getattr(padding, "name", padding)).upper()
    if name == "VALID":
        return [(0, 0)] * len(in_shape)
    if name not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"padtype_to_pads: padding must be 'VALID', 'SAME' or 'SAME_LOWER', "
                         f"got {padding!r}.")
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        out = -(-int(n) // int(s))
        total = max((out - 1) * int(s) + int(w) - int(n), 0)
        small = total // 2
        pads.append((small, total - small) if name == "SAME" else (total - small, small))
    return pads


def _dilate(shape, dilation):
    return tuple(0 if d == 0 else 1 + r * (d - 1) for d, r in zip(shape, dilation))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """The result shape of `reduce_window` for explicit `(low, high)` pads
    (`jax.lax.reduce_window_shape_tuple`)."""
    if base_dilation is not None:
        operand_shape = _dilate(operand_shape, base_dilation)
    if window_dilation is not None:
        window_dimensions = _dilate(window_dimensions, window_dilation)
    padded = [d + lo + hi for d, (lo, hi) in zip(operand_shape, padding)]
    return tuple(0 if p < w else (p - w) // s + 1
                 for p, w, s in zip(padded, window_dimensions, window_strides))


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """`computation` over every window of `operand` (`jax.lax.reduce_window`): windows of
    `window_dimensions` every `window_strides`, over the operand padded with `init_value`
    ('VALID', 'SAME', 'SAME_LOWER' or `(low, high)` pairs) and, with `base_dilation`,
    spread out by it; `window_dilation` spaces a window's entries. Operand and init value
    may be matching pytrees.

    Example:
      reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")  # 2x2 max-pool
    """
    leaves, inits, tree, combine = _operands("lax.reduce_window", operand, init_value,
                                             computation)
    shape = aval_of(leaves[0]).shape
    nd = len(shape)
    window = tuple(int(w) for w in window_dimensions)
    strides = (1,) * nd if window_strides is None else tuple(int(s) for s in window_strides)
    base = (1,) * nd if base_dilation is None else tuple(int(b) for b in base_dilation)
    wdil = (1,) * nd if window_dilation is None else tuple(int(w) for w in window_dilation)
    if not len(window) == len(strides) == len(base) == len(wdil) == nd:
        raise ValueError(f"lax.reduce_window: window_dimensions {window}, window_strides, "
                         f"base_dilation and window_dilation need one entry per axis of the "
                         f"operand's shape {shape}.")
    if isinstance(padding, str) or hasattr(padding, "name"):
        padding = padtype_to_pads(shape, _dilate(window, wdil), strides, padding)
    pads = [(int(lo), int(hi)) for lo, hi in padding]
    out_shape = reduce_window_shape_tuple(shape, window, strides, pads, base, wdil)
    padded = [pad(x, i, [(lo, hi, b - 1) for (lo, hi), b in zip(pads, base)])
              for x, i in zip(leaves, inits)]
    slices = []
    for offset in itertools.product(*(range(w) for w in window)):
        index = tuple(slice(k * r, k * r + (n - 1) * s + 1, s) if n else slice(0, 0)
                      for k, r, s, n in zip(offset, wdil, strides, out_shape))
        slices.append([p[index] for p in padded])
    beats = _CHOOSERS.get(computation) if len(leaves) == 1 else None
    if beats is not None and slices:
        return tree_unflatten(tree, [_choose(beats, inits[0], [s[0] for s in slices])])
    acc = [fnp.full_like(x, i, shape=out_shape) for i, x in zip(inits, leaves)]
    for sl in slices:
        acc = combine(acc, sl)
    return tree_unflatten(tree, acc)


# ----------------------------------------------------------------------------- dot products

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """The general tensor contraction (`jax.lax.dot_general`): `dimension_numbers` is
    `((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`; the result's axes are
    the batch axes, then lhs's free axes, then rhs's. With `preferred_element_type` the
    operands are converted to it first (so integers can accumulate as floats).

    Example:
      dot_general(a, b, (((2,), (1,)), ((0,), (0,))))  # batched a @ b
    """
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(int(d) for d in t) for t in (lc, rc, lb, rb))
    x, y = preferred_operands("lax.dot_general", (lhs, rhs), precision, preferred_element_type)
    xs, ys = aval_of(x).shape, aval_of(y).shape
    ok = (len(lc) == len(rc) and len(lb) == len(rb)
          and all(0 <= d < len(xs) for d in lc + lb) and all(0 <= d < len(ys) for d in rc + rb)
          and len(set(lc + lb)) == len(lc + lb) and len(set(rc + rb)) == len(rc + rb)
          and all(xs[a] == ys[b] for a, b in zip(lc + lb, rc + rb)))
    if not ok:
        raise TypeError(f"lax.dot_general: dimension_numbers {dimension_numbers!r} do not fit "
                        f"shapes {xs} and {ys}: contracting and batch axes pair up one to one, "
                        "with equal sizes.")
    if len(xs) + len(ys) > len(_LETTERS):
        raise ValueError("lax.dot_general: operands with more than 52 axes in all.")
    xl = list(_LETTERS[:len(xs)])
    yl = [None] * len(ys)
    for a, b in zip(lc + lb, rc + rb):
        yl[b] = xl[a]
    fresh = iter(_LETTERS[len(xs):])
    yl = [c if c is not None else next(fresh) for c in yl]
    out = ([xl[a] for a in lb] + [xl[a] for a in range(len(xs)) if a not in lc + lb]
           + [yl[b] for b in range(len(ys)) if b not in rc + rb])
    return fnp.einsum(f"{''.join(xl)},{''.join(yl)}->{''.join(out)}", x, y)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None):
    """Vector and matrix products (`jax.lax.dot`): 1-D or 2-D operands, contracting lhs's
    last axis with rhs's first; with `dimension_numbers`, `dot_general`."""
    if dimension_numbers is None:
        nl, nr = aval_of(lhs).ndim, aval_of(rhs).ndim
        if not (1 <= nl <= 2 and 1 <= nr <= 2):
            raise TypeError(f"lax.dot: takes 1-D or 2-D operands, got {nl}-D and {nr}-D; use "
                            "lax.dot_general (or dimension_numbers=) for more axes.")
        dimension_numbers = (((nl - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix products over equal leading axes (`jax.lax.batch_matmul`)."""
    _ew.check_precision("lax.batch_matmul", precision)
    xs, ys = aval_of(lhs).shape, aval_of(rhs).shape
    if len(xs) < 2 or len(xs) != len(ys) or xs[:-2] != ys[:-2]:
        raise ValueError(f"lax.batch_matmul: operands need the same leading (batch) axes and "
                         f"at least 2 dimensions, got shapes {xs} and {ys}.")
    return fnp.matmul(lhs, rhs)

