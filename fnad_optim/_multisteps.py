"""optax's `MultiSteps` class: gradient accumulation over k calls, with a test that may skip a
call (`should_skip_update_fn`, e.g. `skip_not_finite`) and the accumulator in its own dtype."""

import numpy as np

import fnad
import fnad.numpy as fnp

from ._base import (GradientTransformation, cond, extra_args_caller, inc_count,
                    tree_zeros_like, zero_count)
from ._wrappers import MultiStepsState

__all__ = ["MultiSteps"]


def _no_skip(updates, gradient_step, params):
    return fnp.asarray(False), ()


class MultiSteps:
    """Run `opt` once every k calls on the mean (or sum) of the gradients of those calls;
    the other calls return zero updates. A call for which `should_skip_update_fn(updates,
    gradient_step, params)` returns True is left out (zero updates, nothing accumulated).

    Args:
      opt: the inner `GradientTransformation`.
      every_k_schedule: k, or a function of the inner steps taken returning k.
      use_grad_mean: average the accumulated gradients (else sum them).
      should_skip_update_fn: returns `(skip, skip_state)`, a bool array of shape () and a
        pytree kept in `state.skip_state`; see `skip_not_finite`, `skip_large_updates`.
      accumulator_dtype: the dtype of the accumulated gradients (optax's default float32;
        None: each param's dtype).

    Example:
      opt = MultiSteps(adam(1e-3), every_k_schedule=4, should_skip_update_fn=skip_not_finite)
      state = opt.init(params)
      updates, state = opt.update(grads, state, params)
      if opt.has_updated(state): ...
    """

    def __init__(self, opt, every_k_schedule, use_grad_mean=True, should_skip_update_fn=None,
                 accumulator_dtype=np.float32):
        self._opt = opt
        self._call_opt = extra_args_caller(opt)
        self._every_k = (every_k_schedule if callable(every_k_schedule)
                         else (lambda step: every_k_schedule))
        self._use_grad_mean = use_grad_mean
        self._skip_fn = should_skip_update_fn or _no_skip
        self._acc_dtype = accumulator_dtype

    @property
    def inner_opt(self):
        """The inner `GradientTransformation`."""
        return self._opt

    def _acc(self, g, a, n):
        return a + (g - a) / (n + 1) if self._use_grad_mean else g + a

    def init(self, params):
        """The initial `MultiStepsState`."""
        step = zero_count(params)
        _, skip_state = self._skip_fn(tree_zeros_like(params), step, params)
        acc = fnad.tree_map(lambda p: fnp.zeros_like(p, dtype=self._acc_dtype), params)
        return MultiStepsState(zero_count(params), step, self._opt.init(params), acc,
                               skip_state)

    def update(self, updates, state, params=None, **extra_args):
        """`(updates, state)`: the inner updates on every k-th counted call, else zeros."""
        k = self._every_k(state.gradient_step)
        skip, skip_state = self._skip_fn(updates, state.gradient_step, params)
        if fnp.shape(skip) != () or np.dtype(fnp.result_type(skip)) != np.bool_:
            raise ValueError("MultiSteps: should_skip_update_fn must return a bool array of "
                             f"shape () first, got {fnp.result_type(skip)} of shape "
                             f"{fnp.shape(skip)}.")

        def do():
            acc = fnad.tree_map(lambda g, a: self._acc(g, a, state.mini_step), updates,
                                state.acc_grads)
            cast = fnad.tree_map(lambda a, g: fnp.astype(a, fnp.result_type(g)), acc, updates)
            new, inner = self._call_opt(cast, state.inner_opt_state, params, extra_args)
            emit = state.mini_step == k - 1
            keep = fnad.tree_map(lambda s, n: fnp.astype(fnp.where(emit, n, s),
                                                         fnp.result_type(s)),
                                 state.inner_opt_state, inner)
            step = fnp.where(emit, inc_count(state.gradient_step), state.gradient_step)
            acc = fnad.tree_map(lambda a: fnp.astype(fnp.where(emit, 0 * a, a),
                                                     fnp.result_type(a)), acc)
            return (fnad.tree_map(lambda u: fnp.where(emit, u, 0 * u), new),
                    MultiStepsState(inc_count(state.mini_step) % k, step, keep, acc,
                                    skip_state))

        def skip_call():
            return tree_zeros_like(updates), state._replace(skip_state=skip_state)

        return cond(skip, skip_call, do)

    def has_updated(self, state):
        """Whether the last call stepped the inner optimizer."""
        return fnp.logical_and(state.mini_step == 0, state.gradient_step > 0)

    def gradient_transformation(self):
        """This as a `GradientTransformation(init, update)`."""
        return GradientTransformation(self.init, self.update)
