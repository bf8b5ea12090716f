"""`custom_vjp` and `checkpoint`: functions whose calls every trace handles through its own
hook (fnad/_core/custom.py), not primitive by primitive."""

import functools

from .._core.custom import CustomVJPRule, bind_checkpoint, bind_custom_vjp

__all__ = ["custom_vjp", "checkpoint"]


class custom_vjp:  # JAX's name for a decorator class
    """A function with a hand-written VJP (JAX semantics).

    Example:
      @fnad.custom_vjp
      def f(x): return fnp.sin(x)
      def f_fwd(x): return fnp.sin(x), fnp.cos(x)
      def f_bwd(cos_x, g): return (g * cos_x,)
      f.defvjp(f_fwd, f_bwd)

    `fwd(*args)` returns `(out, residuals)`; `bwd(residuals, g)` returns a tuple with one
    cotangent per positional argument (None for zero), each shaped like its argument. With
    `nondiff_argnums` (JAX semantics), those arguments (Python values such as a function or
    a flag, not arrays to differentiate) get no cotangent: `fwd` still receives every
    argument, and `bwd(*nondiff_args, residuals, g)` returns cotangents for the others only.
    Every transform uses the rule: grad and vjp call `fwd` and `bwd`, vmap batches `fun`,
    `fwd` and `bwd`, jit stages the call as one operation. Forward mode (jvp, jacfwd,
    hessian) raises, as in JAX: use fnad.jacrev, or write the function without custom_vjp.
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.fwd = None
        self.bwd = None
        nums = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else nondiff_argnums
        self.nondiff_argnums = tuple(sorted(set(nums)))
        self._rule = None

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        self._rule = CustomVJPRule(self.fun, fwd, bwd, self.nondiff_argnums, self.__name__)
        return self

    def __call__(self, *args):
        if self._rule is None:
            name = self.__name__
            raise TypeError(f"custom_vjp function {name} has no rule yet; call "
                            f"{name}.defvjp(fwd, bwd) before using it.")
        return bind_custom_vjp(self._rule, args)


def checkpoint(fun):
    """Rematerialise `fun`'s intermediates in the backward pass instead of storing them.

    The forward pass keeps only `fun`'s inputs; the backward pass runs `fun` again under
    `vjp`. Under jit the forward call is staged as one operation, so the optimiser cannot
    merge it with the recomputation. Use it around blocks whose activations dominate memory.

    Example:
      block = fnad.checkpoint(transformer_block)
    """
    name = f"checkpoint({getattr(fun, '__name__', 'function')})"

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        return bind_checkpoint(fun, args, kwargs, name)

    return checkpointed
