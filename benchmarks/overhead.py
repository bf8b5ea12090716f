"""Per-op overhead of fnad's tracing, side by side with PyTorch eager and hand-written NumPy.

Three workloads, each timed in this one process (medians of repeated runs):
  1. chain: the gradient of a chain of 200 tiny elementwise ops on a 16-element vector;
     reported per op (forward + backward).
  2. mlp:   one training step (forward, backward, SGD update) of an MLP 784-256-256-10 at
     batch 128 in float32.
  3. plain: 1000 small fnad.numpy calls on plain arrays (nothing traced) vs NumPy itself.

Run: python benchmarks/overhead.py [--repeats N]
"""

import argparse
import os
import sys

import numpy as np

import fnad
import fnad.numpy as fnp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_times

N_CHAIN = 200


# --------------------------------------------------------------------------- 1. op chain
# The chain cycles through four cheap ops: x*1.001, sin, +0.1, tanh (50 of each).

def chain_fnad(x):
    for _ in range(N_CHAIN // 4):
        x = fnp.tanh(fnp.sin(x * 1.001) + 0.1)
    return fnp.sum(x)


def chain_numpy_grad(x):
    """Hand-written forward and backward of the same chain."""
    saved = []
    for _ in range(N_CHAIN // 4):
        a = x * 1.001
        s = np.sin(a)
        x = np.tanh(s + 0.1)
        saved.append((a, x))
    g = np.ones_like(x)
    for a, t in reversed(saved):
        g = g * (1 - t * t)
        g = g * np.cos(a)
        g = g * 1.001
    return g


def chain_torch(torch, x):
    x = x.detach().requires_grad_(True)
    y = x
    for _ in range(N_CHAIN // 4):
        y = torch.tanh(torch.sin(y * 1.001) + 0.1)
    y.sum().backward()
    return x.grad


# --------------------------------------------------------------------------- 2. MLP step
SIZES = (784, 256, 256, 10)
BATCH = 128
LR = 0.01


def init_mlp(rng):
    params = []
    for d_in, d_out in zip(SIZES[:-1], SIZES[1:]):
        bound = 1 / np.sqrt(d_in)
        params.append({"w": rng.uniform(-bound, bound, (d_in, d_out)).astype(np.float32),
                       "b": np.zeros(d_out, np.float32)})
    return params


def mlp_loss_fnad(params, x, y_onehot):
    h = x
    for i, layer in enumerate(params):
        h = h @ layer["w"] + layer["b"]
        if i < len(params) - 1:
            h = fnp.maximum(h, 0.0)
    h = h - fnad.stop_gradient(fnp.max(h, axis=1, keepdims=True))  # as jax.nn.log_softmax
    logp = h - fnp.log(fnp.sum(fnp.exp(h), axis=1, keepdims=True))
    return -fnp.sum(logp * y_onehot) / x.shape[0]


_mlp_grad = fnad.value_and_grad(mlp_loss_fnad)


def mlp_step_fnad(params, x, y_onehot):
    loss, grads = _mlp_grad(params, x, y_onehot)
    return fnad.tree_map(lambda p, g: p - LR * g, params, grads), loss


def mlp_step_numpy(params, x, y_onehot):
    """Hand-written forward and backward of the same MLP."""
    acts = [x]
    h = x
    for i, layer in enumerate(params):
        h = h @ layer["w"] + layer["b"]
        if i < len(params) - 1:
            h = np.maximum(h, 0)
        acts.append(h)
    z = h - h.max(axis=1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    loss = -np.sum((z - np.log(e.sum(axis=1, keepdims=True))) * y_onehot) / x.shape[0]
    g = (p - y_onehot) / x.shape[0]
    new = [None] * len(params)
    for i in range(len(params) - 1, -1, -1):
        layer = params[i]
        a_in = acts[i]
        gw = a_in.T @ g
        gb = g.sum(axis=0)
        if i > 0:
            g = (g @ layer["w"].T) * (acts[i] > 0)
        new[i] = {"w": layer["w"] - LR * gw, "b": layer["b"] - LR * gb}
    return new, loss


def mlp_step_torch(torch, tparams, x, y):
    h = x
    for i, (w, b) in enumerate(tparams):
        h = h @ w + b
        if i < len(tparams) - 1:
            h = torch.relu(h)
    loss = torch.nn.functional.cross_entropy(h, y)
    for p in [t for wb in tparams for t in wb]:
        p.grad = None
    loss.backward()
    with torch.no_grad():
        for w, b in tparams:
            w -= LR * w.grad
            b -= LR * b.grad
    return loss


# --------------------------------------------------------------------------- 3. plain calls

def plain_chain(m, x):
    for _ in range(250):
        x = m.tanh(m.multiply(m.sin(m.add(x, 0.1)), 0.5))
    return x


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=100)
    args = ap.parse_args()
    r = args.repeats
    try:
        import torch
        torch.set_num_threads(2)
    except ImportError:
        torch = None

    rng = np.random.default_rng(0)
    rows = []

    x16 = rng.standard_normal(16)
    g_fnad = fnad.grad(chain_fnad)
    assert np.allclose(g_fnad(x16), chain_numpy_grad(x16))
    fns = {"fnad": lambda: g_fnad(x16), "numpy": lambda: chain_numpy_grad(x16)}
    if torch is not None:
        xt = torch.tensor(x16)
        assert np.allclose(chain_torch(torch, xt).numpy(), chain_numpy_grad(x16))
        fns["torch"] = lambda: chain_torch(torch, xt)
    line = {k: v / N_CHAIN * 1e6 for k, v in median_times(fns, r, rounds=5).items()}
    line["workload"] = f"chain of {N_CHAIN} ops, per op (us)"
    rows.append(line)

    params = init_mlp(rng)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    labels = rng.integers(0, SIZES[-1], BATCH)
    y1h = np.eye(SIZES[-1], dtype=np.float32)[labels]
    new_f, loss_f = mlp_step_fnad(params, x, y1h)
    new_n, loss_n = mlp_step_numpy(params, x, y1h)
    assert np.allclose(loss_f, loss_n, rtol=1e-5)
    assert all(np.allclose(a["w"], b["w"], atol=1e-6) for a, b in zip(new_f, new_n))
    assert new_f[0]["w"].dtype == np.float32
    fns = {"fnad": lambda: mlp_step_fnad(params, x, y1h),
           "numpy": lambda: mlp_step_numpy(params, x, y1h)}
    if torch is not None:
        tparams = [(torch.tensor(p["w"], requires_grad=True),
                    torch.tensor(p["b"], requires_grad=True)) for p in params]
        xt, yt = torch.tensor(x), torch.tensor(labels)
        fns["torch"] = lambda: mlp_step_torch(torch, tparams, xt, yt)
    line = {k: v * 1e3 for k, v in median_times(fns, r, rounds=5).items()}
    line["workload"] = "MLP 784-256-256-10 step, b=128 f32 (ms)"
    rows.append(line)

    xs = rng.standard_normal(16)
    assert np.allclose(plain_chain(fnp, xs), plain_chain(np, xs))
    fns = {"fnad": lambda: plain_chain(fnp, xs), "numpy": lambda: plain_chain(np, xs)}
    line = {k: v / 1000 * 1e6 for k, v in median_times(fns, r, rounds=5).items()}
    line["workload"] = "1000 plain fnad.numpy calls, per call (us)"
    rows.append(line)

    print(f"{'workload':44s} {'fnad':>9s} {'numpy':>9s} {'torch':>9s} "
          f"{'fnad/torch':>10s} {'fnad/numpy':>10s}")
    for row in rows:
        tt = row.get("torch")
        print(f"{row['workload']:44s} {row['fnad']:9.3f} {row['numpy']:9.3f} "
              f"{tt if tt is not None else float('nan'):9.3f} "
              f"{row['fnad'] / tt if tt else float('nan'):10.2f} "
              f"{row['fnad'] / row['numpy']:10.2f}")


if __name__ == "__main__":
    main()
