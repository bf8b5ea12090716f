"""optax.tree_utils' arithmetic on pytrees (written with fnad.numpy, so it differentiates and
jits): sums, products, norms, moments and casts leaf by leaf."""

import numpy as np

import fnad
import fnad.numpy as fnp
import fnad.random as frandom

from ._base import bias_correction as _bias_correction
from ._base import div_as

__all__ = ["tree_add", "tree_add_scale", "tree_allclose", "tree_batch_shape",
           "tree_bias_correction", "tree_cast", "tree_cast_like", "tree_clip", "tree_conj",
           "tree_div", "tree_dtype", "tree_full_like", "tree_max", "tree_min", "tree_mul",
           "tree_norm", "tree_ones_like", "tree_random_like", "tree_real", "tree_scale",
           "tree_size", "tree_split_key_like", "tree_sub", "tree_sum",
           "tree_update_infinity_moment", "tree_update_moment",
           "tree_update_moment_per_elem_norm", "tree_vdot", "tree_where", "tree_zeros_like",
           "tree_unwrap_random_key_data"]


def tree_add(tree_x, tree_y, *other_trees):
    """The leafwise sum of two or more trees. Example: `tree_add(a, b, c)`."""
    return fnad.tree_map(lambda *xs: sum(xs[1:], xs[0]), tree_x, tree_y, *other_trees)


def tree_sub(tree_x, tree_y):
    """The leafwise difference `tree_x - tree_y`. Example: `tree_sub(a, b)`."""
    return fnad.tree_map(lambda x, y: x - y, tree_x, tree_y)


def tree_mul(tree_x, tree_y):
    """The leafwise product. Example: `tree_mul(a, b)`."""
    return fnad.tree_map(lambda x, y: x * y, tree_x, tree_y)


def tree_div(tree_x, tree_y):
    """The leafwise quotient `tree_x / tree_y`. Example: `tree_div(a, b)`."""
    return fnad.tree_map(lambda x, y: x / y, tree_x, tree_y)


def tree_scale(scalar, tree):
    """Every leaf times `scalar`. Example: `tree_scale(0.5, grads)`."""
    return fnad.tree_map(lambda x: scalar * x, tree)


def tree_add_scale(tree_x, scalar, tree_y):
    """`tree_x + scalar * tree_y` leaf by leaf. Example: `tree_add_scale(p, -0.1, g)`."""
    return fnad.tree_map(lambda x, y: x + scalar * y, tree_x, tree_y)


def tree_vdot(tree_x, tree_y):
    """The inner product of two trees (conjugating `tree_x`). Example: `tree_vdot(g, g)`."""
    dots = [fnp.sum(fnp.conj(x) * y) for x, y in zip(fnad.tree_leaves(tree_x),
                                                      fnad.tree_leaves(tree_y))]
    return sum(dots[1:], dots[0]) if dots else 0


def tree_sum(tree, associative_reduction=False):
    """The sum of all entries of all leaves. Example: `tree_sum(grads)`."""
    sums = [fnp.sum(x) for x in fnad.tree_leaves(tree)]
    return sum(sums[1:], sums[0]) if sums else 0


def tree_max(tree):
    """The largest entry over all leaves (-inf for none). Example: `tree_max(grads)`."""
    out = -np.inf
    for x in fnad.tree_leaves(tree):
        if fnp.size(x):
            out = fnp.maximum(out, fnp.max(x))
    return out


def tree_min(tree):
    """The smallest entry over all leaves (inf for none). Example: `tree_min(grads)`."""
    out = np.inf
    for x in fnad.tree_leaves(tree):
        if fnp.size(x):
            out = fnp.minimum(out, fnp.min(x))
    return out


def tree_size(tree):
    """The number of entries over all leaves. Example: `tree_size(params)`."""
    return sum(int(fnp.size(x)) for x in fnad.tree_leaves(tree))


def tree_norm(tree, ord=None, squared=False):
    """The 2-norm (default), 1-norm or inf-norm of all leaves together.

    Example:
      tree_norm(grads)   # global_norm(grads)
    """
    if ord is None or ord == 2:
        sq = tree_sum(fnad.tree_map(lambda x: fnp.real(fnp.conj(x) * x), tree))
        return fnp.asarray(sq if squared else fnp.sqrt(sq))
    if ord == 1:
        out = tree_sum(fnad.tree_map(fnp.abs, tree))
    elif ord in (np.inf, "inf", "infinity"):
        out = tree_max(fnad.tree_map(fnp.abs, tree))
    else:
        raise ValueError(f"tree_norm: ord must be None, 1, 2 or inf, got {ord!r}.")
    return fnp.asarray(out * out if squared else out)


def tree_batch_shape(tree, shape=()):
    """Each leaf broadcast to `shape + leaf.shape`. Example: `tree_batch_shape(p, (8,))`."""
    return fnad.tree_map(lambda x: fnp.broadcast_to(x, (*shape, *fnp.shape(x))), tree)


def tree_bias_correction(moment, decay, count):
    """`moment / (1 - decay ** count)` leaf by leaf. Example: see `tree_update_moment`."""
    bc = _bias_correction(decay, count)
    return fnad.tree_map(lambda t: div_as(t, bc), moment)


