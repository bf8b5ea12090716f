"""fnad.scipy.integrate: odeint, an adaptive Dormand-Prince ODE solver differentiable by the
adjoint method (as jax.experimental.ode.odeint)."""

from ._odeint import odeint as odeint

__all__ = ["odeint"]
