"""Values chosen by masks: nan_to_num (a primitive: the gradient passes where the entry was
finite, and is 0 where it was replaced) and select (where, applied condition by
condition)."""

import numpy as np

from .. import numpy as fnp
from .._batching.families import elementwise_batch
from .._core.rules import defabstract_eval, defbatch, defjvp, defvjp
from ._creation import _holds_value, asarray, asarrays
from ._util import dtype_of, wrap

__all__ = ["nan_to_num", "select"]


def _nan_to_num_impl(x, nan=0.0, posinf=None, neginf=None):
    return np.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf)


_nan_to_num_p = wrap(_nan_to_num_impl, "nan_to_num")


def _keep_finite(g, x):
    """g where x was finite (real and imaginary parts apart, as nan_to_num treats them)."""
    if dtype_of(x).kind != "c":
        return fnp.where(fnp.isfinite(x), g, fnp.zeros_like(g))
    re = fnp.where(fnp.isfinite(fnp.real(x)), fnp.real(g), 0.0)
    return re + 1j * fnp.where(fnp.isfinite(fnp.imag(x)), fnp.imag(g), 0.0)


defvjp(_nan_to_num_p, lambda g, ans, x, *args, **kw: _keep_finite(g, x))
defjvp(_nan_to_num_p, lambda t, ans, x, *args, **kw: _keep_finite(t, x))
defabstract_eval(_nan_to_num_p, lambda x, *args, **kw: x.update(weak_type=False))
defbatch(_nan_to_num_p, elementwise_batch(_nan_to_num_p))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """`x` with NaN replaced by `nan` and infinities by `posinf` / `neginf` (default: the
    dtype's largest finite values), as `numpy.nan_to_num`. The gradient is passed where the
    entry was finite and is 0 where it was replaced (the replacements are constants).

    Example:
      fnp.nan_to_num(np.array([1.0, np.nan, np.inf]))   # [1., 0., 1.797e308]
    """
    x = asarray(x)
    if dtype_of(x).kind not in "fc":
        return x
    return _nan_to_num_p(x, nan=nan, posinf=posinf, neginf=neginf)


def select(condlist, choicelist, default=0):
    """Entries of `choicelist[i]` where `condlist[i]` is the first true condition, `default`
    where none is, as `numpy.select`; differentiable in the choices and the default.

    Example:
      fnp.select([x < 0, x > 1], [-x, x ** 2], default=x)
    """
    if len(condlist) != len(choicelist):
        raise ValueError("fnad.numpy.select: list of cases must be same length as list of "
                         f"conditions (got {len(choicelist)} and {len(condlist)}).")
    if len(condlist) == 0:
        raise ValueError("fnad.numpy.select: select with an empty condition list is not "
                         "possible.")
    if not (_holds_value(list(condlist)) or _holds_value(list(choicelist))
            or _holds_value(default)):  # CuPy's select takes no number among the choices
        return np.select(condlist, choicelist, default)
    weak = default if isinstance(default, (bool, int, float, complex)) else None
    # one device for all: the numbers among them (a default of 0) are filled in there
    *arrays, default = asarrays(*condlist, *choicelist, default)
    conds, choices = arrays[:len(condlist)], arrays[len(condlist):]
    for i, c in enumerate(conds):
        if dtype_of(c) != np.bool_:
            raise TypeError(f"fnad.numpy.select: invalid entry {i} in condlist: should be a "
                            f"boolean array, got dtype {dtype_of(c)}.")
    dt = np.result_type(*(dtype_of(c) for c in choices),
                        dtype_of(default) if weak is None else weak)
    result = fnp.astype(default, dt, copy=False)
    for cond, choice in zip(conds[::-1], choices[::-1]):
        result = fnp.where(cond, choice, result)
    shape = np.broadcast_shapes(*(fnp.shape(a) for a in conds + choices + [default]))
    return fnp.broadcast_to(fnp.astype(result, dt, copy=False), shape)
