"""Models built from fnad_nn layers: GPT, the encoder-decoder transformer, RNN language models
and RNN encoder-decoders; KV-cached generation; evaluation helpers.

A model is a config (a frozen dataclass, hashable) and a params pytree:
`params = init_gpt(key, config)`, `logits = gpt(params, config, tokens)`.
"""

from ._gpt import GPTConfig as GPTConfig
from ._gpt import init_gpt as init_gpt
from ._gpt import gpt as gpt
from ._gpt import init_gpt_cache as init_gpt_cache
from ._seq2seq import Seq2SeqConfig as Seq2SeqConfig
from ._seq2seq import init_seq2seq as init_seq2seq
from ._seq2seq import seq2seq as seq2seq
from ._seq2seq import encode as encode
from ._seq2seq import decode as decode
from ._seq2seq import init_seq2seq_cache as init_seq2seq_cache
