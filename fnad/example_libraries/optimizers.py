"""`jax.example_libraries.optimizers`: an optimizer is a triple `(opt_init, opt_update,
get_params)` with `opt_update(i, grads, opt_state)`; its state is a pytree, so it passes
through jit and `lax.fori_loop`. The rules are JAX's (sgd, momentum, nesterov, adagrad,
rmsprop, adam) and a step size may be a number or a schedule `i -> step size`.

Example:
  opt_init, opt_update, get_params = optimizers.momentum(0.01, mass=0.9)
  state = opt_init(params)
  state = opt_update(0, grads, state)
"""

import functools
from typing import NamedTuple

import numpy as np

from .. import numpy as fnp
from .._core.tree import register_pytree_node, tree_flatten, tree_unflatten

__all__ = ["OptimizerState", "optimizer", "make_schedule", "constant", "exponential_decay",
           "sgd", "momentum", "nesterov", "adagrad", "rmsprop", "adam"]


class OptimizerState(NamedTuple):
    """The per-leaf states flattened (`packed_state`), with the structures to rebuild them."""
    packed_state: list
    tree_def: object
    subtree_defs: tuple


register_pytree_node(OptimizerState,
                     lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
                     lambda aux, c: OptimizerState(c[0], aux[0], aux[1]))


def optimizer(opt_maker):
    """Turn a maker of per-array `(init, update, get_params)` into one over pytrees."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            states = [init(x0) for x0 in x0_flat]
            packed, subtrees = zip(*[tree_flatten(s) for s in states]) if states else ((), ())
            return OptimizerState(list(packed), tree, tuple(subtrees))

        def tree_update(i, grad_tree, opt_state):
            packed, tree, subtrees = opt_state
            grads, tree2 = tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError("optimizer update: the gradient's structure differs from the "
                                f"parameters':\n  params: {tree}\n  grads:  {tree2}")
            states = [tree_unflatten(s, p) for s, p in zip(subtrees, packed)]
            new = [update(i, g, s) for g, s in zip(grads, states)]
            packed = [tree_flatten(s)[0] for s in new]
            return OptimizerState(packed, tree, subtrees)

        def tree_get_params(opt_state):
            packed, tree, subtrees = opt_state
            states = [tree_unflatten(s, p) for s, p in zip(subtrees, packed)]
            return tree_unflatten(tree, [get_params(s) for s in states])

        return tree_init, tree_update, tree_get_params
    return tree_opt_maker


# ----------------------------------------------------------------------------- schedules

def constant(step_size):
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate):
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def make_schedule(scalar_or_schedule):
    """A schedule from a number (constant) or a callable (itself)."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"make_schedule: expected a number or a callable, got "
                    f"{type(scalar_or_schedule).__name__}.")


# ----------------------------------------------------------------------------- optimizers

def _lr(step_size, i, x):
    """The step size at step i in x's dtype (a schedule of a traced step is float64 in
    NumPy's promotion, where JAX's weak types keep float32)."""
    lr = step_size(i)
    return lr.astype(x.dtype) if hasattr(lr, "astype") and hasattr(x, "dtype") else lr

@optimizer
def sgd(step_size):
    """x <- x - step_size(i) g."""
    step_size = make_schedule(step_size)
    return (lambda x0: x0, lambda i, g, x: x - _lr(step_size, i, x) * g, lambda x: x)


@optimizer
def momentum(step_size, mass):
    """v <- mass v + g; x <- x - step_size(i) v."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - _lr(step_size, i, x) * velocity, velocity

    return (lambda x0: (x0, fnp.zeros_like(x0)), update, lambda state: state[0])


@optimizer
def nesterov(step_size, mass):
    """v <- mass v + g; x <- x - step_size(i) (mass v + g)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - _lr(step_size, i, x) * (mass * velocity + g), velocity

    return (lambda x0: (x0, fnp.zeros_like(x0)), update, lambda state: state[0])


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum on the scaled gradient."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + fnp.square(g)
        g_sq_inv_sqrt = fnp.where(g_sq > 0, 1.0 / fnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - _lr(step_size, i, x) * m, g_sq, m

    return init, update, lambda state: state[0]


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """avg_sq <- gamma avg_sq + (1 - gamma) g^2; x <- x - step g / sqrt(avg_sq + eps)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + fnp.square(g) * (1.0 - gamma)
        return x - _lr(step_size, i, x) * g / fnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return (lambda x0: (x0, fnp.zeros_like(x0)), update, lambda state: state[0])


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba) with bias-corrected moments."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * fnp.square(g) + b2 * v
        mhat = (m / (1 - fnp.asarray(b1, m.dtype) ** (i + 1))).astype(m.dtype)
        vhat = (v / (1 - fnp.asarray(b2, m.dtype) ** (i + 1))).astype(m.dtype)
        return x - _lr(step_size, i, x) * mhat / (fnp.sqrt(vhat) + eps), m, v

    return init, update, lambda state: state[0]
