"""fnad_optim.contrib: optax.contrib's schedule-free optimizers, Muon and Prodigy, with
optax's signatures, defaults and state layouts (Muon's state: see `muon`).

Example:
  opt = fnad_optim.contrib.schedule_free_adamw(1e-3, warmup_steps=100)
  eval_params = fnad_optim.contrib.schedule_free_eval_params(opt_state, params)
"""

from ._muon import MuonDimensionNumbers as MuonDimensionNumbers
from ._muon import MuonState as MuonState
from ._muon import muon as muon
from ._muon import scale_by_muon as scale_by_muon
from ._prodigy import ProdigyState as ProdigyState
from ._prodigy import prodigy as prodigy
from ._schedule_free import ScheduleFreeState as ScheduleFreeState
from ._schedule_free import schedule_free as schedule_free
from ._schedule_free import schedule_free_adamw as schedule_free_adamw
from ._schedule_free import schedule_free_eval_params as schedule_free_eval_params
from ._schedule_free import schedule_free_sgd as schedule_free_sgd
