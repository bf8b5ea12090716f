"""Autoregressive generation with a key/value cache: greedy or sampled (temperature, top-k,
top-p), batched, with per-sequence EOS. Nothing is traced; arrays stay on the params' device
(the only host reads are the per-step "all rows done?" check)."""

import fnad.random as random
from fnad.extend import getval

from . import _gpt, _rnn_models, _seq2seq
from ._util import array_module

__all__ = ["generate", "sample_logits"]


def sample_logits(key, logits, *, temperature=1.0, top_k=None, top_p=None):
    """Next ids `(B,)` from last-position logits `(B, V)`.

    Temperature 0 is greedy (argmax). Otherwise the logits are divided by the temperature,
    restricted to the `top_k` largest and/or the smallest set whose probability reaches
    `top_p` (nucleus), and sampled by Gumbel-max, which needs no normalisation (so no
    overflow or underflow at any temperature).

    Example:
      ids = sample_logits(key, logits[:, -1], temperature=0.8, top_k=20)
    """
    lg = getval(logits)
    xp = array_module(lg)
    if temperature < 0:
        raise ValueError(f"sample_logits: temperature={temperature} must be >= 0 (0 = greedy).")
    if temperature == 0:
        return xp.argmax(lg, axis=-1)
    lg = lg / lg.dtype.type(temperature)
    v = lg.shape[-1]
    if top_k is not None:
        if not 1 <= top_k:
            raise ValueError(f"sample_logits: top_k={top_k} must be a positive count.")
        if top_k < v:
            kth = xp.partition(lg, v - top_k, axis=-1)[..., v - top_k:v - top_k + 1]
            lg = xp.where(lg < kth, -xp.inf, lg)
    if top_p is not None:
        if not 0 < top_p <= 1:
            raise ValueError(f"sample_logits: top_p={top_p} must be in (0, 1].")
        s = -xp.sort(-lg, axis=-1)  # descending
        p = xp.exp(s - s[..., :1])
        p /= p.sum(axis=-1, keepdims=True)
        before = xp.cumsum(p, axis=-1) - p  # probability of the tokens ranked above
        n_keep = (before < top_p).sum(axis=-1, keepdims=True)  # >= 1: the top token stays
        cut = xp.take_along_axis(s, n_keep - 1, axis=-1)
        lg = xp.where(lg < cut, -xp.inf, lg)
    return random.categorical(key, lg, axis=-1)


# Each model kind: start(params, config, prompt, cached, bos_id) -> (last logits, state) and
# step(params, config, ids (B, 1), state) -> (last logits, state). Without the cache, the state
# is the whole sequence so far and each step recomputes it.

def _gpt_start(params, config, prompt, cached, bos_id):
    if not cached:
        return _gpt.gpt(params, config, prompt)[:, -1], prompt
    cache = _gpt.init_gpt_cache(params, config, prompt.shape[0])
    logits, cache = _gpt.gpt(params, config, prompt, cache=cache)
    return logits[:, -1], cache


def _gpt_step(params, config, ids, state):
    if isinstance(state, list):
        logits, state = _gpt.gpt(params, config, ids, cache=state)
        return logits[:, -1], state
    seq = array_module(params).concatenate([state, ids], axis=1)
    return _gpt.gpt(params, config, seq)[:, -1], seq


def _need_bos(bos_id, model):
    if bos_id is None:
        raise ValueError(f"generate: {model} needs bos_id= (the id the decoder starts from).")


def _s2s_start(params, config, src, cached, bos_id):
    _need_bos(bos_id, "a Seq2Seq model")
    xp = array_module(params)
    memory = _seq2seq.encode(params, config, src)
    tgt = xp.full((src.shape[0], 1), bos_id, dtype=src.dtype)
    if cached:
        state = _seq2seq.init_seq2seq_cache(params, config, memory, src)
    else:
        state = {"memory": memory, "src": src, "tgt": tgt[:, :0]}
    return _s2s_step(params, config, tgt, state)


def _s2s_step(params, config, ids, state):
    if "cross" in state:
        logits, state = _seq2seq.decode(params, config, None, None, ids, cache=state)
        return logits[:, -1], state
    tgt = array_module(params).concatenate([state["tgt"], ids], axis=1)
    logits = _seq2seq.decode(params, config, state["memory"], state["src"], tgt)
    return logits[:, -1], dict(state, tgt=tgt)


def _rnn_lm_start(params, config, prompt, cached, bos_id):
    logits, state = _rnn_models.rnn_lm(params, config, prompt)
    return logits[:, -1], state


def _rnn_lm_step(params, config, ids, state):
    logits, state = _rnn_models.rnn_lm(params, config, ids, state=state)
    return logits[:, -1], state


