"""fnad_optim: optax-style optimizers and schedules.

An optimizer is a `GradientTransformation(init, update)`: `init(params) -> state` and
`update(updates, state, params=None) -> (updates, state)`. States are NamedTuples of arrays
(pytrees), so `fnad.save` checkpoints them with the params. Named optimizers are short
`chain`s of transforms; `apply_updates` adds the updates to the params.
Data-parallel training across processes: `data_parallel(opt)` averages the gradients
(bucketed) before `opt`; `shard_state=True` keeps 1/N of the optimizer state per process.

Example:
  opt = fnad_optim.adamw(fnad_optim.warmup_cosine_decay_schedule(0.0, 1e-3, 100, 1000))
  opt_state = opt.init(params)
  updates, opt_state = opt.update(grads, opt_state, params)
  params = fnad_optim.apply_updates(params, updates)
"""

from ._base import EmptyState as EmptyState
from ._base import GradientTransformation as GradientTransformation
from ._base import GradientTransformationExtraArgs as GradientTransformationExtraArgs
from ._base import ScheduleState as ScheduleState
from ._base import apply_updates as apply_updates
from ._base import chain as chain
from ._base import global_norm as global_norm
from ._base import identity as identity
from ._base import with_extra_args_support as with_extra_args_support
from ._transforms import ScaleByAdagradState as ScaleByAdagradState
from ._transforms import ScaleByAdamState as ScaleByAdamState
from ._transforms import ScaleByLionState as ScaleByLionState
from ._transforms import ScaleByRmsState as ScaleByRmsState
from ._transforms import ScaleByStddevState as ScaleByStddevState
from ._transforms import TraceState as TraceState
from ._transforms import add_decayed_weights as add_decayed_weights
from ._transforms import scale as scale
from ._transforms import scale_by_adagrad as scale_by_adagrad
from ._transforms import scale_by_adam as scale_by_adam
from ._transforms import scale_by_learning_rate as scale_by_learning_rate
from ._transforms import scale_by_lion as scale_by_lion
from ._transforms import scale_by_rms as scale_by_rms
from ._transforms import scale_by_rss as scale_by_rss
from ._transforms import scale_by_schedule as scale_by_schedule
from ._transforms import scale_by_stddev as scale_by_stddev
from ._transforms import scale_by_trust_ratio as scale_by_trust_ratio
from ._transforms import trace as trace
from ._clipping import ZeroNansState as ZeroNansState
from ._clipping import clip as clip
from ._clipping import clip_by_global_norm as clip_by_global_norm
from ._clipping import zero_nans as zero_nans
from ._wrappers import ApplyIfFiniteState as ApplyIfFiniteState
from ._wrappers import MaskedState as MaskedState
from ._wrappers import MultiStepsState as MultiStepsState
from ._wrappers import all_finite as all_finite
from ._wrappers import apply_if_finite as apply_if_finite
from ._wrappers import masked as masked
from ._wrappers import multi_steps as multi_steps
from ._alias import adagrad as adagrad
from ._alias import adam as adam
from ._alias import adamw as adamw
from ._alias import lamb as lamb
from ._alias import lion as lion
from ._alias import rmsprop as rmsprop
from ._alias import sgd as sgd
from ._linesearch import BacktrackingLinesearchInfo as BacktrackingLinesearchInfo
from ._linesearch import ScaleByBacktrackingLinesearchState as ScaleByBacktrackingLinesearchState
from ._linesearch import scale_by_backtracking_linesearch as scale_by_backtracking_linesearch
from ._linesearch import value_and_grad_from_state as value_and_grad_from_state
from ._zoom import ScaleByZoomLinesearchState as ScaleByZoomLinesearchState
from ._zoom import ZoomLinesearchInfo as ZoomLinesearchInfo
from ._zoom import scale_by_zoom_linesearch as scale_by_zoom_linesearch
from ._lbfgs import ScaleByLBFGSState as ScaleByLBFGSState
from ._lbfgs import lbfgs as lbfgs
from ._lbfgs import scale_by_lbfgs as scale_by_lbfgs
from ._lookahead import LookaheadParams as LookaheadParams
from ._lookahead import LookaheadState as LookaheadState
from ._lookahead import lookahead as lookahead
from ._distributed import ShardedState as ShardedState
from ._distributed import average_gradients as average_gradients
from ._distributed import data_parallel as data_parallel
from ._distributed import gather_state as gather_state
from ._distributed import scatter_state as scatter_state
from ._distributed import shard_optimizer_state as shard_optimizer_state
from ._schedules import constant_schedule as constant_schedule
from ._schedules import cosine_decay_schedule as cosine_decay_schedule
from ._schedules import exponential_decay as exponential_decay
from ._schedules import join_schedules as join_schedules
from ._schedules import linear_schedule as linear_schedule
from ._schedules import piecewise_constant_schedule as piecewise_constant_schedule
from ._schedules import polynomial_schedule as polynomial_schedule
from ._schedules import warmup_cosine_decay_schedule as warmup_cosine_decay_schedule
from . import contrib as contrib
