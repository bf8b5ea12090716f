"""Recurrent layers: RNN (tanh), LSTM and GRU cells, their unrolled multi-layer versions, and
the bridge from encoder to decoder hidden states. Gate order and the two biases follow
PyTorch (LSTM: i, f, g, o; GRU: r, z, n), so weights copy over directly."""

import math

import numpy as np

import fnad.numpy as fnp
from fnad import lax

from . import _init
from ._activations import sigmoid
from ._util import ParamSpec, check_layers, check_params, dtype_of, shape_of, split_key

__all__ = ["init_rnn_cell", "rnn_cell", "init_rnn", "rnn", "init_stacked_rnn", "stacked_rnn",
           "init_lstm_cell", "lstm_cell", "init_lstm", "lstm", "init_gru_cell", "gru_cell",
           "init_gru", "gru", "init_bridge", "bridge"]


def _init_cell(key, d_in, d_hidden, gates, bias, dtype):
    # PyTorch: every weight and bias U(-1/sqrt(hidden), 1/sqrt(hidden))
    k1, k2, k3, k4 = split_key(key, 4)
    u = lambda k, s: _init.torch_default_uniform(k, s, dtype, fan_in=d_hidden)
    return {"w_ih": u(k1, (d_in, gates * d_hidden)), "w_hh": u(k2, (d_hidden, gates * d_hidden)),
            "b_ih": u(k3, (gates * d_hidden,)) if bias else None,
            "b_hh": u(k4, (gates * d_hidden,)) if bias else None}


def _cell_spec(init):
    return ParamSpec(init, {"w_ih": 2, "w_hh": 2, "b_ih": 1, "b_hh": 1},
                     nullable=("b_ih", "b_hh"),
                     same=[("w_hh", 1, "w_ih", 1), ("b_ih", 0, "w_ih", 1), ("b_hh", 0, "w_hh", 1)])


_CELL = {"rnn": _cell_spec("init_rnn_cell"), "lstm": _cell_spec("init_lstm_cell"),
         "gru": _cell_spec("init_gru_cell")}


def _input_part(p, x):
    """`x @ w_ih + b_ih` for all time steps at once."""
    w = p["w_ih"]
    s = shape_of(x)
    if s[-1] != shape_of(w)[0]:
        raise ValueError(f"recurrent layer: input of shape {s} does not match the input size "
                         f"{shape_of(w)[0]} of the parameters.")
    y = fnp.matmul(fnp.reshape(x, (-1, s[-1])), w)
    if p["b_ih"] is not None:
        y = y + p["b_ih"]
    return fnp.reshape(y, s[:-1] + (shape_of(w)[1],))


def _hidden_part(p, h):
    y = fnp.matmul(h, p["w_hh"])
    return y + p["b_hh"] if p["b_hh"] is not None else y


def _hidden_size(p):
    return shape_of(p["w_hh"])[0]


def _zeros_state(p, x_step):
    # on the inputs' device (zeros_like dispatches to CuPy for CuPy arrays)
    return fnp.zeros_like(x_step, shape=shape_of(x_step)[:-1] + (_hidden_size(p),))


def _gates(z, n):
    h = shape_of(z)[-1] // n
    return [z[..., i * h:(i + 1) * h] for i in range(n)]


# ----------------------------------------------------------------------------- cells

def init_rnn_cell(key, d_in, d_hidden, *, bias=True, dtype=np.float32):
    """Parameters of a tanh RNN cell (PyTorch's `nn.RNNCell` layout and initialisation).

    Args:
      key: a `fnad.random.PRNGKey`.
      d_in, d_hidden: input and hidden sizes.
      bias: whether to include `b_ih` and `b_hh` (both None when False).
      dtype: parameter dtype.

    Returns:
      `{"w_ih": (d_in, H), "w_hh": (H, H), "b_ih": (H,), "b_hh": (H,)}`.

    Example:
      p = init_rnn_cell(fnad.random.PRNGKey(0), 8, 16)
      h = rnn_cell(p, x, h)
    """
    return _init_cell(key, d_in, d_hidden, 1, bias, dtype)


def rnn_cell(params, x, h):
    """One step `tanh(x @ w_ih + b_ih + h @ w_hh + b_hh)`.

    Args:
      params: from `init_rnn_cell`.
      x: input `(..., d_in)`.
      h: previous hidden state `(..., H)`.

    Returns:
      The next hidden state `(..., H)`.

    Example:
      h = rnn_cell(params, x_t, h)
    """
    check_params("rnn_cell", params, x, call="rnn_cell(params, x, h)", spec=_CELL["rnn"])
    return fnp.tanh(_input_part(params, x) + _hidden_part(params, h))


