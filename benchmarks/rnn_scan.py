"""Eager speed of fnad_nn's recurrent layers (built on fnad.lax.scan) against the same layers
unrolled in a Python loop (how fnad_nn ran them before), and under fnad.jit.

The tanh-RNN, LSTM and GRU of the jit issue's size: input 32, hidden 128, 50 steps, batch
32, float32, one layer. For each: the forward pass, and a forward + backward step
(value_and_grad of the mean of the outputs), median ms.

Run: nice -n 5 python benchmarks/rnn_scan.py [--repeats N] [--threads N]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this fnad
from _timing import median_times, threads_from_argv

threads_from_argv()

import numpy as np  # noqa: E402

import fnad  # noqa: E402
import fnad.numpy as fnp  # noqa: E402
import fnad_nn as nn  # noqa: E402

D_IN, HIDDEN, STEPS, BATCH = 32, 128, 50, 32


def _loop(step, n_state):
    """The layer unrolled in Python: one tape entry per op per step (the old fnad_nn)."""
    def run(params, xs):
        p = params[0]
        xw = fnp.matmul(xs, p["w_ih"]) + p["b_ih"]
        h = np.zeros((BATCH, HIDDEN), np.float32)
        s = h if n_state == 1 else (h, h)
        outs = []
        for t in range(STEPS):
            s = step(p, xw[:, t], s)
            outs.append(s if n_state == 1 else s[0])
        return fnp.stack(outs, axis=-2)
    return run


def _rnn_step(p, xw, h):
    return fnp.tanh(xw + h @ p["w_hh"] + p["b_hh"])


def _lstm_step(p, xw, s):
    h, c = s
    z = xw + h @ p["w_hh"] + p["b_hh"]
    i, f, g, o = (z[:, k * HIDDEN:(k + 1) * HIDDEN] for k in range(4))
    c = nn.sigmoid(f) * c + nn.sigmoid(i) * fnp.tanh(g)
    return nn.sigmoid(o) * fnp.tanh(c), c


def _gru_step(p, xw, h):
    xr, xz, xn = (xw[:, k * HIDDEN:(k + 1) * HIDDEN] for k in range(3))
    hw = h @ p["w_hh"] + p["b_hh"]
    hr, hz, hn = (hw[:, k * HIDDEN:(k + 1) * HIDDEN] for k in range(3))
    r, z = nn.sigmoid(xr + hr), nn.sigmoid(xz + hz)
    n = fnp.tanh(xn + r * hn)
    return n + z * (h - n)


LAYERS = {
    "rnn": (nn.init_rnn, lambda p, x: nn.rnn(p, x)[0], _loop(_rnn_step, 1)),
    "lstm": (nn.init_lstm, lambda p, x: nn.lstm(p, x)[0], _loop(_lstm_step, 2)),
    "gru": (nn.init_gru, lambda p, x: nn.gru(p, x)[0], _loop(_gru_step, 1)),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    x = np.random.default_rng(0).normal(size=(BATCH, STEPS, D_IN)).astype(np.float32)
    print(f"eager recurrent layers, input {D_IN}, hidden {HIDDEN}, {STEPS} steps, batch "
          f"{BATCH}, float32; median ms (repeats {args.repeats})")
    print(f"{'layer':6} {'pass':9} {'loop':>8} {'scan':>8} {'jit scan':>9} {'scan/loop':>10}")
    for name, (init, scan_fn, loop_fn) in LAYERS.items():
        params = init(fnad.random.PRNGKey(0), D_IN, HIDDEN)
        ref = loop_fn(params, x)
        got = scan_fn(params, x)
        assert np.allclose(ref, got, atol=1e-5), name
        loss = {k: (lambda f: lambda p: fnp.mean(f(p, x)))(f)
                for k, f in (("loop", loop_fn), ("scan", scan_fn))}
        jf, jg = fnad.jit(scan_fn), fnad.jit(fnad.value_and_grad(loss["scan"]))
        fns = {"fwd loop": lambda: loop_fn(params, x), "fwd scan": lambda: scan_fn(params, x),
               "fwd jit": lambda: jf(params, x),
               "grad loop": lambda: fnad.value_and_grad(loss["loop"])(params),
               "grad scan": lambda: fnad.value_and_grad(loss["scan"])(params),
               "grad jit": lambda: jg(params)}
        t = median_times(fns, args.repeats, pause=0.05)
        for kind in ("fwd", "grad"):
            lo, sc, ji = (t[f"{kind} {k}"] * 1e3 for k in ("loop", "scan", "jit"))
            print(f"{name:6} {kind:9} {lo:8.2f} {sc:8.2f} {ji:9.2f} {sc / lo:10.2f}")


if __name__ == "__main__":
    main()
