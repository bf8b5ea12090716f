"""Adafactor (Shazeer and Stern 2018) with optax's names: the factored second moment
`scale_by_factored_rms`, per-leaf RMS clipping `clip_by_block_rms`, and `adafactor`."""

from typing import Any, NamedTuple

import numpy as np

import fnad
import fnad.numpy as fnp

from ._base import (EmptyState, cast_like, chain, check_nonneg, check_structures, inc_count,
                    named, require_params, transform, zero_count)
from ._moments import ema
from ._steps import scale_by_param_block_rms
from ._transforms import add_decayed_weights, scale, scale_by_learning_rate

__all__ = ["FactoredState", "scale_by_factored_rms", "clip_by_block_rms", "adafactor"]


class FactoredState(NamedTuple):
    """Step count; per leaf the row and column moments (`v_row`, `v_col`) of a factored leaf
    or the full moment `v` of another (the unused ones are zeros of shape (1,))."""

    count: Any
    v_row: Any
    v_col: Any
    v: Any


def _decay_rate_pow(i, exponent=0.8):
    """Adafactor's decay `1 - (i + 1) ** -exponent`, in float32 as optax computes it."""
    t = fnp.asarray(i + 1, dtype=np.float32)
    return 1.0 - t ** fnp.asarray(-exponent, dtype=np.float32)


def _factored_dims(shape, factored, min_dim_size_to_factor):
    """The two largest axes (second largest, largest) of a leaf worth factoring, or None."""
    if not factored or len(shape) < 2:
        return None
    order = np.argsort(shape)
    if shape[order[-2]] < min_dim_size_to_factor:
        return None
    return int(order[-2]), int(order[-1])


def scale_by_factored_rms(factored=True, decay_rate=0.8, step_offset=0,
                          min_dim_size_to_factor=128, epsilon=1e-30,
                          decay_rate_fn=_decay_rate_pow):
    """Scale by the root of a factored second-moment estimate: for a leaf whose two largest
    axes are at least `min_dim_size_to_factor`, moving averages of the squared gradient's
    row and column means; for others, the full moving average.

    The decision per leaf reads the leaf's whole shape and its row/column means read the
    whole leaf, so this transform cannot be sharded by rows (`shard_optimizer_state`
    refuses it).

    Returns:
      A `GradientTransformation` with a `FactoredState`; `update` needs the params.

    Example:
      tx = chain(scale_by_factored_rms(), scale(-1e-2))
    """
    fname = "scale_by_factored_rms"

    def init_leaf(p):
        dims = _factored_dims(p.shape, factored, min_dim_size_to_factor)
        one = fnp.zeros_like(p, shape=(1,))
        if dims is None:
            return one, one, fnp.zeros_like(p)
        d1, d0 = dims
        drop = lambda axis: tuple(n for k, n in enumerate(p.shape) if k != axis)
        return fnp.zeros_like(p, shape=drop(d0)), fnp.zeros_like(p, shape=drop(d1)), one

    def init(params):
        leaves, treedef = fnad.tree_flatten(params)
        rows, cols, vs = zip(*[init_leaf(p) for p in leaves]) if leaves else ((), (), ())
        u = treedef.unflatten
        return FactoredState(zero_count(params), u(list(rows)), u(list(cols)), u(list(vs)))

    def update_leaf(g, v_row, v_col, v, p, decay):
        dims = _factored_dims(p.shape, factored, min_dim_size_to_factor)
        one = fnp.zeros_like(p, shape=(1,))
        sq = g * g + epsilon
        # 1 - decay in the decay's own dtype (float32 by default), as optax rounds it
        decay, keep = cast_like(decay, g), cast_like(1.0 - decay, g)
        if dims is None:
            new_v = fnp.astype(decay * v + keep * sq, p.dtype)
            return g * new_v ** -0.5, one, one, new_v
        d1, d0 = dims
        new_row = fnp.astype(decay * v_row + keep * fnp.mean(sq, axis=d0), p.dtype)
        new_col = fnp.astype(decay * v_col + keep * fnp.mean(sq, axis=d1), p.dtype)
        reduced_d1 = d1 - 1 if d1 > d0 else d1
        row_factor = (new_row / fnp.mean(new_row, axis=reduced_d1, keepdims=True)) ** -0.5
        col_factor = new_col ** -0.5
        out = g * fnp.expand_dims(row_factor, d0) * fnp.expand_dims(col_factor, d1)
        return out, new_row, new_col, one

    def update(updates, state, params=None):
        require_params(fname, params)
        decay = decay_rate_fn(state.count - step_offset, decay_rate)
        (g, p), treedef = _flat(fname, updates, params)
        rows, cols, vs = (fnad.tree_leaves(t) for t in (state.v_row, state.v_col, state.v))
        res = [update_leaf(*xs, decay) for xs in zip(g, rows, cols, vs, p)]
        u = treedef.unflatten
        return u([r[0] for r in res]), FactoredState(
            inc_count(state.count), u([r[1] for r in res]), u([r[2] for r in res]),
            u([r[3] for r in res]))

    return transform(fname, init, update, FactoredState)


def _flat(fname, updates, params):
    (g, p), treedef = check_structures(fname, updates, params, names=("updates", "params"))
    return (g, p), treedef


def clip_by_block_rms(threshold):
    """Scale each leaf down to a root mean square of at most `threshold`.

    Example:
      tx = chain(clip_by_block_rms(1.0), sgd(0.1))
    """
    check_nonneg("clip_by_block_rms", "threshold", threshold)

    def clip(u):
        return u / fnp.maximum(1.0, fnp.sqrt(fnp.mean(u * u)) / threshold)

    return transform("clip_by_block_rms", lambda params: EmptyState(),
                     lambda updates, state, params=None: (fnad.tree_map(clip, updates), state),
                     EmptyState)


def adafactor(learning_rate=None, min_dim_size_to_factor=128, decay_rate=0.8, decay_offset=0,
              multiply_by_parameter_scale=True, clipping_threshold=1.0, momentum=None,
              dtype_momentum=np.float32, weight_decay_rate=None, eps=1e-30, factored=True,
              weight_decay_mask=None):
    """Adafactor (Shazeer and Stern 2018), optax's composition: factored RMS scaling, block
    RMS clipping, the learning rate, scaling by the params' RMS, optional momentum (kept in
    `dtype_momentum`) and weight decay.

    Returns:
      A `GradientTransformation`; `update` needs the params.

    Example:
      opt = adafactor(1e-2)
    """
    if learning_rate is not None:
        check_nonneg("adafactor", "learning_rate", learning_rate)
    txs = [scale_by_factored_rms(factored, decay_rate, decay_offset, min_dim_size_to_factor,
                                 eps)]
    if clipping_threshold is not None:
        txs.append(clip_by_block_rms(clipping_threshold))
    if learning_rate is not None:
        txs.append(scale_by_learning_rate(learning_rate, flip_sign=False))
    if multiply_by_parameter_scale:
        txs.append(scale_by_param_block_rms())
    if momentum is not None:
        txs.append(ema(momentum, debias=False, accumulator_dtype=dtype_momentum))
    if weight_decay_rate is not None:
        txs.append(add_decayed_weights(weight_decay_rate, weight_decay_mask))
    txs.append(scale(-1))
    return named("adafactor", chain(*txs))
