"""fnad_nn models and fnad_optim optimizers on the simulated device.

A jitted GPT training step (AdamW, dropout) makes no host-device transfer at all; reading
the loss is the one transfer, when asked. KV-cached generation makes none either (sampled
and greedy); with `eos_id` each step reads back whether every row has finished. Results
equal the NumPy run's."""

import numpy as np
import pytest

import fnad
import fnad_optim as fo
from fnad._core.backend import is_device_array
from fnad_nn import models as M
from tests.simdevice import simcupy, transfers

pytestmark = pytest.mark.sim_device
KEY = fnad.random.PRNGKey(0)
RNG = np.random.default_rng(0)


def _dev(tree):
    return fnad.device_put(tree, "gpu")


def _close(got, want, rtol):
    g, w = fnad.tree_leaves(got), fnad.tree_leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert is_device_array(a), f"a {type(a).__name__} left the device"
        np.testing.assert_allclose(fnad.to_numpy(a), b, rtol=rtol, atol=rtol)


def _gpt(dtype, **kw):
    c = M.GPTConfig(**{**dict(vocab=13, d_model=16, n_heads=2, n_layers=2, max_len=24,
                              dtype=dtype), **kw})
    return M.init_gpt(KEY, c), c


def _train_step(config, opt):
    def step(params, opt_state, ids, targets, key):
        loss, grads = fnad.value_and_grad(lambda p: M.token_loss(
            p, config, ids, targets, key=key, train=True))(params)
        updates, opt_state = opt.update(grads, opt_state, params)
        return fo.apply_updates(params, updates), opt_state, loss
    return step


@pytest.mark.parametrize("variant", [dict(), dict(positions="rotary", norm="rms",
                                                  activation="swiglu", dropout=0.1)],
                         ids=["learned-layer-gelu", "rotary-rms-swiglu-dropout"])
def test_jitted_gpt_training_step_makes_no_host_transfer(variant):
    params, c = _gpt(np.float64, **variant)
    opt = fo.adamw(fo.warmup_cosine_decay_schedule(0.0, 1e-2, 2, 10), weight_decay=0.1)
    step = fnad.jit(_train_step(c, opt))
    ids, targets = RNG.integers(0, 13, (2, 2, 10)), RNG.integers(0, 13, (2, 2, 10))
    keys = [fnad.random.fold_in(KEY, i) for i in range(2)]
    host = (params, opt.init(params))
    dev = _dev(host)
    batches = _dev((ids, targets, keys))
    dev = step(*dev, batches[0][0], batches[1][0], batches[2][0])[:2]  # traces
    host = step(*host, ids[0], targets[0], keys[0])[:2]
    with transfers() as log:
        *dev, loss = step(*dev, batches[0][1], batches[1][1], batches[2][1])
    assert not log.events, log
    *host, host_loss = step(*host, ids[1], targets[1], keys[1])
    with transfers() as log:
        value = float(loss)  # the one transfer: reading the loss
    assert log.to_host == 1 and log.to_device == 0
    assert value == pytest.approx(float(host_loss), rel=1e-12)
    _close(dev, host, 1e-10)
    assert fnad.tree_structure(dev) == fnad.tree_structure(host)


def test_eager_gpt_training_step_on_device():
    params, c = _gpt(np.float64)
    opt = fo.adam(1e-3)
    step = _train_step(c, opt)
    ids, targets = RNG.integers(0, 13, (3, 8)), RNG.integers(0, 13, (3, 8))
    host = step(params, opt.init(params), ids, targets, KEY)
    dev_params, batch = _dev(params), _dev((ids, targets, KEY))
    with transfers() as log:
        dev = step(dev_params, opt.init(dev_params), *batch)
    assert not log.events, log
    _close(dev, host, 1e-10)


@pytest.mark.parametrize("kw", [dict(temperature=0.9, top_k=5, top_p=0.9),
                                dict(temperature=0)], ids=["sampled", "greedy"])
def test_kv_cached_generation_on_device(kw):
    params, c = _gpt(np.float32, positions="rotary")
    prompt = RNG.integers(0, 13, (3, 4))
    want = M.generate(params, c, prompt, key=KEY, max_new=8, **kw)
    dp, dprompt, dkey = _dev((params, prompt, KEY))
    M.generate(dp, c, dprompt, key=dkey, max_new=8, **kw)  # rotary tables: made once
    with transfers() as log:
        out = M.generate(dp, c, dprompt, key=dkey, max_new=8, **kw)
    assert not log.events, log
    with transfers() as log:
        tokens = fnad.to_numpy(out)  # the sampled tokens: the one transfer
    assert len(log) == 1
    np.testing.assert_array_equal(tokens, want)