def init_lstm_cell(key, d_in, d_hidden, *, bias=True, dtype=np.float32):
    """Parameters of an LSTM cell (PyTorch's layout: gates i, f, g, o along the last axis).

    Args:
      key: a `fnad.random.PRNGKey`.
      d_in, d_hidden: input and hidden sizes.
      bias: whether to include `b_ih` and `b_hh` (both None when False).
      dtype: parameter dtype.

    Returns:
      `{"w_ih": (d_in, 4H), "w_hh": (H, 4H), "b_ih": (4H,), "b_hh": (4H,)}`.

    Example:
      p = init_lstm_cell(fnad.random.PRNGKey(0), 8, 16)
      h, c = lstm_cell(p, x, (h, c))
    """
    return _init_cell(key, d_in, d_hidden, 4, bias, dtype)


def _lstm_step(params, xw, state):
    h, c = state
    i, f, g, o = _gates(xw + _hidden_part(params, h), 4)
    c = sigmoid(f) * c + sigmoid(i) * fnp.tanh(g)
    return sigmoid(o) * fnp.tanh(c), c


def lstm_cell(params, x, state):
    """One LSTM step.

    Args:
      params: from `init_lstm_cell`.
      x: input `(..., d_in)`.
      state: `(h, c)`, each `(..., H)`.

    Returns:
      The next `(h, c)`.

    Example:
      h, c = lstm_cell(params, x_t, (h, c))
    """
    check_params("lstm_cell", params, x, call="lstm_cell(params, x, (h, c))",
                 spec=_CELL["lstm"])
    return _lstm_step(params, _input_part(params, x), state)


def init_gru_cell(key, d_in, d_hidden, *, bias=True, dtype=np.float32):
    """Parameters of a GRU cell (PyTorch's layout: gates r, z, n along the last axis).

    Args:
      key: a `fnad.random.PRNGKey`.
      d_in, d_hidden: input and hidden sizes.
      bias: whether to include `b_ih` and `b_hh` (both None when False).
      dtype: parameter dtype.

    Returns:
      `{"w_ih": (d_in, 3H), "w_hh": (H, 3H), "b_ih": (3H,), "b_hh": (3H,)}`.

    Example:
      p = init_gru_cell(fnad.random.PRNGKey(0), 8, 16)
      h = gru_cell(p, x, h)
    """
    return _init_cell(key, d_in, d_hidden, 3, bias, dtype)


def _gru_step(params, xw, h):
    xr, xz, xn = _gates(xw, 3)
    hr, hz, hn = _gates(_hidden_part(params, h), 3)
    r = sigmoid(xr + hr)
    z = sigmoid(xz + hz)
    n = fnp.tanh(xn + r * hn)
    return n + z * (h - n)


def gru_cell(params, x, h):
    """One GRU step: `h' = (1 - z) * n + z * h`, `n = tanh(W_in x + b_in + r * (W_hn h +
    b_hn))`, as PyTorch.

    Args:
      params: from `init_gru_cell`.
      x: input `(..., d_in)`.
      h: previous hidden state `(..., H)`.

    Returns:
      The next hidden state.

    Example:
      h = gru_cell(params, x_t, h)
    """
    check_params("gru_cell", params, x, call="gru_cell(params, x, h)", spec=_CELL["gru"])
    return _gru_step(params, _input_part(params, x), h)


# ----------------------------------------------------------------------------- over time

def _init_layers(cell_init, key, d_in, d_hidden, num_layers, bias, dtype):
    keys = split_key(key, num_layers)
    return [cell_init(k, d_in if i == 0 else d_hidden, d_hidden, bias=bias, dtype=dtype)
            for i, k in enumerate(keys)]


def _initial_state(p, xw, state0, layer, n_state):
    if state0 is None:
        z = _zeros_state(p, xw[..., 0, :])
        return z if n_state == 1 else (z, z)
    states = (state0,) if n_state == 1 else state0
    # the carry keeps one dtype: the one a step gives (e.g. float32 inputs, float64 state)
    dt = np.result_type(dtype_of(xw), dtype_of(p["w_hh"]), *(dtype_of(s) for s in states))
    out = tuple(s[layer] if dtype_of(s) == dt else fnp.astype(s[layer], dt) for s in states)
    return out[0] if n_state == 1 else out


