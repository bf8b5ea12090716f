"""autograd.misc.fixed_points on fnad: `fixed_point(f, a, x0, distance, tol)`, the fixed
point of `f(a)` from `x0`, differentiable in `a` by the implicit function theorem (the
reverse pass finds the adjoint as a fixed point too, to the same tolerance, so that higher
derivatives are implicit at every order, as autograd's). An fnad.custom_vjp."""

import functools

from ..._ad.custom import custom_vjp
from ..._ad.transforms import vjp
from ..core import vspace

__all__ = ["fixed_point"]


def fixed_point(f, a, x0, distance, tol):
    """Iterate `x <- f(a)(x)` from x0 until `distance(x, x_prev) <= tol`; returns x."""
    return _fixed_point(f, distance, tol, a, x0)


def _iterate(step, x0, distance, tol):
    x, x_prev = step(x0), x0
    while distance(x, x_prev) > tol:
        x, x_prev = step(x), x
    return x


@functools.partial(custom_vjp, nondiff_argnums=(0, 1, 2))
def _fixed_point(f, distance, tol, a, x0):
    return _iterate(f(a), x0, distance, tol)


def _fwd(f, distance, tol, a, x0):
    # through _fixed_point again, so that an outer derivative (grad of grad) is implicit too
    x = _fixed_point(f, distance, tol, a, x0)
    return x, (a, x, x0)


def _adjoint_iteration(f):
    """The map whose fixed point is the adjoint w = g + (d f(a) / dx)^T w at x*."""
    def rev_iter(params):
        a, x_star, g = params
        vjp_x = vjp(f(a), x_star)[1]
        vs = vspace(x_star)
        return lambda w: vs.add(vjp_x(w)[0], g)

    return rev_iter


def _bwd(f, distance, tol, res, g):
    a, x_star, x0 = res
    w = fixed_point(_adjoint_iteration(f), (a, x_star, g), vspace(x0).zeros(), distance, tol)
    a_bar = vjp(lambda a: f(a)(x_star), a)[1](w)[0]
    return a_bar, vspace(x0).zeros()


_fixed_point.defvjp(_fwd, _bwd)
