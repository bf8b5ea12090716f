"""The small float64 GPT, data and optimizers shared by the 2-process training job
(jobs/train.py) and the one-process runs it is compared with (test_mpi.py)."""

import numpy as np

import fnad
import fnad.random as random
import fnad_optim as optim
from fnad_nn import data, models

CONFIG = models.GPTConfig(vocab=14, d_model=16, n_heads=2, n_layers=2, max_len=8,
                          dtype=np.float64, dropout=0.0)
GLOBAL_BATCH, CONTEXT, STEPS = 4, 8, 20
CORPUS = data.CharCorpus("".join(np.random.default_rng(3).choice(list("abcdefghijkl \n"),
                                                                   size=3000)))


def init_params():
    return models.init_gpt(random.PRNGKey(0), CONFIG)


def _decay(params):
    return fnad.tree_map(lambda w: w.ndim > 1, params)


def _adamw():
    return optim.adamw(3e-3, b1=0.9, b2=0.95, weight_decay=0.1, mask=_decay)


def base_optimizer():
    """What examples/_lm.py trains with: global-norm clipping, then AdamW."""
    return optim.chain(optim.clip_by_global_norm(1.0), _adamw())


def data_parallel_optimizer():
    return optim.data_parallel(base_optimizer())


def sharded_optimizer():
    """Averaging, clipping on the whole averaged gradient, then AdamW with its moments
    sharded over the processes (ZeRO stage 1)."""
    return optim.chain(optim.average_gradients(), optim.clip_by_global_norm(1.0),
                       optim.shard_optimizer_state(_adamw()))


def batch(step, shard):
    """The global batch of `step` (the same on every process), or this process's rows."""
    key = random.fold_in(random.PRNGKey(1), step)
    return CORPUS.batch("train", GLOBAL_BATCH, CONTEXT, key=key, shard=shard)


def loss_fn(params, x, y):
    return models.token_loss(params, CONFIG, x, y)


def make_step(opt):
    def step(params, state, x, y):
        loss, grads = fnad.value_and_grad(loss_fn)(params, x, y)
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state, loss
    return step


def state_bytes(state):
    return sum(int(x.nbytes) for x in fnad.tree_leaves(state) if hasattr(x, "nbytes"))


def rel_err(a, b):
    """The normwise relative difference of two param trees: the largest |a - b| of any
    entry over the largest |b| of any entry. (Per leaf it would mean nothing for leaves
    whose exact gradient is zero, such as the attention's key bias: AdamW steps them by
    the rounding noise of their gradient, about 1e-19, so they stay near 1e-14.)"""
    la, lb = fnad.tree_leaves(a), fnad.tree_leaves(b)
    diff = max(float(np.max(np.abs(x - y))) for x, y in zip(la, lb))
    return diff / max(float(np.max(np.abs(y))) for y in lb)


def run_sharded(params, state, first, last, opt=None):
    """Steps first..last (inclusive) of the sharded optimizer on this process's rows."""
    step = make_step(opt or sharded_optimizer())
    for t in range(first, last + 1):
        params, state, _ = step(params, state, *batch(t, shard=True))
    return params, state
