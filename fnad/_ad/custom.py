"""`custom_vjp`, `custom_jvp` and `checkpoint`: functions whose calls every trace handles
through its own hook (fnad/_core/custom.py), not primitive by primitive."""

import functools
import inspect

from .._core.custom import (CustomJVPRule, CustomVJPRule, bind_checkpoint, bind_custom_jvp,
                            bind_custom_vjp)
from .._core.tree import tree_map
from .remat import CheckpointName, everything_saveable, nothing_saveable

__all__ = ["custom_vjp", "custom_jvp", "checkpoint", "remat"]


def _nondiff(nondiff_argnums):
    nums = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else nondiff_argnums
    return tuple(sorted(set(nums)))


def _n_params(fun):
    try:
        return len(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return 0


def _positional(fun, n_params, kind, args, kwargs):
    """`args` with `kwargs` and the defaults placed by `fun`'s signature (rules see
    positional arguments, as JAX's do)."""
    if not kwargs and len(args) >= n_params:
        return args
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{kind} {getattr(fun, '__name__', 'function')}: {e}") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(f"{kind} {fun.__name__}: keyword-only arguments "
                        f"({', '.join(bound.kwargs)}) cannot be passed to a function with a "
                        "custom rule; make them positional.")
    return bound.args


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
        self.nondiff_argnums = _nondiff(nondiff_argnums)
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


class custom_jvp:  # JAX's name for a decorator class
    """A function with a hand-written JVP (JAX semantics).

    Example:
      @fnad.custom_jvp
      def f(x, y): return fnp.sin(x) * y

      @f.defjvp
      def f_jvp(primals, tangents):
          (x, y), (x_dot, y_dot) = primals, tangents
          return f(x, y), fnp.cos(x) * x_dot * y + fnp.sin(x) * y_dot

    `jvp(primals, tangents)` returns `(out, tangent_out)`; the tangent must be linear in
    `tangents`. Or give one rule per argument with `f.defjvps(rule_x, rule_y)`, each
    `rule(tangent, ans, *primals)`, summed (None for an argument with no derivative).
    With `nondiff_argnums`, those arguments (Python values: functions, flags, sizes) come
    first in the rule, `jvp(*nondiff_args, primals, tangents)`, and primals and tangents
    hold the others only. Every transform uses the rule: jvp, jacfwd and hessian call it,
    grad, vjp and jacrev transpose its (linear) tangent map, vmap batches the function and
    the rule, jit stages the call as one operation. Integer arguments get zero tangents of
    their own dtype (JAX passes float0).
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.jvp = None
        self.nondiff_argnums = _nondiff(nondiff_argnums)
        self._rule = None
        self._n_params = _n_params(fun)

    def defjvp(self, jvp, symbolic_zeros=False):
        """Set the JVP rule `jvp(*nondiff_args, primals, tangents) -> (out, tangent_out)`;
        returns `jvp`, so it works as a decorator. `symbolic_zeros` is JAX's; fnad's
        tangents are always arrays (zeros where an input is not differentiated)."""
        self.jvp = jvp
        self._rule = CustomJVPRule(self.fun, jvp, self.nondiff_argnums, self.__name__)
        return jvp

    def defjvps(self, *jvps):
        """One JVP rule per differentiable argument, `rule(tangent, ans, *primals)` (None
        for none); the output tangent is their sum."""
        fun, nondiff = self.fun, self.nondiff_argnums

        def jvp(*fixed_primals_tangents):
            fixed, (primals, tangents) = fixed_primals_tangents[:-2], fixed_primals_tangents[-2:]
            full, it_p, it_f = [], iter(primals), iter(fixed)
            for i in range(len(primals) + len(fixed)):
                full.append(next(it_f) if i in nondiff else next(it_p))
            ans = fun(*full)
            if len(jvps) != len(primals):
                raise TypeError(f"custom_jvp {self.__name__}: defjvps got {len(jvps)} rules "
                                f"for {len(primals)} differentiable arguments.")
            t_out = None
            for rule, t in zip(jvps, tangents):
                if rule is None:
                    continue
                c = rule(t, ans, *primals)
                t_out = c if t_out is None else tree_map(lambda a, b: a + b, t_out, c)
            if t_out is None:
                t_out = tree_map(lambda a: a * 0, ans)
            return ans, t_out

        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        if self._rule is None:
            name = self.__name__
            raise TypeError(f"custom_jvp function {name} has no rule yet; call "
                            f"{name}.defjvp(jvp) or {name}.defjvps(...) before using it.")
        return bind_custom_jvp(self._rule, _positional(self.fun, self._n_params, "custom_jvp",
                                                           args, kwargs))


def checkpoint(fun=None, *, prevent_cse=True, policy=None, static_argnums=()):
    """Rematerialise `fun`'s intermediates in the backward pass instead of storing them
    (JAX's `jax.checkpoint`, also `fnad.remat`).

    Without a policy the forward pass keeps only `fun`'s inputs and the backward pass runs
    `fun` again under `vjp`. A `policy` from `fnad.checkpoint_policies` chooses results to
    keep instead of recomputing: `dots_saveable` keeps matrix products,
    `save_only_these_names("h")` the values tagged by `checkpoint_name(x, "h")`,
    `everything_saveable` everything (no rematerialisation), `nothing_saveable` nothing.
    Under jit the forward call is staged as one operation (giving the kept results too), so
    the optimiser cannot merge it with the recomputation. `prevent_cse` and
    `static_argnums` are JAX's and accepted (a static argument, a Python value, is never
    differentiated). With fun=None it returns a decorator.

    Example:
      block = fnad.checkpoint(transformer_block)
      block = fnad.remat(transformer_block, policy=fnad.checkpoint_policies.dots_saveable)
    """
    if fun is None:
        return lambda f: checkpoint(f, prevent_cse=prevent_cse, policy=policy,
                                    static_argnums=static_argnums)
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint: policy must be a function (prim, *args, **kwargs) -> bool "
                        f"such as fnad.checkpoint_policies.dots_saveable, got {policy!r}.")
    if policy is everything_saveable:
        return fun  # nothing to recompute
    text = f"checkpoint({getattr(fun, '__name__', 'function')})"
    name = CheckpointName(text, None if policy is nothing_saveable else policy)

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        return bind_checkpoint(fun, args, kwargs, name)

    return checkpointed


remat = checkpoint  # JAX's other name
