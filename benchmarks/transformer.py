"""Pre-norm transformer block forward + backward, fnad_nn vs PyTorch eager (CPU, 2 threads by
default: --threads N sets BLAS and torch threads alike),
float32.

Workload: batch 32, T 64, d_model 128, 4 heads, feed-forward 512 with ReLU (cogforge's
FeedForward; --activation gelu for the exact GELU), causal self-attention; loss = mean of
the block's output; gradients with respect to every parameter and the input. The PyTorch
block is the same computation from standard pieces (LayerNorm, Linear,
scaled_dot_product_attention) with the same weights. Prints medians and the ratio
fnad / torch.

Run: python benchmarks/transformer.py [--repeats N] [--threads N] [--activation relu|gelu]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_times, report, threads_from_argv

THREADS = threads_from_argv()

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import fnad  # noqa: E402
import fnad.numpy as fnp  # noqa: E402
import fnad_nn as nn  # noqa: E402

torch.set_num_threads(THREADS)
B, T, D, H = 32, 64, 128, 4
ACT = "relu"


def torch_block(p, x):
    def lin(q, z):
        return F.linear(z, q["w"].T, q.get("b"))

    a = p["attn"]
    h = F.layer_norm(x, (D,), p["ln1"]["scale"], p["ln1"]["bias"])
    q, k, v = (F.linear(h, a[n]["w"].reshape(D, D).T, a[n]["b"].reshape(D))
               .reshape(B, T, H, D // H).transpose(1, 2) for n in "qkv")
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    o = o.transpose(1, 2).reshape(B, T, D) @ a["o"]["w"].reshape(D, D) + a["o"]["b"]
    x = x + o
    h = F.layer_norm(x, (D,), p["ln2"]["scale"], p["ln2"]["bias"])
    act = F.relu if ACT == "relu" else F.gelu
    return x + lin(p["ff"]["fc2"], act(lin(p["ff"]["fc1"], h)))


def main(repeats):
    params = nn.init_transformer_block(fnad.random.PRNGKey(0), D, H, 4 * D, activation=ACT)
    x = np.random.default_rng(0).standard_normal((B, T, D)).astype(np.float32)

    def loss(p, x):
        return fnp.mean(nn.transformer_block(p, x, causal=True, activation=ACT))

    grad_fn = fnad.value_and_grad(loss, argnums=(0, 1))
    tp = fnad.tree_map(lambda a: torch.tensor(a, requires_grad=True), params)
    tx = torch.tensor(x, requires_grad=True)
    leaves = fnad.tree_leaves(tp) + [tx]

    def torch_step():
        out = torch_block(tp, tx).mean()
        return out, torch.autograd.grad(out, leaves)

    v, _ = grad_fn(params, x)
    assert abs(float(v) - float(torch_step()[0].detach())) < 1e-4
    med = median_times({"fnad": lambda: grad_fn(params, x), "torch": torch_step}, repeats)
    report(f"transformer block B={B} T={T} d={D} heads={H} ff={4 * D} ({ACT}), "
           f"forward+backward (float32, {THREADS} threads)", med)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2, help="BLAS and torch threads")
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--activation", choices=["relu", "gelu"], default="relu")
    args = ap.parse_args()
    ACT = args.activation
    main(args.repeats)
