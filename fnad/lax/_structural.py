"""`jax.lax`'s structural operations (slicing, padding, reshaping), from fnad.numpy.

Dynamic slices follow JAX, not NumPy: a negative start counts from the end, and a start
that would run the slice past the array is moved back (clamped) so the slice has the
size asked for; the start indices may be traced (under jit, vmap, grad). Static slices
(`slice`, `slice_in_dim`, `index_in_dim`) take Python ints.
"""

import builtins

import numpy as np

from .. import numpy as fnp
from .._core.abstract import aval_of
from .._core.backend import array_module, is_device_array
from .._core.tracer import Tracer

__all__ = ["slice", "slice_in_dim", "index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
           "dynamic_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim",
           "dynamic_update_index_in_dim", "pad", "concatenate", "broadcast", "broadcast_in_dim",
           "reshape", "squeeze", "expand_dims", "transpose", "rev", "collapse",
           "broadcast_to_rank", "broadcast_shapes", "split"]


def _shape(x):
    return aval_of(x).shape


def module_of(x):
    """The array module (NumPy or the device's) that `x` lives in, read without its value."""
    return aval_of(x).xp if isinstance(x, Tracer) else array_module(x)


def scalar_like(value, dtype):
    """`value` as a scalar of `dtype` that mixes with arrays on any device: a traced or
    device value cast (it stays where it is), anything else the Python number of its value
    in `dtype` (weakly typed, so it takes the array's dtype)."""
    if isinstance(value, Tracer) or is_device_array(value):
        return fnp.asarray(value).astype(dtype)
    return np.asarray(value).astype(dtype).item()


def _axis(fname, axis, nd):
    if not -nd <= axis < nd:
        raise ValueError(f"{fname}: axis {axis} is out of range for an operand of {nd} "
                         f"dimensions.")
    return axis % nd


# ----------------------------------------------------------------------------- static slices