def tree_update_moment(updates, moments, decay, order):
    """`(1 - decay) * updates ** order + decay * moments` leaf by leaf.

    Example:
      mu = tree_update_moment(grads, mu, 0.9, 1)
    """
    return fnad.tree_map(lambda g, t: (1 - decay) * (g ** order) + decay * t, updates,
                         moments)


def tree_update_infinity_moment(updates, moments, decay, eps):
    """`max(|updates| + eps, decay * moments)` leaf by leaf (Adamax's second moment).

    Example:
      nu = tree_update_infinity_moment(grads, nu, 0.999, 1e-8)
    """
    return fnad.tree_map(lambda g, t: fnp.maximum(fnp.abs(g) + eps, decay * t), updates,
                         moments)


def tree_update_moment_per_elem_norm(updates, moments, decay, order):
    """`tree_update_moment` of `|updates|` (the squared modulus for order 2).

    Example:
      nu = tree_update_moment_per_elem_norm(grads, nu, 0.999, 2)
    """
    def moment(g, t):
        if order == 2:
            norm = fnp.real(fnp.conj(g) * g)
        else:
            norm = fnp.abs(g) ** order
        return (1 - decay) * norm + decay * t

    return fnad.tree_map(moment, updates, moments)


def tree_cast(tree, dtype):
    """Every leaf in `dtype` (None: unchanged). Example: `tree_cast(p, np.float32)`."""
    if dtype is None:
        return tree
    return fnad.tree_map(lambda x: fnp.astype(fnp.asarray(x), dtype), tree)


def tree_cast_like(tree, other_tree):
    """Each leaf in the dtype of the matching leaf of `other_tree`."""
    return fnad.tree_map(lambda x, o: fnp.astype(fnp.asarray(x), fnp.result_type(o)), tree,
                         other_tree)


def tree_dtype(tree, mixed_dtype_handler=None):
    """The dtype of the leaves: the common one; with mixed dtypes, "promote" (NumPy's
    promotion), "highest" / "lowest" (the widest / narrowest), or an error (None)."""
    dtypes = [np.dtype(fnp.result_type(x)) for x in fnad.tree_leaves(tree)]
    if not dtypes:
        return np.dtype(np.float64)
    if len(set(dtypes)) == 1:
        return dtypes[0]
    if mixed_dtype_handler == "promote":
        return np.result_type(*dtypes)
    if mixed_dtype_handler in ("highest", "lowest"):
        pick = max if mixed_dtype_handler == "highest" else min
        return pick(dtypes, key=lambda d: (d.kind in "fc", d.itemsize))
    raise ValueError(f"tree_dtype: the leaves have dtypes {sorted(set(map(str, dtypes)))}; "
                     "pass mixed_dtype_handler='promote', 'highest' or 'lowest'.")


def tree_full_like(tree, fill_value, dtype=None):
    """A tree of the same shapes filled with `fill_value`."""
    return fnad.tree_map(lambda x: fnp.full_like(x, fill_value, dtype=dtype), tree)


def tree_zeros_like(tree, dtype=None):
    """A tree of zeros of the same shapes. Example: `tree_zeros_like(params)`."""
    return fnad.tree_map(lambda x: fnp.zeros_like(x, dtype=dtype), tree)


def tree_ones_like(tree, dtype=None):
    """A tree of ones of the same shapes."""
    return fnad.tree_map(lambda x: fnp.ones_like(x, dtype=dtype), tree)


def tree_clip(tree, min_value=None, max_value=None):
    """Every entry clipped to `[min_value, max_value]`."""
    return fnad.tree_map(lambda x: fnp.clip(x, min_value, max_value), tree)


def tree_conj(tree):
    """The complex conjugate of every leaf."""
    return fnad.tree_map(fnp.conj, tree)


def tree_real(tree):
    """The real part of every leaf."""
    return fnad.tree_map(fnp.real, tree)


def tree_where(condition, tree_x, tree_y):
    """`where(condition, x, y)` leaf by leaf, `condition` one array for all leaves."""
    return fnad.tree_map(lambda x, y: fnp.where(condition, x, y), tree_x, tree_y)


def tree_allclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Whether two trees have the same structure and close leaves (a Python bool)."""
    la, ta = fnad.tree_flatten(a)
    lb, tb = fnad.tree_flatten(b)
    return ta == tb and all(np.allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol,
                                        equal_nan=equal_nan) for x, y in zip(la, lb))


def tree_split_key_like(rng_key, target_tree):
    """One fnad.random key per leaf of `target_tree`, as a tree of that structure."""
    leaves, treedef = fnad.tree_flatten(target_tree)
    keys = frandom.split(rng_key, max(len(leaves), 1))
    return treedef.unflatten([keys[i] for i in range(len(leaves))])


def tree_random_like(rng_key, target_tree, sampler=frandom.normal, dtype=None):
    """A tree of random arrays shaped like `target_tree`, each leaf drawn by
    `sampler(key, shape, dtype)` with its own key (fnad.random's streams, not JAX's)."""
    keys = tree_split_key_like(rng_key, target_tree)
    return fnad.tree_map(lambda k, x: sampler(k, fnp.shape(x), dtype or fnp.result_type(x)),
                         keys, target_tree)


def tree_unwrap_random_key_data(input_tree):
    """The tree with its random keys as their raw uint32 data: fnad.random's keys already
    are plain uint32 arrays, so the tree itself."""
    return input_tree
