"""Models built from fnad_nn layers: GPT, the encoder-decoder transformer, RNN language models
and RNN encoder-decoders; KV-cached generation; evaluation helpers; Hugging Face GPT-2
folders in and out (`from_pretrained`, `save_pretrained`).

A model is a config (a frozen dataclass, hashable) and a params pytree:
`params = init_gpt(key, config)`, `logits = gpt(params, config, tokens)`.
"""

from ._gpt import GPTConfig as GPTConfig
from ._gpt import init_gpt as init_gpt
from ._gpt import gpt as gpt
from ._gpt import init_gpt_cache as init_gpt_cache
from ._pretrained import from_pretrained as from_pretrained
from ._pretrained import save_pretrained as save_pretrained
from ._seq2seq import Seq2SeqConfig as Seq2SeqConfig
from ._seq2seq import init_seq2seq as init_seq2seq
from ._seq2seq import seq2seq as seq2seq
from ._seq2seq import encode as encode
from ._seq2seq import decode as decode
from ._seq2seq import init_seq2seq_cache as init_seq2seq_cache
from ._rnn_models import RNNLMConfig as RNNLMConfig
from ._rnn_models import init_rnn_lm as init_rnn_lm
from ._rnn_models import rnn_lm as rnn_lm
from ._rnn_models import RNNSeq2SeqConfig as RNNSeq2SeqConfig
from ._rnn_models import init_rnn_seq2seq as init_rnn_seq2seq
from ._rnn_models import rnn_seq2seq as rnn_seq2seq
from ._rnn_models import rnn_encode as rnn_encode
from ._rnn_models import rnn_decode as rnn_decode
from ._generate import generate as generate
from ._generate import sample_logits as sample_logits
from ._eval import token_loss as token_loss
from ._eval import evaluate as evaluate
from ._eval import lm_batches as lm_batches
from ._eval import perplexity as perplexity
from ._eval import bits_per_char as bits_per_char
