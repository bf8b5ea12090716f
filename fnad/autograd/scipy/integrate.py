"""autograd.scipy.integrate on fnad: `odeint` with SciPy's signature, on fnad.scipy.integrate's
differentiable solver (an adaptive Dormand-Prince method, not SciPy's LSODA: values agree to
the tolerances, not to the last digit)."""

from fnad.scipy.integrate import odeint as _odeint

__all__ = ["odeint"]

_TOLERANCES = ("rtol", "atol", "mxstep", "hmax")


def odeint(func, y0, t, args=(), **kwargs):
    """`y(t)` for `dy/dt = func(y, t, *args)` from `y0` (scipy.integrate.odeint's signature;
    `rtol`, `atol`, `mxstep`, `hmax` are honoured); differentiable in y0, t and args."""
    other = sorted(set(kwargs) - set(_TOLERANCES))
    if other:
        raise TypeError(f"odeint: fnad's solver takes rtol, atol, mxstep and hmax, not "
                        f"{', '.join(other)}; full_output/tfirst and LSODA's other options have "
                        "no counterpart (use fnad.scipy.integrate.odeint directly).")
    if not isinstance(args, tuple):
        args = (args,)
    return _odeint(func, y0, t, *args, **kwargs)
