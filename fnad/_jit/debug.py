"""JAX's debugging tools: `debug.callback` and `debug.print` (an effect that every transform
keeps, in order), and the `debug_nans` / `debug_infs` switches of `fnad.config`.

A debug callback is one primitive with no results and `effect=True`: jit stages it and its
passes keep it where it was; vmap calls it once per example; grad and jvp pass the primal
values through (nothing is printed in the backward pass, as in JAX).

With `debug_nans` (or `debug_infs`) on, the result of every primitive a transform runs is
checked as it is computed (`fnad._core.tracer.set_impl_wrapper`), and NumPy's error state
raises for its ufuncs on plain arrays; the first result holding a NaN (inf) raises
`FloatingPointError` naming the primitive and the line of your code that called it. In the
backward pass it names the primitive whose VJP rule made it and that primitive's forward
line (reverse mode records each line while the switch is on). A jitted function runs op by
op while it is on, as JAX re-runs a failing jitted function, so its lines are yours too.
"""

import builtins
import functools

import numpy as np

from .._ad import reverse
from .._batching.vmap import _slice
from .._core.backend import array_module
from .._core.rules import defabstract_eval, defbatch
from .._core.fpcheck import CHECKS, checks_on, user_line
from .._core.settings import setting
from .._core.tracer import Tracer, primitive, set_impl_wrapper
from .._core.tree import tree_flatten, tree_unflatten

__all__ = ["callback", "print", "config", "checks_on", "user_line"]


# ----------------------------------------------------------------------------- callbacks

def _callback_impl(*leaves, callback):
    callback(*leaves)
    return ()


_debug_callback = primitive(_callback_impl, "debug_callback", nondiff=True,
                            multiple_results=True, effect=True)
defabstract_eval(_debug_callback, lambda *avals, **kwargs: ())


def _batch_callback(vals, dims, callback):
    """One call per example, in order (JAX's debug.callback under vmap)."""
    size = next(v.shape[d] for v, d in zip(vals, dims) if d is not None)
    for i in range(size):
        _debug_callback(*[_slice(v, d, i) for v, d in zip(vals, dims)], callback=callback)
    return (), ()


defbatch(_debug_callback, _batch_callback)


def callback(callback, *args, ordered=False, **kwargs):
    """Call `callback(*args, **kwargs)` with the arrays' values, under every transform
    (JAX's `jax.debug.callback`); returns None.

    Under jit it runs each time the compiled program runs (the call is staged, and no
    optimisation removes, merges or reorders it); under vmap once per example; under grad
    and jvp with the primal values. Calls run in program order, so `ordered` (JAX's) is
    accepted and always holds. A call whose arguments hold no traced value runs at once
    (under jit: once, while tracing).

    Example:
      fnad.debug.callback(lambda x: losses.append(float(x)), loss)
    """
    flat, tree = tree_flatten((args, kwargs))

    def flat_callback(*leaves):
        a, kw = tree_unflatten(tree, list(leaves))
        callback(*a, **kw)

    flat_callback.__name__ = getattr(callback, "__name__", "callback")
    _debug_callback(*flat, callback=flat_callback)


def print(fmt, *args, ordered=False, **kwargs):
    """Print `fmt.format(*args, **kwargs)` with the arrays' values, under every transform
    (JAX's `jax.debug.print`): under jit each run, under vmap once per example.

    Example:
      fnad.debug.print("x = {x}, step {}", i, x=x)
    """
    def show(*a, **kw):
        builtins.print(fmt.format(*a, **kw))

    show.__name__ = "print"
    callback(show, *args, ordered=ordered, **kwargs)


# ----------------------------------------------------------------------------- debug_nans

def _bad(x):
    """'nan' or 'inf' when array `x` holds one that is being checked for, else None."""
    if isinstance(x, Tracer) or getattr(x, "dtype", None) is None or x.dtype.kind not in "fc":
        return None
    xp = array_module(x)
    if CHECKS["nan"] and bool(xp.isnan(x).any()):
        return "nan"
    if CHECKS["inf"] and bool(xp.isinf(x).any()):
        return "inf"
    return None


