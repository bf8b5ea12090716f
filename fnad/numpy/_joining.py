"""Joining and splitting: atleast_*, hstack/vstack/dstack/column_stack, split family.

All but `unstack` are compositions of reshape, concatenate and basic slicing, whose rules
give the derivatives (of any order). `unstack` is one primitive with many outputs: slicing
each part separately would give each its own full-size zero cotangent in the backward pass.
"""

import numpy as np

from .. import numpy as fnp
from .._batching.families import to_front
from .._core.rules import defabstract_eval, defbatch, defjvp, defvjp
from ._util import ndim, shape, wrap


def _one_or_tuple(res):
    return res[0] if len(res) == 1 else tuple(res)


def atleast_1d(*arys):
    """Views with at least one dimension (a tuple when given several arrays)."""
    return _one_or_tuple([fnp.reshape(a, (1,)) if ndim(a) == 0 else fnp.asarray(a)
                          for a in arys])


def atleast_2d(*arys):
    """Views with at least two dimensions (1-D (N,) becomes (1, N))."""
    res = []
    for a in arys:
        s = shape(a)
        res.append(fnp.reshape(a, (1,) * (2 - len(s)) + s) if len(s) < 2 else fnp.asarray(a))
    return _one_or_tuple(res)


def atleast_3d(*arys):
    """Views with at least three dimensions ((N,) -> (1, N, 1), (M, N) -> (M, N, 1))."""
    res = []
    for a in arys:
        s = shape(a)
        new = {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}.get(len(s), s)
        res.append(fnp.reshape(a, new) if new != s else fnp.asarray(a))
    return _one_or_tuple(res)


def _as_list(tup, fname):
    """The arrays to join: a list/tuple as it is, an array as the sequence of its rows
    (as NumPy iterates it)."""
    if hasattr(tup, "shape") and hasattr(tup, "dtype") and ndim(tup) > 0:
        return list(unstack(tup))
    if not isinstance(tup, (list, tuple)):
        raise TypeError(f"{fname}: arrays to stack must be passed as a list or tuple, got "
                        f"{type(tup).__name__}.")
    return list(tup)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """Stack arrays column-wise (along axis 1; axis 0 for 1-D arrays)."""
    arrs = [atleast_1d(a) for a in _as_list(tup, "hstack")]
    axis = 0 if arrs and ndim(arrs[0]) == 1 else 1
    return fnp.concatenate(arrs, axis=axis, dtype=dtype)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """Stack arrays row-wise (1-D arrays become rows)."""
    return fnp.concatenate([atleast_2d(a) for a in _as_list(tup, "vstack")], axis=0,
                           dtype=dtype)


row_stack = vstack


def dstack(tup):
    """Stack arrays along the third axis."""
    return fnp.concatenate([atleast_3d(a) for a in _as_list(tup, "dstack")], axis=2)


def column_stack(tup):
    """Stack 1-D arrays as columns of a 2-D array (2-D arrays are stacked as they are)."""
    arrs = [fnp.reshape(a, (-1, 1)) if ndim(a) < 2 else a
            for a in _as_list(tup, "column_stack")]
    return fnp.concatenate(arrs, axis=1)


def array_split(ary, indices_or_sections, axis=0):
    """Split into sub-arrays; with N sections the first len % N parts get one extra item."""
    n = shape(ary)[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("array_split: number of sections must be larger than 0.")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    nd = ndim(ary)
    axis = axis % nd
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        idx = (slice(None),) * axis + (slice(lo, hi),)
        out.append(fnp.getitem(ary, idx))
    return out


def split(ary, indices_or_sections, axis=0):
    """Split into equal sub-arrays (N sections must divide the axis) or at given indices."""
    if isinstance(indices_or_sections, (int, np.integer)):
        n = shape(ary)[axis]
        if n % int(indices_or_sections):
            raise ValueError(f"split: array split does not result in an equal division (axis "
                             f"{axis} of length {n} into {indices_or_sections}); use "
                             "array_split for unequal parts.")
    return array_split(ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    """Split along axis 1 (axis 0 for 1-D arrays)."""
    return split(ary, indices_or_sections, axis=1 if ndim(ary) > 1 else 0)


def vsplit(ary, indices_or_sections):
    """Split along axis 0 (arrays of at least 2 dimensions)."""
    if ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions.")
    return split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    """Split along axis 2 (arrays of at least 3 dimensions)."""
    if ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions.")
    return split(ary, indices_or_sections, axis=2)


def _unstack_impl(x, axis):
    lead = (slice(None),) * axis
    return tuple(x[lead + (i,)] for i in range(x.shape[axis]))


_unstack_p = wrap(_unstack_impl, "unstack", multiple_results=True)
defvjp(_unstack_p, lambda g, ans, x, axis: fnp.stack(list(g), axis=axis))
defjvp(_unstack_p, lambda t, ans, x, axis: _unstack_p(t, axis))


def _batch_unstack(args, dims, **kw):
    x, axis = to_front(args[0], dims[0]), args[1] if len(args) > 1 else kw["axis"]
    out = _unstack_p(x, int(axis) % (len(shape(x)) - 1) + 1)
    return out, (0,) * len(out)


defbatch(_unstack_p, _batch_unstack)


def unstack(x, /, *, axis=0):
    """Split along `axis` into a tuple of arrays with that axis removed (NumPy 2.1).

    Example:
      rows = fnp.unstack(x)   # x[0], x[1], ...
    """
    nd = ndim(x)
    if not -nd <= axis < nd:
        raise ValueError(f"fnad.numpy.unstack: axis {axis} is out of range for an array of "
                         f"shape {shape(x)}; pass an axis in [-{nd}, {nd}) (x needs one).")
    return _unstack_p(fnp.asarray(x), axis % nd)


def append(arr, values, axis=None):
    """`values` appended to the end of `arr` (both flattened when axis is None)."""
    if axis is None:
        return fnp.concatenate([fnp.ravel(arr), fnp.ravel(values)], axis=0)
    return fnp.concatenate([arr, values], axis=axis)

# ----------------------------------------------------------------------------- abstract evaluation


def _unstack_aval(x, axis):
    ax = axis % x.ndim
    part = x.update(shape=x.shape[:ax] + x.shape[ax + 1:], weak_type=False)
    return (part,) * x.shape[ax]


defabstract_eval(_unstack_p, _unstack_aval)
