"""optax.projections: Euclidean projections of a pytree onto convex sets (boxes, balls,
spheres, the simplex, half-spaces), for projected gradient methods."""

import fnad
import fnad.numpy as fnp

from ._tree_utils import tree_add_scale, tree_full_like, tree_mul, tree_norm, tree_scale, \
    tree_vdot

__all__ = ["projection_box", "projection_hypercube", "projection_non_negative",
           "projection_simplex", "projection_l1_sphere", "projection_l1_ball",
           "projection_l2_sphere", "projection_l2_ball", "projection_linf_ball",
           "projection_vector", "projection_hyperplane", "projection_halfspace"]


def projection_box(tree, lower, upper):
    """Clip every leaf to `[lower, upper]` (numbers or trees like `tree`).

    Example:
      params = projection_box(params, 0.0, 1.0)
    """
    if not isinstance(lower, (dict, list, tuple)) and not isinstance(upper, (dict, list,
                                                                           tuple)):
        return fnad.tree_map(lambda x: fnp.clip(x, lower, upper), tree)
    lower = lower if isinstance(lower, (dict, list, tuple)) else tree_full_like(tree, lower)
    upper = upper if isinstance(upper, (dict, list, tuple)) else tree_full_like(tree, upper)
    return fnad.tree_map(fnp.clip, tree, lower, upper)


def projection_hypercube(tree, scale=1):
    """Onto `[0, scale]` in every coordinate. Example: `projection_hypercube(p)`."""
    return projection_box(tree, 0, scale)


def projection_non_negative(tree):
    """Onto the non-negative orthant. Example: `projection_non_negative(p)`."""
    return fnad.tree_map(lambda x: fnp.maximum(x, 0), tree)


def _unit_simplex(values):
    """The projection of a vector onto the probability simplex (sort-based, Held et al.)."""
    n = values.shape[0]
    u = fnp.sort(values)[::-1]
    cumsum = fnp.cumsum(u)
    ind = fnp.arange(1, n + 1)
    idx = fnp.sum(1.0 / ind + (u - cumsum / ind) > 0)
    return fnp.maximum(1.0 / idx + (values - fnp.take(cumsum, idx - 1) / idx), 0)


def _ravel(tree):
    leaves, treedef = fnad.tree_flatten(tree)
    shapes = [fnp.shape(x) for x in leaves]
    flat = fnp.concatenate([fnp.reshape(x, (-1,)) for x in leaves])

    def unravel(v):
        out, start = [], 0
        for s in shapes:
            size = int(fnp.prod(fnp.asarray(s))) if s else 1
            out.append(fnp.reshape(v[start:start + size], s))
            start += size
        return treedef.unflatten(out)

    return flat, unravel


def projection_simplex(tree, scale=1):
    """Onto `{x >= 0, sum(x) = scale}`, all leaves together.

    Example:
      weights = projection_simplex(weights)
    """
    flat, unravel = _ravel(tree)
    return unravel(scale * _unit_simplex(flat / scale))


def projection_l1_sphere(tree, scale=1):
    """Onto `{||x||_1 = scale}`. Example: `projection_l1_sphere(p, 2.0)`."""
    signs = fnad.tree_map(fnp.sign, tree)
    return tree_mul(signs, projection_simplex(fnad.tree_map(fnp.abs, tree), scale))


def projection_l1_ball(tree, scale=1):
    """Onto `{||x||_1 <= scale}`. Example: `projection_l1_ball(p, 2.0)`."""
    inside = tree_norm(tree, ord=1) <= scale
    sphere = projection_l1_sphere(tree, scale)
    return fnad.tree_map(lambda x, y: fnp.where(inside, x, y), tree, sphere)


def projection_l2_sphere(tree, scale=1):
    """Onto `{||x||_2 = scale}`. Example: `projection_l2_sphere(p)`."""
    return tree_scale(scale / tree_norm(tree), tree)


def projection_l2_ball(tree, scale=1):
    """Onto `{||x||_2 <= scale}`. Example: `projection_l2_ball(p)`."""
    sq = tree_norm(tree, squared=True)
    return tree_scale(scale / fnp.sqrt(fnp.maximum(sq, scale ** 2)), tree)


def projection_linf_ball(tree, scale=1):
    """Onto `{||x||_inf <= scale}`. Example: `projection_linf_ball(p, 0.1)`."""
    return projection_box(tree, -scale, scale)


def projection_vector(x, a):
    """Onto the line spanned by the tree `a`. Example: `projection_vector(x, a)`."""
    return tree_scale(tree_vdot(x, a) / tree_vdot(a, a), a)


def projection_hyperplane(x, a, b):
    """Onto `{<a, x> = b}`. Example: `projection_hyperplane(x, a, 1.0)`."""
    return tree_add_scale(x, (b - tree_vdot(x, a)) / tree_vdot(a, a), a)


def projection_halfspace(x, a, b):
    """Onto `{<a, x> <= b}`. Example: `projection_halfspace(x, a, 1.0)`."""
    scalar = fnp.minimum((b - tree_vdot(x, a)) / tree_vdot(a, a), 0)
    return tree_add_scale(x, scalar, a)
