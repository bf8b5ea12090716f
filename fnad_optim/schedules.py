"""optax.schedules' names: schedules (functions of the step count) and the wrappers that
inject hyperparameters into an optimizer's state."""

from ._inject import InjectHyperparamsState as InjectHyperparamsState
from ._inject import InjectStatefulHyperparamsState as InjectStatefulHyperparamsState
from ._inject import WrappedSchedule as WrappedSchedule
from ._inject import inject_hyperparams as inject_hyperparams
from ._inject import inject_stateful_hyperparams as inject_stateful_hyperparams
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
from ._numerics import Schedule as Schedule
from ._numerics import StatefulSchedule as StatefulSchedule