def test_generation_with_eos_reads_one_flag_per_step():
    params, c = _gpt(np.float32)
    prompt = RNG.integers(0, 13, (2, 3))
    dp, dprompt = _dev((params, prompt))
    with transfers() as log:
        out = M.generate(dp, c, dprompt, max_new=6, temperature=0, eos_id=12)
    assert log.to_device == 0 and log.to_host == fnad.to_numpy(out).shape[1] - 3
    np.testing.assert_array_equal(fnad.to_numpy(out), M.generate(
        params, c, prompt, max_new=6, temperature=0, eos_id=12))


def test_other_models_forward_and_gradient_on_device():
    s2s = M.Seq2SeqConfig(src_vocab=11, tgt_vocab=11, d_model=16, n_heads=2, n_enc_layers=1,
                          n_dec_layers=1, max_len=12, dtype=np.float64)
    rnn = M.RNNLMConfig(vocab=11, d_embed=8, d_hidden=12, n_layers=2, cell="lstm",
                        dtype=np.float64)
    src, tgt = RNG.integers(1, 11, (2, 7)), RNG.integers(1, 11, (2, 6))
    for init, config, inputs, targets in [(M.init_seq2seq, s2s, (src, tgt), tgt),
                                          (M.init_rnn_lm, rnn, tgt, tgt)]:
        params = init(KEY, config)
        loss = fnad.value_and_grad(lambda p, i, t: M.token_loss(p, config, i, t))
        want = loss(params, inputs, targets)
        args = _dev((params, inputs, targets))
        loss(*args)  # position tables: copied in once, then cached on the device
        with transfers() as log:
            got = loss(*args)
        assert not log.events, (type(config).__name__, log)
        _close(got, want, 1e-10)


OPTIMIZERS = {
    "sgd nesterov": lambda: fo.sgd(0.1, momentum=0.9, nesterov=True, weight_decay=1e-2),
    "adamw schedule mask": lambda: fo.adamw(
        fo.warmup_cosine_decay_schedule(0.0, 1e-2, 2, 10), weight_decay=0.1,
        mask=lambda p: fnad.tree_map(lambda x: x.ndim > 1, p)),
    "rmsprop centered": lambda: fo.rmsprop(1e-2, centered=True, momentum=0.9),
    "adagrad": lambda: fo.adagrad(0.1),
    "lion": lambda: fo.lion(1e-3),
    "lamb": lambda: fo.lamb(1e-2, weight_decay=1e-2),
    "guarded clipped accumulated": lambda: fo.apply_if_finite(fo.multi_steps(fo.chain(
        fo.zero_nans(), fo.clip(0.5), fo.clip_by_global_norm(1.0), fo.adam(1e-2)), 2)),
}
# apply_if_finite and multi_steps choose with a cond, whose predicate is read back each step
READS = {"guarded clipped accumulated": 2}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_state_and_updates_stay_on_device(name):
    opt = OPTIMIZERS[name]()
    params = {"w": RNG.standard_normal((8, 4)).astype(np.float32),
              "b": RNG.standard_normal(4).astype(np.float32)}
    grads = [fnad.tree_map(lambda p: RNG.standard_normal(p.shape).astype(np.float32), params)
             for _ in range(4)]
    host, dev = (params, opt.init(params)), None
    dparams = _dev(params)
    dev = (dparams, opt.init(dparams))  # the state is made on the params' device
    assert all(is_device_array(x) for x in fnad.tree_leaves(dev[1]))
    dgrads = _dev(grads)
    for g, dg in zip(grads, dgrads):
        u, s = opt.update(g, host[1], host[0])
        host = (fo.apply_updates(host[0], u), s)
        with transfers() as log:
            u, s = opt.update(dg, dev[1], dev[0])
            dev = (fo.apply_updates(dev[0], u), s)
        assert log.to_device == 0 and log.to_host == READS.get(name, 0), log
    _close(dev, host, 1e-5)
    assert all(a.dtype == b.dtype for a, b in zip(fnad.tree_leaves(dev[0]),
                                                 fnad.tree_leaves(host[0])))
    assert simcupy.get_array_module(*fnad.tree_leaves(dev)) is simcupy
