"""autograd.misc.flatten on fnad: one 1-D array from a nest of tuples, lists and dicts of
arrays (dict keys sorted, as autograd's), and the differentiable inverse."""

import math

import fnad.numpy as fnp

from ..._core.tree import tree_flatten, tree_unflatten
from ..core import in_order_of

__all__ = ["flatten", "flatten_func"]


def flatten(value):
    """`(vector, unflatten)`: every leaf of `value` raveled and concatenated; `unflatten`
    rebuilds the nest from such a vector. Both are differentiable."""
    leaves, tree = tree_flatten(value)
    shapes = [fnp.shape(leaf) for leaf in leaves]
    flat = (fnp.concatenate([fnp.ravel(leaf) for leaf in leaves]) if leaves
            else fnp.zeros((0,)))

    def unflatten(vector):
        parts, start = [], 0
        for shape in shapes:
            n = math.prod(shape)
            parts.append(fnp.reshape(vector[start:start + n], shape))
            start += n
        return in_order_of(tree_unflatten(tree, parts), value)

    return flat, unflatten


def flatten_func(func, example):
    """`(flat_func, unflatten, flat_example)`: `func` on nests made a function of vectors."""
    flat_example, unflatten = flatten(example)

    def flat_func(x, *args):
        return flatten(func(unflatten(x), *args))[0]

    return flat_func, unflatten, flat_example