def _report(prim, kind):
    node = reverse.BACKWARD_NODE[0]
    if node is not None:
        name, line = node
        where = (f"in the backward pass: the VJP of '{name}'"
                 + (f", whose forward call was at {line}" if line else "")
                 + f", through primitive '{prim.name}'")
    else:
        line = user_line(3)
        where = f"primitive '{prim.name}'" + (f" at {line}" if line else "")
    switch = "debug_nans" if kind == "nan" else "debug_infs"
    return FloatingPointError(
        f"{switch}: invalid value ({kind}) produced by {where}. Turn the check off with "
        f"fnad.config.update('{switch}', False) once found.")


def _checked(prim, impl):
    def run(*args, **kwargs):
        try:
            out = impl(*args, **kwargs)
        except FloatingPointError as e:  # NumPy's own check (np.seterr) fired inside
            if str(e).startswith("debug_"):
                raise
            raise _report(prim, "inf" if "invalid" not in str(e) else "nan") from e
        for o in (out if prim.multiple_results else (out,)):
            kind = _bad(o)
            if kind is not None:
                raise _report(prim, kind)
        return out

    functools.update_wrapper(run, impl)  # rules read the implementation's signature
    run.wrapped = impl
    return run


_SAVED_ERR = []


def _numpy_errors():
    """NumPy's ufuncs on plain arrays (what fnad.numpy calls outside transforms, and VJP
    rules call in the backward pass) raise FloatingPointError where they make a NaN (inf)
    while a switch is on; NumPy's error state is restored when both are off."""
    if not checks_on():
        if _SAVED_ERR:
            np.seterr(**_SAVED_ERR.pop())
        return
    if not _SAVED_ERR:
        _SAVED_ERR.append(np.geterr())
    err = dict(_SAVED_ERR[0])
    if CHECKS["nan"]:
        err["invalid"] = "raise"
    if CHECKS["inf"]:
        err["divide"] = err["over"] = "raise"
    np.seterr(**err)


class _Config:
    """fnad's switches under JAX's names: `fnad.config.update("debug_nans", True)` (or
    "jax_debug_nans"), "debug_infs"; read back as `fnad.config.debug_nans`. JAX programs'
    `update("jax_enable_x64", True)` is accepted: fnad computes in float64 already."""

    _NAMES = {"debug_nans": "nan", "jax_debug_nans": "nan", "debug_infs": "inf",
              "jax_debug_infs": "inf"}

    # JAX options whose one value fnad always has: accepted as no-ops with that value
    _ALWAYS = {"jax_enable_x64": True, "jax_platform_name": "cpu", "jax_platforms": "cpu"}

    def update(self, name, value):
        kind = self._NAMES.get(name)
        if kind is None and self._ALWAYS.get(name, object()) == value:
            return  # float64 is NumPy's default; fnad's arrays live where they are made
        if kind is None:
            fixed = ", ".join(f"{k}={v!r}" for k, v in self._ALWAYS.items())
            raise ValueError(f"fnad.config.update: unknown option {name!r} = {value!r}; fnad "
                             "has 'debug_nans' and 'debug_infs' (JAX's jax_ names accepted), "
                             f"and takes {fixed} as they are always so. fnad computes in the "
                             "arrays' own dtypes (float64 by default): cast them to float32 "
                             "where JAX would without x64.")
        was = checks_on()
        CHECKS[kind] = bool(value)
        if checks_on() != was:
            set_impl_wrapper(_checked if checks_on() else None)
            reverse.RECORD_LINES[0] = user_line if checks_on() else None
            reverse.VALUE_CHECK[0] = _bad
        _numpy_errors()

    @property
    def debug_nans(self):
        return CHECKS["nan"]

    @property
    def debug_infs(self):
        return CHECKS["inf"]

    jax_enable_x64 = True

    def __repr__(self):
        return f"fnad.config(debug_nans={self.debug_nans}, debug_infs={self.debug_infs})"


config = _Config()
if setting("FNAD_DEBUG_NANS"):
    config.update("debug_nans", True)
if setting("FNAD_DEBUG_INFS"):
    config.update("debug_infs", True)
