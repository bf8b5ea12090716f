"""odeint: an adaptive Dormand-Prince (RK45) solver with the adjoint-method VJP.

The solver steps with error control and shortens the step to land on each requested time
(no dense output). It runs on concrete arrays: the step count depends on the values, so
the whole solve is one custom_vjp node, and its VJP integrates the adjoint system backwards
in time (Pontryagin; as JAX's experimental ode and HIPS autograd). The backward pass calls
odeint again, so it is itself differentiable (higher-order reverse mode). The solve itself
is a primitive (`odeint_solve`) whose batching rule solves each example on its own (each
takes its own adaptive steps), so vmap of odeint, and of its gradient, works.
"""

import numpy as np

from .. import numpy as fnp
from .._batching.families import loop_batch
from .._core.abstract import AbstractEvalError
from .._core.backend import array_module
from .._core.rules import defbatch
from .._core.tracer import Primitive, Tracer, getval
from .._ad.custom import custom_vjp
from .._ad.transforms import vjp_with_ints as vjp
from .._core.tree import tree_flatten, tree_map, tree_unflatten
from ..numpy._util import refuse_staged

# Dormand-Prince 5(4) tableau.
_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_A = ((),
      (1 / 5,),
      (3 / 40, 9 / 40),
      (44 / 45, -56 / 15, 32 / 9),
      (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
      (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
      (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84))
_B5 = _A[6] + (0.0,)
_B4 = (5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40)
_E = tuple(b5 - b4 for b5, b4 in zip(_B5, _B4))


# ----------------------------------------------------------------------------- plain solver


def _ravel(tree):
    leaves, treedef = tree_flatten(tree)
    # 0-d host leaves (the cotangent of a Python-float time) join the arrays' device
    xp = array_module(*[x for x in leaves if np.ndim(x)])
    shapes = [np.shape(x) for x in leaves]
    flat = xp.concatenate([xp.ravel(xp.asarray(x)) for x in leaves])

    def unravel(v):
        out, start = [], 0
        for s in shapes:
            size = int(np.prod(s))
            out.append(v[start:start + size].reshape(s))
            start += size
        return tree_unflatten(treedef, out)
    return flat, unravel


def _rms(x):
    return float(np.sqrt(np.mean(np.abs(x) ** 2))) if x.size else 0.0


def _initial_step(fun, t0, y0, f0, rtol, atol):
    """Hairer, Norsett & Wanner's starting step for an order-5 method."""
    scale = atol + np.abs(y0) * rtol
    d0, d1 = _rms(y0 / scale), _rms(f0 / scale)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    f1 = fun(y0 + h0 * f0, t0 + h0)
    d2 = _rms((f1 - f0) / scale) / h0
    if max(d1, d2) <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1 / 5)
    return min(100 * h0, h1)


def _step(fun, t, y, f0, h):
    """One Dormand-Prince step: the 5th-order solution, its derivative and the error."""
    ks = [f0]
    for i in range(1, 7):
        yi = y + h * sum(a * k for a, k in zip(_A[i], ks) if a)
        ks.append(fun(yi, t + _C[i] * h))
    y_new = y + h * sum(b * k for b, k in zip(_B5, ks) if b)
    err = h * sum(e * k for e, k in zip(_E, ks) if e)
    return y_new, ks[-1], err


def _solve_flat(fun, y0, ts, rtol, atol, mxstep, hmax):
    """The solution at each time of the increasing 1-D array `ts`, rows stacked."""
    ys = [y0]
    t, y = float(ts[0]), y0
    f = fun(y, t)
    h = _initial_step(fun, t, y, f, rtol, atol)
    for target in (float(x) for x in ts[1:]):
        steps, start = 0, t
        while t < target:
            if steps >= mxstep:
                raise RuntimeError(f"fnad.scipy.integrate.odeint: took mxstep={mxstep} steps "
                                   f"between t={start} and {target} without reaching it "
                                   "(a stiff or blowing-up system?); raise mxstep or loosen "
                                   "rtol/atol.")
            steps += 1
            last = t + min(h, hmax) >= target
            hs = target - t if last else min(h, hmax)
            y_new, f_new, err = _step(fun, t, y, f, hs)
            ratio = _rms(err / (atol + rtol * np.maximum(np.abs(y), np.abs(y_new))))
            if not np.isfinite(ratio):
                ratio = np.inf
            factor = 10.0 if ratio == 0 else min(10.0, max(0.2, 0.9 * ratio ** -0.2))
            if ratio <= 1.0:
                t, y, f = (target if last else t + hs), y_new, f_new
                h = max(h, hs * factor) if last else hs * factor
            else:
                h = hs * factor
                if h < 1e-14 * max(1.0, abs(t)):
                    raise RuntimeError(f"fnad.scipy.integrate.odeint: step size underflow at "
                                       f"t={t} (the solution is not finite or the system is "
                                       "too stiff); check func or loosen rtol/atol.")
        ys.append(y)
    return array_module(y0).stack(ys)


def _solve(func, y0, ts, args, rtol, atol, mxstep, hmax):
    """odeint on plain arrays: `func(y, t, *args)` with `y` of y0's pytree structure."""
    flat0, unravel = _ravel(y0)

    def fun(y, t):
        dy = func(unravel(y), t, *args)
        if any(isinstance(x, Tracer) for x in tree_flatten(dy)[0]):
            raise TypeError("fnad.scipy.integrate.odeint: func returned a traced value for "
                            "plain inputs, so it closes over a traced variable; pass every "
                            "value you differentiate with respect to through odeint's *args.")
        return _ravel(dy)[0]

    ys = _solve_flat(fun, flat0, ts, rtol, atol, mxstep, hmax)
    leaves, treedef = tree_flatten(y0)
    out, start = [], 0
    for x in leaves:
        size = int(np.prod(np.shape(x)))
        out.append(ys[:, start:start + size].reshape((len(ts),) + np.shape(x)))
        start += size
    return tree_unflatten(treedef, out)


def _solve_impl(*leaves, func, tree, opts):
    y0, t, args = tree_unflatten(tree, list(leaves))
    return tuple(tree_flatten(_solve(func, y0, t, args, *opts))[0])


# One solve as a primitive: under vmap (the custom_vjp's function, fwd and bwd vmapped) each
# example is solved on its own, with its own adaptive steps; it has no derivative rules,
# since the custom_vjp around it is what autodiff sees.
_solve_p = Primitive("odeint_solve", _solve_impl, multiple_results=True)
defbatch(_solve_p, loop_batch(_solve_p))


def _solve_abstract(*avals, func, tree, opts):
    raise AbstractEvalError("odeint_solve: the solve takes as many steps as the values ask "
                            "for, so it runs on concrete values only (odeint refuses jit "
                            "before it gets here); call odeint outside the jitted function.")


_solve_p.abstract_eval = _solve_abstract


def _solve_any(func, y0, t, args, opts):
    """`_solve`, through the primitive when a value is traced (vmap)."""
    leaves, tree = tree_flatten((y0, t, args))
    if not any(isinstance(x, Tracer) for x in leaves):
        return _solve(func, y0, t, args, *opts)
    outs = _solve_p.bind(*leaves, func=func, tree=tree, opts=opts)
    return tree_unflatten(tree_flatten(y0)[1], list(outs))


# ----------------------------------------------------------------------------- adjoint


def _tree_dot(xs, ys):
    return sum(fnp.sum(x * y) for x, y in zip(tree_flatten(xs)[0], tree_flatten(ys)[0]))


def _make(func, opts):
    """odeint for one `func` and solver options, as a custom_vjp function of (y0, t, *args)."""

    @custom_vjp
    def odeint(y0, t, *args):
        return _solve_any(func, y0, t, args, opts)

    def fwd(y0, t, *args):
        ys = odeint(y0, t, *args)
        return ys, (ys, t, args)

    def aug_dynamics(state, s, *args):
        y, y_bar = state[0], state[1]
        # Python numbers among the args stay closed over, with a zero cotangent: vjp would
        # make them host arrays, which a state on a device cannot be combined with
        leaves, tree = tree_flatten(args)
        free = [i for i, x in enumerate(leaves) if type(x) not in (int, float, bool, complex)]

        def f(y, tt, *free_leaves):
            full = list(leaves)
            for i, x in zip(free, free_leaves):
                full[i] = x
            return func(y, tt, *tree_unflatten(tree, full))

        y_dot, f_vjp = vjp(f, y, -s, *[leaves[i] for i in free])
        y_bar_dot, t_bar_dot, *free_bar = f_vjp(y_bar)
        bars = [fnp.zeros_like(x) for x in leaves]
        for i, b in zip(free, free_bar):
            bars[i] = b
        args_bar_dot = tree_unflatten(tree, bars)
        return tree_map(lambda d: -d, y_dot), y_bar_dot, t_bar_dot, tuple(args_bar_dot)

    def bwd(res, g):
        ys, t, args = res
        at = lambda tree, i: tree_map(lambda x: x[i], tree)
        y_bar = at(g, -1)
        t0_bar = fnp.zeros_like(t, shape=())  # on t's device
        args_bar = tree_map(fnp.zeros_like, args)
        ts_bar = []
        aug = _make(aug_dynamics, opts)
        for i in range(fnp.shape(t)[0] - 1, 0, -1):
            t_bar = _tree_dot(func(at(ys, i), t[i], *args), at(g, i))
            t0_bar = t0_bar - t_bar
            ts_bar.append(t_bar)
            state = (at(ys, i), y_bar, t0_bar, args_bar)
            out = aug(state, fnp.stack([-t[i], -t[i - 1]]), *args)
            _, y_bar, t0_bar, args_bar = at(out, 1)
            y_bar = tree_map(fnp.add, y_bar, at(g, i - 1))
        ts_bar = fnp.stack([t0_bar] + ts_bar[::-1])
        return (y_bar, ts_bar, *args_bar)

    odeint.defvjp(fwd, bwd)
    return odeint


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf):
    """Solve dy/dt = func(y, t, *args) from y(t[0]) = y0 at the times `t`, differentiably.

    As `jax.experimental.ode.odeint` (and `scipy.integrate.odeint` with func(y, t, ...)):
    an adaptive Dormand-Prince 5(4) method with error control `rtol`/`atol`. Gradients with
    respect to `y0`, `t` and `args` (pytrees of float arrays) use the adjoint method; pass
    every value you differentiate through `args`, not by closing over it in `func`.
    Reverse mode only (grad, vjp, jacrev, nested); jvp raises as for any custom_vjp.

    Args:
      func: `func(y, t, *args)` returning dy/dt with y's structure, written with fnad.numpy.
      y0: initial state, an array or a pytree of arrays.
      t: strictly increasing 1-D array of times; t[0] is the initial time.
      rtol, atol: relative and absolute local error tolerances.
      mxstep: the most steps between two consecutive times of `t` (RuntimeError past it).
      hmax: the largest step.

    Returns:
      y at each time of `t`: y0's structure with a leading axis of len(t).

    Example:
      ys = odeint(lambda y, t, k: -k * y, 1.0, fnp.linspace(0.0, 1.0, 5), 2.0)
    """
    if not callable(func):
        raise TypeError(f"fnad.scipy.integrate.odeint: func must be callable func(y, t, "
                        f"*args), got {type(func).__name__}.")
    t = _float_array(t)
    if fnp.ndim(t) != 1 or fnp.shape(t)[0] < 1:
        raise ValueError(f"fnad.scipy.integrate.odeint: t must be a 1-D array of times, got "
                         f"shape {fnp.shape(t)}.")
    tv = _value(t)
    if tv is not None and np.any(np.diff(np.asarray(tv)) < 0):
        raise ValueError("fnad.scipy.integrate.odeint: t must be increasing (t[0] is the "
                         "initial time); to integrate backwards, negate time in func.")
    y0 = tree_map(_float_array, y0)
    args = tree_map(_float_arg, args)
    for leaf in tree_flatten((y0, t, args))[0]:
        refuse_staged(leaf, "fnad.scipy.integrate.odeint", "choose its adaptive steps",
                      "call it outside the jitted function (grad and vjp of it work)")
    return _make(func, (rtol, atol, mxstep, hmax))(y0, t, *args)


def _float_arg(x):
    """An argument for func: a Python number stays a Python float (weakly typed, so a
    float32 state stays float32, as NumPy's promotion of Python scalars gives), arrays
    become float arrays."""
    if type(x) in (int, float, bool):
        return float(x)
    return _float_array(x)


def _float_array(x):
    if isinstance(x, Tracer):
        return x
    x = np.asarray(x) if not hasattr(x, "dtype") else x
    x = x if x.dtype.kind in "fc" else x.astype(np.float64)
    # a 0-d host value as a NumPy scalar, which combines with device arrays
    return x[()] if type(x) is np.ndarray and x.ndim == 0 else x


def _value(x):
    """The concrete value of `x`, or None for a staged one or one on a device (nothing to
    check: reading it back would cost a synchronisation)."""
    v = getval(x)
    return None if isinstance(v, Tracer) or array_module(v) is not np else v