def _rnn_s2s_start(params, config, src, cached, bos_id):
    _need_bos(bos_id, "an RNN encoder-decoder")
    xp = array_module(params)
    state = _rnn_models.rnn_encode(params, config, src)
    return _rnn_s2s_step(params, config, xp.full((src.shape[0], 1), bos_id, src.dtype), state)


def _rnn_s2s_step(params, config, ids, state):
    logits, state = _rnn_models.rnn_decode(params, config, ids, state)
    return logits[:, -1], state


_MODELS = {  # config type: (start, step, returns the prompt too, length limit)
    _gpt.GPTConfig: (_gpt_start, _gpt_step, True, lambda c: c.max_len),
    _seq2seq.Seq2SeqConfig: (_s2s_start, _s2s_step, False, lambda c: c.max_len),
    _rnn_models.RNNLMConfig: (_rnn_lm_start, _rnn_lm_step, True, lambda c: None),
    _rnn_models.RNNSeq2SeqConfig: (_rnn_s2s_start, _rnn_s2s_step, False, lambda c: None),
}


def generate(params, config, prompt, *, key=None, max_new, temperature=1.0, top_k=None,
             top_p=None, eos_id=None, pad_id=0, bos_id=None, use_cache=True):
    """Generate tokens autoregressively.

    Decoder-only models (GPT, RNN LM) continue `prompt`; encoder-decoder models encode
    `prompt` (the source, padded with `config.pad_id`) once and decode from `bos_id`. With
    the cache (default) each new token costs one position, not the whole prefix.

    Args:
      params, config: a model's params and config (`GPTConfig`, `Seq2SeqConfig`,
        `RNNLMConfig`, `RNNSeq2SeqConfig`).
      prompt: integer ids `(B, T)` (a batch of equal-length prompts, or sources).
      key: a `fnad.random.PRNGKey` (needed unless temperature is 0).
      max_new: the most tokens to add.
      temperature: 0 for greedy decoding; otherwise logits are divided by it.
      top_k, top_p: optional top-k and nucleus filtering.
      eos_id: a row that emits it is finished: it keeps `pad_id` afterwards, and the loop
        stops once every row has finished.
      pad_id: filler for finished rows.
      bos_id: the decoder's start id (encoder-decoder models).
      use_cache: False recomputes the whole prefix each step (for testing and timing).

    Returns:
      An integer array on the params' device: decoder-only models `(B, T + n)` (prompt and
      new tokens), encoder-decoder models `(B, n)` (new tokens), `n <= max_new`.

    Example:
      out = generate(params, config, prompt, key=fnad.random.PRNGKey(0), max_new=100,
                     temperature=0.8, top_k=20)
    """
    if type(config) not in _MODELS:
        raise TypeError(f"generate: config of type {type(config).__name__} is not a model "
                        f"config; pass one of {[t.__name__ for t in _MODELS]}.")
    start, step, keep_prompt, limit = _MODELS[type(config)]
    xp = array_module(params)
    prompt = xp.asarray(getval(prompt))
    if prompt.ndim != 2 or prompt.dtype.kind not in "iu":
        raise ValueError(f"generate: prompt must be integer ids (batch, time), got "
                         f"{prompt.dtype} {prompt.shape}; add a batch axis with prompt[None].")
    if temperature != 0 and key is None:
        raise ValueError("generate: sampling (temperature > 0) needs key=; pass "
                         "key=fnad.random.PRNGKey(...) or temperature=0 for greedy decoding.")
    n_max = limit(config)
    used = (prompt.shape[1] if keep_prompt else 1) + max_new - 1
    if n_max is not None and used > n_max:
        raise ValueError(f"generate: {used} decoder positions are needed (prompt length "
                         f"{prompt.shape[1]}, max_new={max_new}) but the model's max_len is "
                         f"{n_max}; shorten the prompt or lower max_new.")
    if key is not None:
        key = xp.asarray(getval(key))  # the key follows the params' device
    logits, state = start(params, config, prompt, use_cache, bos_id)
    done = xp.zeros(prompt.shape[0], dtype=bool)
    out = []
    for i in range(max_new):
        k = None if temperature == 0 else random.fold_in(key, i)
        ids = sample_logits(k, logits, temperature=temperature, top_k=top_k, top_p=top_p)
        ids = xp.where(done, pad_id, ids).astype(prompt.dtype)
        out.append(ids)
        if eos_id is not None:
            done |= ids == eos_id
            if bool(done.all()):
                break
        if i + 1 < max_new:
            logits, state = step(params, config, ids[:, None], state)
    new = xp.stack(out, axis=1) if out else xp.zeros((prompt.shape[0], 0), prompt.dtype)
    return xp.concatenate([prompt, new], axis=1) if keep_prompt else new
