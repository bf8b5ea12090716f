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
from ._base import ScheduleState as ScheduleState
from ._base import apply_updates as apply_updates
from ._base import chain as chain
from ._base import global_norm as global_norm
from ._base import identity as identity
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
from ._schedules_more import cosine_onecycle_schedule as cosine_onecycle_schedule
from ._schedules_more import linear_onecycle_schedule as linear_onecycle_schedule
from ._schedules_more import piecewise_interpolate_schedule as piecewise_interpolate_schedule
from ._schedules_more import sgdr_schedule as sgdr_schedule
from ._schedules_more import warmup_constant_schedule as warmup_constant_schedule
from ._schedules_more import (warmup_exponential_decay_schedule as
                              warmup_exponential_decay_schedule)
from ._groups import MultiTransformState as MultiTransformState
from ._groups import PartitionState as PartitionState
from ._groups import freeze as freeze
from ._groups import multi_transform as multi_transform
from ._groups import named_chain as named_chain
from ._groups import partition as partition
from ._groups import selective_transform as selective_transform
from ._groups import set_to_zero as set_to_zero
from ._groups import stateless as stateless
from ._groups import stateless_with_tree_map as stateless_with_tree_map
from ._moments import EmaState as EmaState
from ._moments import ScaleByAdaDeltaState as ScaleByAdaDeltaState
from ._moments import ScaleByAdanState as ScaleByAdanState
from ._moments import ScaleByAmsgradState as ScaleByAmsgradState
from ._moments import ScaleByBeliefState as ScaleByBeliefState
from ._moments import ScaleByNovogradState as ScaleByNovogradState
from ._moments import ScaleBySM3State as ScaleBySM3State
from ._moments import ema as ema
from ._moments import scale_by_adadelta as scale_by_adadelta
from ._moments import scale_by_adamax as scale_by_adamax
from ._moments import scale_by_adan as scale_by_adan
from ._moments import scale_by_amsgrad as scale_by_amsgrad
from ._moments import scale_by_belief as scale_by_belief
from ._moments import scale_by_novograd as scale_by_novograd
from ._moments import scale_by_radam as scale_by_radam
from ._moments import scale_by_sm3 as scale_by_sm3
from ._moments import scale_by_yogi as scale_by_yogi
from ._steps import AddNoiseState as AddNoiseState
from ._steps import ApplyEvery as ApplyEvery
from ._steps import NonNegativeParamsState as NonNegativeParamsState
from ._steps import ScaleByOptimisticGradientState as ScaleByOptimisticGradientState
from ._steps import ScaleByRpropState as ScaleByRpropState
from ._steps import add_noise as add_noise
from ._steps import apply_every as apply_every
from ._steps import centralize as centralize
from ._steps import keep_params_nonnegative as keep_params_nonnegative
from ._steps import normalize_by_update_norm as normalize_by_update_norm
from ._steps import scale_by_optimistic_gradient as scale_by_optimistic_gradient
from ._steps import scale_by_param_block_norm as scale_by_param_block_norm
from ._steps import scale_by_param_block_rms as scale_by_param_block_rms
from ._steps import scale_by_polyak as scale_by_polyak
from ._steps import scale_by_rprop as scale_by_rprop
from ._steps import scale_by_sign as scale_by_sign
from ._alias_more import adabelief as adabelief
from ._alias_more import adadelta as adadelta
from ._alias_more import adamax as adamax
from ._alias_more import adamaxw as adamaxw
from ._alias_more import adan as adan
from ._alias_more import amsgrad as amsgrad
from ._alias_more import fromage as fromage
from ._alias_more import lars as lars
from ._alias_more import nadam as nadam
from ._alias_more import nadamw as nadamw
from ._alias_more import noisy_sgd as noisy_sgd
from ._alias_more import novograd as novograd
from ._alias_more import optimistic_adam_v2 as optimistic_adam_v2
from ._alias_more import optimistic_gradient_descent as optimistic_gradient_descent
from ._alias_more import polyak_sgd as polyak_sgd
from ._alias_more import radam as radam
from ._alias_more import rprop as rprop
from ._alias_more import sign_sgd as sign_sgd
from ._alias_more import signum as signum
from ._alias_more import sm3 as sm3
from ._alias_more import yogi as yogi
from ._factored import FactoredState as FactoredState
from ._factored import adafactor as adafactor
from ._factored import clip_by_block_rms as clip_by_block_rms
from ._factored import scale_by_factored_rms as scale_by_factored_rms
from ._conditions import ConditionallyMaskState as ConditionallyMaskState
from ._conditions import ConditionallyTransformState as ConditionallyTransformState
from ._conditions import adaptive_grad_clip as adaptive_grad_clip
from ._conditions import conditionally_mask as conditionally_mask
from ._conditions import conditionally_transform as conditionally_transform
from ._conditions import per_example_global_norm_clip as per_example_global_norm_clip
from ._conditions import per_example_layer_norm_clip as per_example_layer_norm_clip
from ._conditions import skip_large_updates as skip_large_updates
from ._conditions import skip_not_finite as skip_not_finite
from ._inject import InjectHyperparamsState as InjectHyperparamsState
from ._inject import InjectStatefulHyperparamsState as InjectStatefulHyperparamsState
from ._inject import WrappedSchedule as WrappedSchedule
from ._inject import inject_hyperparams as inject_hyperparams
from ._inject import inject_stateful_hyperparams as inject_stateful_hyperparams
from . import losses as losses
from . import schedules as schedules
