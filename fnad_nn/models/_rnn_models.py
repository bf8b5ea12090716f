"""Recurrent models on the RNN/LSTM/GRU layers: a language model, and an encoder-decoder
whose decoder starts from the encoder's final states through a bridge (the seed cogforge's
design)."""

import dataclasses
import functools

import numpy as np

import fnad.random as random

import fnad_nn as nn

from ._util import check_choice, check_model, check_tokens, dropout_keys

__all__ = ["RNNLMConfig", "init_rnn_lm", "rnn_lm", "RNNSeq2SeqConfig", "init_rnn_seq2seq",
           "rnn_seq2seq", "rnn_encode", "rnn_decode"]

CELLS = {"rnn": (nn.init_rnn, nn.rnn), "lstm": (nn.init_lstm, nn.lstm),
         "gru": (nn.init_gru, nn.gru)}


@dataclasses.dataclass(frozen=True)
class RNNLMConfig:
    """A recurrent language model: embedding, stacked cells, linear head.

    Attributes:
      vocab: vocabulary size.
      d_embed, d_hidden, n_layers: embedding size, hidden size, stacked layers.
      cell: "rnn" (tanh), "lstm" or "gru".
      dropout: rate on the embeddings and on the top layer's outputs.
      tie_embeddings: the head is the embedding transposed (needs d_embed == d_hidden).
      dtype: parameter dtype.
    """
    vocab: int
    d_embed: int = 64
    d_hidden: int = 128
    n_layers: int = 1
    cell: str = "lstm"
    dropout: float = 0.0
    tie_embeddings: bool = False
    dtype: type = np.float32

    def __post_init__(self):
        check_choice("RNNLMConfig", "cell", self.cell, CELLS)
        if self.tie_embeddings and self.d_embed != self.d_hidden:
            raise ValueError(f"RNNLMConfig: tie_embeddings needs d_embed == d_hidden, got "
                             f"{self.d_embed} and {self.d_hidden}.")


def init_rnn_lm(key, config):
    """Parameters `{"tok", "rnn", ["head"]}` of an RNN language model.

    Example:
      config = RNNLMConfig(vocab=65, cell="gru")
      params = init_rnn_lm(fnad.random.PRNGKey(0), config)
    """
    c = config
    kt, kr, kh = random.split(key, 3)
    params = {"tok": nn.init_embedding(kt, c.vocab, c.d_embed, dtype=c.dtype,
                                       w_init=functools.partial(nn.init.normal, std=0.1)),
              "rnn": CELLS[c.cell][0](kr, c.d_embed, c.d_hidden, num_layers=c.n_layers,
                                      dtype=c.dtype)}
    if not c.tie_embeddings:
        params["head"] = nn.init_linear(kh, c.d_hidden, c.vocab, dtype=c.dtype)
    return params


def rnn_lm(params, config, tokens, *, state=None, key=None, train=False):
    """Logits of an RNN language model and its final state.

    Args:
      params: from `init_rnn_lm`.
      config: the `RNNLMConfig`.
      tokens: integer ids `(B, T)`.
      state: initial states `(L, B, H)` (a pair for an LSTM), e.g. the state returned by
        the previous chunk; None starts from zeros.
      key, train: dropout.

    Returns:
      `(logits (B, T, vocab), state)`.

    Example:
      logits, state = rnn_lm(params, config, tokens)
    """
    c = config
    check_model("rnn_lm", params, "init_rnn_lm",
                ("tok", "rnn") + ("head",) * (not c.tie_embeddings))
    tok = check_tokens("rnn_lm", params, tokens)
    k1, k2 = dropout_keys("rnn_lm", key, 2, train, c.dropout)
    x = nn.dropout(nn.embedding(params["tok"], tok), c.dropout, key=k1, train=train)
    hs, state = CELLS[c.cell][1](params["rnn"], x, state)
    hs = nn.dropout(hs, c.dropout, key=k2, train=train)
    logits = hs @ params["tok"]["w"].T if c.tie_embeddings else nn.linear(params["head"], hs)
    return logits, state


