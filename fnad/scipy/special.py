"""fnad.scipy.special: differentiable special functions (filled in by the special-functions work)."""