def _run(fname, cell, step, params, xs, state0, n_state):
    """Run `step` over time (one `fnad.lax.scan` per layer) and layers. `state0` is None or
    per-state arrays (L, ..., H); `fname` names the layer and `cell` its cell's kind."""
    x = xs
    finals = []
    for layer, p in enumerate(params):
        check_params(fname, p, x, init=f"init_{cell}", spec=_CELL[cell],
                     path=f"params[{layer}]")
        xw = _input_part(p, x)

        def body(s, xw_t, p=p):
            s = step(p, xw_t, s)
            return s, (s if n_state == 1 else s[0])

        s, ys = lax.scan(body, _initial_state(p, xw, state0, layer, n_state),
                         fnp.moveaxis(xw, -2, 0))
        x = fnp.moveaxis(ys, 0, -2)
        finals.append(s)
    if n_state == 1:
        return x, fnp.stack(finals)
    return x, (fnp.stack([f[0] for f in finals]), fnp.stack([f[1] for f in finals]))


def _rnn_step(p, xw, h):
    return fnp.tanh(xw + _hidden_part(p, h))


def init_rnn(key, d_in, d_hidden, *, num_layers=1, bias=True, dtype=np.float32):
    """Parameters of a (stacked) tanh RNN, one cell per layer (PyTorch's `nn.RNN`).

    Args:
      key: a `fnad.random.PRNGKey`.
      d_in: input size of the first layer.
      d_hidden: hidden size of every layer.
      num_layers: number of stacked layers.
      bias: whether cells have biases.
      dtype: parameter dtype.

    Returns:
      A list of `init_rnn_cell` dicts.

    Example:
      params = init_rnn(fnad.random.PRNGKey(0), 8, 16, num_layers=2)
      hs, h_n = rnn(params, xs)
    """
    return _init_layers(init_rnn_cell, key, d_in, d_hidden, num_layers, bias, dtype)


def rnn(params, xs, h0=None):
    """Run a (stacked) tanh RNN over the time axis.

    Args:
      params: from `init_rnn` (a list of cells, bottom first).
      xs: inputs `(..., T, d_in)` (batch first; any leading axes).
      h0: optional initial states `(L, ..., H)`; zeros by default.

    Returns:
      `(hs, h_n)`: top-layer states `(..., T, H)` and final states of every layer
      `(L, ..., H)`.

    Example:
      hs, h_n = rnn(params, xs)
    """
    check_layers("rnn", params, xs, single="rnn_cell")
    return _run("rnn", "rnn", _rnn_step, params, xs, h0, 1)


def init_stacked_rnn(key, d_in, d_hidden, num_layers, *, bias=True, dtype=np.float32):
    """`init_rnn` with `num_layers` layers. Example: `init_stacked_rnn(key, 8, 16, 3)`."""
    return init_rnn(key, d_in, d_hidden, num_layers=num_layers, bias=bias, dtype=dtype)


def stacked_rnn(params, xs, h0=None):
    """Stacked RNN: `(top_layer_states (..., T, H), per_layer_final_states (L, ..., H))`, the
    second ready for `bridge` in a sequence-to-sequence model. Same as `rnn`.

    Example:
      hs, finals = stacked_rnn(params, xs)
    """
    check_layers("stacked_rnn", params, xs, single="rnn_cell")
    return rnn(params, xs, h0)


def init_lstm(key, d_in, d_hidden, *, num_layers=1, bias=True, dtype=np.float32):
    """Parameters of a (stacked) LSTM (PyTorch's `nn.LSTM`).

    Args:
      key: a `fnad.random.PRNGKey`.
      d_in, d_hidden: input size of the first layer and hidden size.
      num_layers: number of stacked layers.
      bias: whether cells have biases.
      dtype: parameter dtype.

    Returns:
      A list of `init_lstm_cell` dicts.

    Example:
      params = init_lstm(fnad.random.PRNGKey(0), 8, 16)
      hs, (h_n, c_n) = lstm(params, xs)
    """
    return _init_layers(init_lstm_cell, key, d_in, d_hidden, num_layers, bias, dtype)


def lstm(params, xs, state0=None):
    """Run a (stacked) LSTM over the time axis.

    Args:
      params: from `init_lstm`.
      xs: inputs `(..., T, d_in)`.
      state0: optional `(h0, c0)`, each `(L, ..., H)`.

    Returns:
      `(hs, (h_n, c_n))` with hs `(..., T, H)` and h_n, c_n `(L, ..., H)`.

    Example:
      hs, (h_n, c_n) = lstm(params, xs)
    """
    check_layers("lstm", params, xs, single="lstm_cell")
    return _run("lstm", "lstm", _lstm_step, params, xs, state0, 2)