@dataclasses.dataclass(frozen=True)
class RNNSeq2SeqConfig:
    """A recurrent encoder-decoder joined by a bridge.

    Attributes:
      src_vocab, tgt_vocab: vocabulary sizes.
      d_embed: embedding size (both sides).
      enc_hidden, dec_hidden, enc_layers, dec_layers: the two stacks (may differ).
      cell: "rnn", "lstm" or "gru" (both sides).
      bridge: "project" (a tanh layer per decoder layer) or "copy" (equal hidden sizes).
      pad_id: source padding id (padding runs through the encoder; pad on the left, or
        bucket by length, if the final state must not see it).
      dtype: parameter dtype.
    """
    src_vocab: int
    tgt_vocab: int
    d_embed: int = 64
    enc_hidden: int = 128
    dec_hidden: int = 128
    enc_layers: int = 1
    dec_layers: int = 1
    cell: str = "gru"
    bridge: str = "project"
    pad_id: int = 0
    dtype: type = np.float32

    def __post_init__(self):
        check_choice("RNNSeq2SeqConfig", "cell", self.cell, CELLS)
        check_choice("RNNSeq2SeqConfig", "bridge", self.bridge, ("project", "copy"))


def init_rnn_seq2seq(key, config):
    """Parameters `{"src_tok", "tgt_tok", "enc", "bridge", "dec", "head"}`.

    Example:
      config = RNNSeq2SeqConfig(src_vocab=30, tgt_vocab=30, enc_layers=2, dec_layers=1)
      params = init_rnn_seq2seq(fnad.random.PRNGKey(0), config)
    """
    c = config
    ks, kt, ke, kb, kd, kh = random.split(key, 6)
    init = CELLS[c.cell][0]
    emb_init = functools.partial(nn.init.normal, std=0.1)
    return {"src_tok": nn.init_embedding(ks, c.src_vocab, c.d_embed, dtype=c.dtype,
                                         w_init=emb_init),
            "tgt_tok": nn.init_embedding(kt, c.tgt_vocab, c.d_embed, dtype=c.dtype,
                                         w_init=emb_init),
            "enc": init(ke, c.d_embed, c.enc_hidden, num_layers=c.enc_layers, dtype=c.dtype),
            "bridge": nn.init_bridge(kb, c.enc_hidden, c.dec_hidden, c.enc_layers,
                                     c.dec_layers, mode=c.bridge, dtype=c.dtype),
            "dec": init(kd, c.d_embed, c.dec_hidden, num_layers=c.dec_layers, dtype=c.dtype),
            "head": nn.init_linear(kh, c.dec_hidden, c.tgt_vocab, dtype=c.dtype)}


_RNN_SEQ2SEQ = ("src_tok", "tgt_tok", "enc", "bridge", "dec", "head")


def rnn_encode(params, config, src):
    """The decoder's initial state from source ids `(B, S)`: the encoder's final states
    through the bridge (for an LSTM, h and c each)."""
    c = config
    check_model("rnn_encode", params, "init_rnn_seq2seq", _RNN_SEQ2SEQ)
    src = check_tokens("rnn_seq2seq", params, src)
    _, final = CELLS[c.cell][1](params["enc"], nn.embedding(params["src_tok"], src))
    if c.cell == "lstm":
        return tuple(nn.bridge(params["bridge"], s, dec_layers=c.dec_layers) for s in final)
    return nn.bridge(params["bridge"], final, dec_layers=c.dec_layers)


def rnn_decode(params, config, tgt_in, state):
    """`(logits (B, T, tgt_vocab), state)` of decoder inputs `(B, T)` from `state`."""
    c = config
    check_model("rnn_decode", params, "init_rnn_seq2seq", _RNN_SEQ2SEQ)
    tgt_in = check_tokens("rnn_seq2seq", params, tgt_in)
    hs, state = CELLS[c.cell][1](params["dec"], nn.embedding(params["tgt_tok"], tgt_in), state)
    return nn.linear(params["head"], hs), state


def rnn_seq2seq(params, config, src, tgt_in):
    """Logits `(B, T, tgt_vocab)` of decoder inputs given source ids.

    Example:
      logits = rnn_seq2seq(params, config, src, tgt[:, :-1])
    """
    return rnn_decode(params, config, tgt_in, rnn_encode(params, config, src))[0]
