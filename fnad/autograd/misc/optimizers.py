"""autograd.misc.optimizers on fnad: `sgd`, `rmsprop` and `adam` with autograd's signature
`opt(grad, x0, callback=None, num_iters=..., step_size=..., ...)`, where `grad(x, i)` is the
gradient at iteration i and `callback(x, i, g)` is called before each step. `x0` may be any
nest of tuples, lists and dicts of arrays (flattened with misc.flatten). For optax-style
transforms with explicit state, use fnad_optim."""

import functools

import fnad.numpy as fnp

from .flatten import flatten

__all__ = ["sgd", "rmsprop", "adam", "unflatten_optimizer"]


def unflatten_optimizer(optimize):
    """An optimizer of 1-D arrays made one of nests (its grad and callback see nests)."""
    @functools.wraps(optimize)
    def nested(grad, x0, callback=None, *args, **kwargs):
        flat_x0, unflatten = flatten(x0)

        def flat_grad(x, i):
            return flatten(grad(unflatten(x), i))[0]

        flat_callback = None
        if callback:
            def flat_callback(x, i, g):
                return callback(unflatten(x), i, unflatten(g))

        return unflatten(optimize(flat_grad, flat_x0, flat_callback, *args, **kwargs))

    return nested


@unflatten_optimizer
def sgd(grad, x, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    """Stochastic gradient descent with momentum `mass`."""
    velocity = fnp.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x


@unflatten_optimizer
def rmsprop(grad, x, callback=None, num_iters=100, step_size=0.1, gamma=0.9, eps=10**-8):
    """RMSProp: steps scaled by a running root mean square of the gradient (starting at 1)."""
    avg_sq_grad = fnp.ones(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        avg_sq_grad = avg_sq_grad * gamma + g**2 * (1 - gamma)
        x = x - step_size * g / (fnp.sqrt(avg_sq_grad) + eps)
    return x


@unflatten_optimizer
def adam(grad, x, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999,
         eps=10**-8):
    """Adam (Kingma and Ba, 2015) with bias-corrected moment estimates."""
    m = fnp.zeros(len(x))
    v = fnp.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * (g**2) + b2 * v
        mhat = m / (1 - b1 ** (i + 1))
        vhat = v / (1 - b2 ** (i + 1))
        x = x - step_size * mhat / (fnp.sqrt(vhat) + eps)
    return x