def init_gru(key, d_in, d_hidden, *, num_layers=1, bias=True, dtype=np.float32):
    """Parameters of a (stacked) GRU (PyTorch's `nn.GRU`).

    Args:
      key: a `fnad.random.PRNGKey`.
      d_in, d_hidden: input size of the first layer and hidden size.
      num_layers: number of stacked layers.
      bias: whether cells have biases.
      dtype: parameter dtype.

    Returns:
      A list of `init_gru_cell` dicts.

    Example:
      params = init_gru(fnad.random.PRNGKey(0), 8, 16)
      hs, h_n = gru(params, xs)
    """
    return _init_layers(init_gru_cell, key, d_in, d_hidden, num_layers, bias, dtype)


def gru(params, xs, h0=None):
    """Run a (stacked) GRU over the time axis.

    Args:
      params: from `init_gru`.
      xs: inputs `(..., T, d_in)`.
      h0: optional initial states `(L, ..., H)`.

    Returns:
      `(hs, h_n)` with hs `(..., T, H)` and h_n `(L, ..., H)`.

    Example:
      hs, h_n = gru(params, xs)
    """
    check_layers("gru", params, xs, single="gru_cell")
    return _run("gru", "gru", _gru_step, params, xs, h0, 1)


# ----------------------------------------------------------------------------- bridge

def _layer_map(enc_layers, dec_layers):
    # align from the top: the top decoder layer starts from the top encoder layer
    return [min(max(j + enc_layers - dec_layers, 0), enc_layers - 1) for j in range(dec_layers)]


def init_bridge(key, enc_hidden, dec_hidden, enc_layers, dec_layers, *, mode="project",
                dtype=np.float32):
    """Parameters mapping encoder final states `(L_enc, ..., H_enc)` to decoder initial states
    `(L_dec, ..., H_dec)`.

    Decoder layer j starts from encoder layer `clip(j + L_enc - L_dec, 0, L_enc - 1)` (tops
    aligned; extra decoder layers reuse the bottom encoder layer). In "project" mode each
    decoder layer has its own `tanh(h @ w[j] + b[j])`; "copy" mode has no parameters and
    needs equal hidden sizes.

    Args:
      key: a `fnad.random.PRNGKey`.
      enc_hidden, dec_hidden: hidden sizes.
      enc_layers, dec_layers: layer counts.
      mode: "project" or "copy".
      dtype: parameter dtype.

    Returns:
      `{"w": (L_dec, H_enc, H_dec), "b": (L_dec, H_dec)}`, or `{}` for "copy".

    Example:
      bp = init_bridge(key, 64, 32, 2, 3)
      h0_dec = bridge(bp, h_n_enc, dec_layers=3)
    """
    if mode == "copy":
        if enc_hidden != dec_hidden:
            raise ValueError(f"init_bridge: mode='copy' needs equal hidden sizes, got "
                             f"{enc_hidden} and {dec_hidden}; use mode='project'.")
        return {}
    if mode != "project":
        raise ValueError(f"init_bridge: mode={mode!r}; use 'project' or 'copy'.")
    kw, kb = split_key(key, 2)
    bound = 1.0 / math.sqrt(enc_hidden)
    return {"w": _init.uniform(kw, (dec_layers, enc_hidden, dec_hidden), dtype, low=-bound,
                               high=bound),
            "b": _init.uniform(kb, (dec_layers, dec_hidden), dtype, low=-bound, high=bound)}


# "copy" mode's params are {}; "project" mode's hold both
_BRIDGE = ParamSpec("init_bridge", {"w": 3, "b": 2}, absent=("w", "b"), same=[("b", 1, "w", 2)])


def bridge(params, h, *, dec_layers=None):
    """Map encoder final states to decoder initial states (see `init_bridge`).

    Args:
      params: from `init_bridge` (`{}` for copy mode).
      h: encoder final states `(L_enc, ..., H_enc)` (for an LSTM, call it on h and c).
      dec_layers: decoder layer count; needed in copy mode, read from params otherwise.

    Returns:
      `(L_dec, ..., H_dec)`.

    Example:
      h0 = bridge(bp, h_n, dec_layers=2)
    """
    check_params("bridge", params, h, call="bridge(params, h)", spec=_BRIDGE)
    enc_layers = shape_of(h)[0]
    if "w" in params:
        n = shape_of(params["w"])[0]
        if dec_layers is not None and dec_layers != n:
            raise ValueError(f"bridge: dec_layers={dec_layers} but the params map to {n} "
                             "layers.")
        dec_layers = n
    elif dec_layers is None:
        raise ValueError("bridge: copy mode needs dec_layers=.")
    steps = list(fnp.unstack(h))
    out = []
    for j, i in enumerate(_layer_map(enc_layers, dec_layers)):
        s = steps[i]
        if "w" in params:
            s = fnp.tanh(fnp.matmul(s, params["w"][j]) + params["b"][j])
        out.append(s)
    return fnp.stack(out)
