"""Lookahead (Zhang et al. 2019): k fast steps forward, one slow step back, as optax's."""

from typing import Any, NamedTuple

import fnad
import fnad.numpy as fnp

from ._base import (GradientTransformation, cast_like, check_state, check_structures,
                    extra_args_caller, zero_count)

__all__ = ["lookahead", "LookaheadParams", "LookaheadState"]


class LookaheadState(NamedTuple):
    """The fast optimizer's state and the fast steps taken since the last synchronisation."""

    fast_state: Any
    steps_since_sync: Any


class LookaheadParams(NamedTuple):
    """The fast params (take gradients at these) and the slow ones (evaluate these)."""

    fast: Any
    slow: Any

    @classmethod
    def init_synced(cls, params):
        """Fast and slow params both equal to `params`."""
        return cls(fast=params, slow=params)


def lookahead(fast_optimizer, sync_period, slow_step_size, reset_state=False):
    """Lookahead around `fast_optimizer`, as optax's: params are `LookaheadParams`; every
    `sync_period` fast steps the slow params move `slow_step_size` of the way to the fast
    ones, and the fast params are set to them.

    The updates are `LookaheadParams` too: apply them unchanged (`apply_updates`), or the
    two sets of params drift apart.

    Args:
      fast_optimizer: the inner `GradientTransformation`.
      sync_period: fast steps between synchronisations (>= 1).
      slow_step_size: the fraction of the way the slow params move.
      reset_state: re-initialise the fast optimizer's state at each synchronisation.

    Returns:
      A `GradientTransformation` with a `LookaheadState`, as optax's; unlike optax's, extra
      args of `update` go to `fast_optimizer` (if it takes them), with `params.fast`.

    Example:
      opt, params = lookahead(adam(1e-3), 5, 0.5), LookaheadParams.init_synced(params)
      updates, state = opt.update(grads_at(params.fast), state, params)
    """
    if not sync_period >= 1:
        raise ValueError(f"lookahead: sync_period must be >= 1, got {sync_period}.")

    call_fast = extra_args_caller(fast_optimizer)

    def init(params):
        fast = params.fast if isinstance(params, LookaheadParams) else params
        return LookaheadState(fast_optimizer.init(fast), zero_count(fast))

    def update(updates, state, params=None, **extra_args):
        if type(state) is not LookaheadState:
            check_state("lookahead", state, LookaheadState)
        if not isinstance(params, LookaheadParams):
            raise TypeError("lookahead: update needs params=LookaheadParams(fast, slow) "
                            "(LookaheadParams.init_synced(params) to start), got "
                            f"{type(params).__name__}; take the gradients at params.fast.")
        check_structures("lookahead", updates, params.fast, names=("updates", "params.fast"))
        updates, fast_state = call_fast(updates, state.fast_state, params.fast, extra_args)
        sync = state.steps_since_sync == sync_period - 1
        diff = fnad.tree_map(lambda f, u, s: f + u - s, params.fast, updates, params.slow)
        slow = fnad.tree_map(lambda d: slow_step_size * cast_like(sync, d) * d, diff)
        fast = fnad.tree_map(lambda u, d: u - cast_like(sync, d) * (1 - slow_step_size) * d,
                             updates, diff)
        if reset_state:
            fresh = fast_optimizer.init(params.fast)
            fast_state = fnad.tree_map(lambda cur, new: fnp.where(sync, new, cur),
                                       fast_state, fresh)
        count = (state.steps_since_sync + 1) % sync_period
        return LookaheadParams(fast, slow), LookaheadState(fast_state, count)

    return GradientTransformation(init, update)