def slice(operand, start_indices, limit_indices, strides=None):
    """`operand[start:limit:stride]` on every axis (`jax.lax.slice`); Python ints.

    Example:
      slice(np.arange(10), (2,), (8,), (3,))  # [2, 5]
    """
    shape = _shape(operand)
    strides = (1,) * len(shape) if strides is None else tuple(strides)
    if not len(start_indices) == len(limit_indices) == len(strides) == len(shape):
        raise ValueError(f"lax.slice: start_indices {tuple(start_indices)}, limit_indices "
                         f"{tuple(limit_indices)} and strides {strides} need one entry per "
                         f"axis of the operand's shape {shape}.")
    for s, lo, hi, st in zip(shape, start_indices, limit_indices, strides):
        if not (0 <= lo <= hi <= s and st >= 1):
            raise ValueError(f"lax.slice: need 0 <= start <= limit <= size and stride >= 1 on "
                             f"every axis; got start {tuple(start_indices)}, limit "
                             f"{tuple(limit_indices)}, strides {strides} for shape {shape}.")
    index = tuple(builtins.slice(int(lo), int(hi), int(st))
                  for lo, hi, st in zip(start_indices, limit_indices, strides))
    return fnp.asarray(operand)[index]


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """`slice` along one axis (`jax.lax.slice_in_dim`); None or negative indices count as in
    Python (from the end)."""
    shape = _shape(operand)
    axis = _axis("lax.slice_in_dim", axis, len(shape))
    lo, hi, _ = builtins.slice(start_index, limit_index).indices(shape[axis])
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = lo, builtins.max(lo, hi), int(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """Entry `index` (a Python int, negative from the end) along `axis`
    (`jax.lax.index_in_dim`), keeping that axis with size 1 unless `keepdims=False`."""
    shape = _shape(operand)
    axis = _axis("lax.index_in_dim", axis, len(shape))
    if not -shape[axis] <= index < shape[axis]:
        raise IndexError(f"lax.index_in_dim: index {index} is out of bounds for axis {axis} of "
                         f"size {shape[axis]}.")
    index = int(index) % shape[axis]
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else fnp.squeeze(out, axis)


# ----------------------------------------------------------------------------- dynamic slices

def _start(fname, index, size, dim, allow_negative):
    """A start index moved into `[0, dim - size]` (negative first counted from the end)."""
    if isinstance(index, Tracer) or (hasattr(index, "shape") and not np.isscalar(index)):
        if aval_of(index).shape != ():
            raise TypeError(f"{fname}: each start index must be a scalar, got shape "
                            f"{aval_of(index).shape}.")
        if not np.issubdtype(aval_of(index).dtype, np.integer):
            raise TypeError(f"{fname}: start indices must be integers, got "
                            f"{aval_of(index).dtype}.")
        if allow_negative:
            index = fnp.where(index < 0, index + dim, index)
        return fnp.clip(index, 0, dim - size)
    if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
        raise TypeError(f"{fname}: start indices must be integers, got {index!r}.")
    index = int(index)
    if allow_negative and index < 0:
        index += dim
    return int(np.clip(index, 0, dim - size))


def _starts(fname, operand_shape, start_indices, sizes, allow_negative):
    if isinstance(start_indices, Tracer) or hasattr(start_indices, "shape"):
        if len(aval_of(start_indices).shape) != 1:
            raise TypeError(f"{fname}: start_indices as an array must be 1-D, got shape "
                            f"{aval_of(start_indices).shape}.")
        start_indices = [start_indices[i] for i in range(aval_of(start_indices).shape[0])]
    start_indices = list(start_indices)
    if len(start_indices) != len(operand_shape):
        raise ValueError(f"{fname}: {len(start_indices)} start indices for an operand of shape "
                         f"{operand_shape}; give one per axis.")
    flags = ([allow_negative] * len(operand_shape) if isinstance(allow_negative, bool)
             else list(allow_negative))
    for size, dim in zip(sizes, operand_shape):
        if not 0 <= size <= dim:
            raise ValueError(f"{fname}: slice sizes {tuple(sizes)} must lie within the operand's "
                             f"shape {operand_shape}.")
    return [_start(fname, i, s, d, f)
            for i, s, d, f in zip(start_indices, sizes, operand_shape, flags)]


def _open_index(operand, starts, sizes):
    """An index tuple selecting the box at `starts` of `sizes`: slices where the start is a
    Python int, broadcasting index arrays (an open mesh, where `operand` lives) where one is
    traced."""
    if not any(isinstance(s, Tracer) for s in starts):
        return tuple(builtins.slice(s, s + n) for s, n in zip(starts, sizes))
    xp, nd = module_of(operand), len(starts)
    return tuple(fnp.reshape(s + xp.arange(n), (1,) * k + (n,) + (1,) * (nd - k - 1))
                 for k, (s, n) in enumerate(zip(starts, sizes)))


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """The box of `slice_sizes` at `start_indices` (`jax.lax.dynamic_slice`); starts may be
    traced; a start running the box past the end is moved back so the box fits.

    Example:
      dynamic_slice(np.arange(12).reshape(3, 4), (1, 1), (2, 4))  # rows 1-2, all columns
    """
    shape = _shape(operand)
    sizes = tuple(int(s) for s in slice_sizes)
    starts = _starts("lax.dynamic_slice", shape, start_indices, sizes, allow_negative_indices)
    return fnp.getitem(operand, _open_index(operand, starts, sizes))  # NumPy's [] takes no tracer


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """`operand` with the box at `start_indices` replaced by `update`
    (`jax.lax.dynamic_update_slice`); starts are clamped as in `dynamic_slice`."""
    shape, ushape = _shape(operand), _shape(update)
    if len(ushape) != len(shape):
        raise ValueError(f"lax.dynamic_update_slice: update of shape {ushape} and operand of "
                         f"shape {shape} need the same number of dimensions.")
    starts = _starts("lax.dynamic_update_slice", shape, start_indices, ushape,
                     allow_negative_indices)
    return fnp.at(operand)[_open_index(operand, starts, ushape)].set(update)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    """`dynamic_slice` along one axis (`jax.lax.dynamic_slice_in_dim`)."""
    shape = _shape(operand)
    axis = _axis("lax.dynamic_slice_in_dim", axis, len(shape))
    starts = [0] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    """Entry `index` (may be traced; clamped) along `axis` (`jax.lax.dynamic_index_in_dim`)."""
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else fnp.squeeze(out, axis)


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    """`dynamic_update_slice` along one axis (`jax.lax.dynamic_update_slice_in_dim`)."""
    shape = _shape(operand)
    axis = _axis("lax.dynamic_update_slice_in_dim", axis, len(shape))
    starts = [0] * len(shape)
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts,
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """`operand` with entry `index` along `axis` set to `update`, which may lack that axis
    (`jax.lax.dynamic_update_index_in_dim`)."""
    shape = _shape(operand)
    axis = _axis("lax.dynamic_update_index_in_dim", axis, len(shape))
    if len(_shape(update)) == len(shape) - 1:
        update = fnp.expand_dims(update, axis)
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


# ----------------------------------------------------------------------------- pad, joins

def _interior(x, axis, gap, fill):
    """`x` with `gap` copies of `fill` between neighbours along `axis`."""
    shape = _shape(x)
    n = shape[axis]
    if gap == 0 or n < 2:
        return x
    big = list(shape)
    big[axis] = n + (n - 1) * gap
    index = (builtins.slice(None),) * axis + (builtins.slice(None, None, gap + 1),)
    return fnp.at(fnp.full_like(x, fill, shape=tuple(big)))[index].set(x)


def _edges(x, axis, lo, hi, fill):
    """`x` cropped (negative) or extended with `fill` (positive) at both ends of `axis`."""
    shape = _shape(x)
    n = shape[axis]
    crop = (builtins.slice(None),) * axis + (builtins.slice(-lo if lo < 0 else 0,
                                                          n + hi if hi < 0 else n),)
    if lo < 0 or hi < 0:
        x = x[crop]
    parts = []
    for amount in (lo, hi):
        if amount > 0:
            side = list(shape)
            side[axis] = amount
            parts.append(fnp.full_like(x, fill, shape=tuple(side)))
        else:
            parts.append(None)
    pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
    return fnp.concatenate(pieces, axis) if len(pieces) > 1 else x


def pad(operand, padding_value, padding_config):
    """`operand` padded with the scalar `padding_value` (`jax.lax.pad`): per axis a triple
    `(low, high, interior)`; `interior` values go between neighbours, and a negative `low`
    or `high` crops instead. Differentiable in `operand` and `padding_value`.

    Example:
      pad(np.array([1, 2, 3]), 0, [(1, -1, 1)])  # [0, 1, 0, 2, 0]
    """
    shape = _shape(operand)
    config = [tuple(int(v) for v in c) for c in padding_config]
    if len(config) != len(shape) or any(len(c) != 3 or c[2] < 0 for c in config):
        raise ValueError(f"lax.pad: padding_config needs one (low, high, interior) triple per "
                         f"axis of shape {shape}, interior >= 0; got {padding_config!r}.")
    if aval_of(padding_value).shape != ():
        raise TypeError(f"lax.pad: padding_value must be a scalar, got shape "
                        f"{aval_of(padding_value).shape}.")
    x = fnp.asarray(operand)
    fill = scalar_like(padding_value, aval_of(x).dtype)
    for axis, (lo, hi, gap) in enumerate(config):
        n = shape[axis]
        grown = n + (n - 1) * gap if n else 0
        if grown + lo + hi < 0:
            raise ValueError(f"lax.pad: padding {config[axis]} of axis {axis} (size {n}) "
                             "crops more than the axis holds.")
        x = _edges(_interior(x, axis, gap, fill), axis, lo, hi, fill)
    return x


def concatenate(operands, dimension):
    """`operands` joined along `dimension` (`jax.lax.concatenate`)."""
    return fnp.concatenate(list(operands), axis=dimension)


# ----------------------------------------------------------------------------- shapes

def broadcast(operand, sizes):
    """`operand` with leading axes of `sizes` added (`jax.lax.broadcast`)."""
    shape = _shape(operand)
    return fnp.broadcast_to(operand, tuple(sizes) + shape)


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    """`operand` broadcast to `shape`, its axis i becoming axis `broadcast_dimensions[i]`
    (`jax.lax.broadcast_in_dim`); each operand axis has size 1 or the target size.

    Example:
      broadcast_in_dim(np.ones(3), (2, 3, 4), (1,)).shape  # (2, 3, 4)
    """
    src = _shape(operand)
    shape = tuple(int(s) for s in shape)
    dims = tuple(int(d) for d in broadcast_dimensions)
    ok = (len(dims) == len(src) and all(0 <= d < len(shape) for d in dims)
          and all(a < b for a, b in zip(dims, dims[1:]))
          and all(s in (1, shape[d]) for s, d in zip(src, dims)))
    if not ok:
        raise ValueError(f"lax.broadcast_in_dim: cannot broadcast shape {src} to {shape} with "
                         f"broadcast_dimensions {dims}: give one increasing target axis per "
                         "operand axis, whose size is 1 or the target's.")
    mid = [1] * len(shape)
    for s, d in zip(src, dims):
        mid[d] = s
    return fnp.broadcast_to(fnp.reshape(operand, tuple(mid)), shape)


def reshape(operand, new_sizes, dimensions=None):
    """`operand` reshaped to `new_sizes` (`jax.lax.reshape`), after transposing it by
    `dimensions` when given."""
    if dimensions is not None:
        operand = fnp.transpose(operand, tuple(dimensions))
    return fnp.reshape(operand, tuple(int(s) for s in new_sizes))


def squeeze(array, dimensions):
    """`array` without the size-1 axes `dimensions` (`jax.lax.squeeze`)."""
    dims = tuple(dimensions)
    return fnp.squeeze(array, dims) if dims else fnp.asarray(array)


def expand_dims(array, dimensions):
    """`array` with size-1 axes inserted at `dimensions` (`jax.lax.expand_dims`)."""
    dims = tuple(dimensions)
    return fnp.expand_dims(array, dims) if dims else fnp.asarray(array)


def transpose(operand, permutation):
    """`operand`'s axes permuted (`jax.lax.transpose`)."""
    return fnp.transpose(operand, tuple(int(p) for p in permutation))


def rev(operand, dimensions):
    """`operand` reversed along `dimensions` (`jax.lax.rev`)."""
    dims = tuple(dimensions)
    return fnp.flip(operand, dims) if dims else fnp.asarray(operand)


def collapse(operand, start_dimension, stop_dimension=None):
    """`operand` with axes `start_dimension` up to `stop_dimension` merged into one
    (`jax.lax.collapse`)."""
    shape = _shape(operand)
    lo, hi, _ = builtins.slice(start_dimension, stop_dimension).indices(len(shape))
    size = 1
    for s in shape[lo:hi]:
        size *= s
    return fnp.reshape(operand, shape[:lo] + (size,) + shape[hi:])


def broadcast_to_rank(x, rank):
    """`x` with leading size-1 axes up to `rank` dimensions (`jax.lax.broadcast_to_rank`)."""
    shape = _shape(x)
    return fnp.reshape(x, (1,) * (rank - len(shape)) + shape) if rank > len(shape) else x


def broadcast_shapes(*shapes):
    """The shape that `shapes` broadcast to (`jax.lax.broadcast_shapes`)."""
    return tuple(np.broadcast_shapes(*(tuple(s) for s in shapes)))


def split(operand, sizes, axis=0):
    """`operand` cut along `axis` into pieces of `sizes` (`jax.lax.split`)."""
    shape = _shape(operand)
    axis = _axis("lax.split", axis, len(shape))
    sizes = [int(s) for s in sizes]
    if sum(sizes) != shape[axis] or any(s < 0 for s in sizes):
        raise ValueError(f"lax.split: sizes {sizes} must be non-negative and add up to "
                         f"{shape[axis]}, the size of axis {axis}.")
    bounds = np.cumsum([0] + sizes)
    return [slice_in_dim(operand, int(a), int(b), 1, axis) for a, b in zip(bounds, bounds[1:])]
