"""autograd.scipy.integrate on fnad: `odeint(func, y0, t, args=(), **kwargs)`, SciPy's LSODA
solver (scipy.integrate.odeint, as autograd wraps it: SciPy is needed here) made
differentiable in y0, t and args by the adjoint method: the reverse pass integrates the
system augmented with its vector-Jacobian products backwards between the output times, with
fnad.vjp for the products (an fnad.custom_vjp; no forward mode, as in autograd). fnad's own
solver, differentiable in every mode and under jit, is fnad.scipy.integrate.odeint."""

import functools
import importlib

import fnad.numpy as fnp

from ..._ad.custom import custom_vjp
from ..._ad.transforms import vjp
from ..._core.tracer import getval
from ..misc.flatten import flatten

__all__ = ["odeint"]


def _scipy_odeint():
    try:
        return importlib.import_module("scipy.integrate").odeint
    except ImportError as e:
        raise ImportError("fnad.autograd.scipy.integrate.odeint wraps SciPy's odeint, as "
                          "autograd's does: install scipy, or use fnad.scipy.integrate.odeint "
                          "(fnad's own solver).") from e


def odeint(func, y0, t, args=(), **kwargs):
    """`y(t)` for `dy/dt = func(y, t, *args)` from `y0` (scipy.integrate.odeint's signature
    and keyword options); differentiable in y0, t and args."""
    if not isinstance(args, tuple):
        args = (args,)
    if kwargs.get("full_output"):
        raise TypeError("odeint: full_output=True returns solver diagnostics, which have no "
                        "derivative; call scipy.integrate.odeint for them.")
    return _make_odeint(func, kwargs)(y0, t, args)


def _make_odeint(func, kwargs):
    solve = functools.partial(_scipy_odeint(), **kwargs)

    @custom_vjp
    def integrate(y0, t, args):
        return solve(func, getval(y0), getval(t), args=tuple(getval(a) for a in args))

    def fwd(y0, t, args):
        # through integrate again, so that an outer derivative (second order) has this rule
        yt = integrate(y0, t, args)
        return yt, (yt, t, args)

    def bwd(res, g):
        yt, t, args = res
        return _adjoint(func, kwargs, yt, t, args, g)

    integrate.defvjp(fwd, bwd)
    return integrate


def _adjoint(func, kwargs, yt, t, args, g):
    """The cotangents of y0, t and args (Froehlich et al. 2017, sec. 2.4.2): from the last
    output time back to the first, the system runs backwards augmented with the adjoint
    state, the time cotangent and the args cotangent. Written with fnad.numpy and odeint
    itself, so that it is differentiable in turn (second order, as autograd's)."""
    n_times, dim = fnp.shape(yt)
    flat_args, unflatten = flatten(args)

    def augmented(state, s, flat_args):
        y, adj = state[:dim], state[dim:2 * dim]
        dy, pullback = vjp(lambda y, s, a: func(y, s, *unflatten(a)), y, s, flat_args)
        adj_y, adj_t, adj_args = pullback(-adj)
        return fnp.hstack((dy, adj_y, adj_t, adj_args))

    adj_y = g[-1, :]
    adj_t0 = 0
    time_cts = []
    adj_args = fnp.zeros(fnp.size(flat_args))
    for i in range(n_times - 1, 0, -1):
        ct_t = fnp.dot(func(yt[i, :], t[i], *args), g[i, :])
        time_cts.append(ct_t)
        adj_t0 = adj_t0 - ct_t
        state = fnp.hstack((yt[i, :], adj_y, adj_t0, adj_args))
        back = odeint(augmented, state, fnp.stack([t[i], t[i - 1]]), (flat_args,), **kwargs)[1]
        adj_y, adj_t0, adj_args = back[dim:2 * dim], back[2 * dim], back[2 * dim + 1:]
        adj_y = adj_y + g[i - 1, :]
    time_cts.append(adj_t0)
    return adj_y, fnp.stack(time_cts)[::-1], unflatten(adj_args)
