"""autograd.misc.fixed_points on fnad: `fixed_point(f, a, x0, distance, tol)`, the fixed
point of `f(a)` from `x0`, differentiable in `a` by the implicit function theorem (the
reverse pass iterates the adjoint equation to the same tolerance). An fnad.custom_vjp."""

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
    x = _iterate(f(a), x0, distance, tol)
    return x, (a, x, x0)


def _bwd(f, distance, tol, res, g):
    a, x_star, x0 = res
    vjp_x = vjp(f(a), x_star)[1]
    vs = vspace(x_star)
    w = _iterate(lambda w: vs.add(vjp_x(w)[0], g), vspace(x0).zeros(), distance, tol)
    a_bar = vjp(lambda a: f(a)(x_star), a)[1](w)[0]
    return a_bar, vspace(x0).zeros()


_fixed_point.defvjp(_fwd, _bwd)
