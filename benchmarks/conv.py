"""Two-layer conv net forward + backward, fnad_nn vs PyTorch eager (CPU, 2 threads by
default: --threads N sets BLAS and torch threads alike), float32.

Workload: batch 64 of 1x28x28 images; conv 1->32 (3x3, padding 1), ReLU, conv 32->64 (3x3,
padding 1), ReLU, mean; gradients with respect to all weights and biases. Both libraries
start from the same weights. Prints medians and the ratio fnad / torch.

Run: python benchmarks/conv.py [--repeats N] [--threads N]
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


def main(repeats):
    key = fnad.random.PRNGKey(0)
    k1, k2 = fnad.random.split(key)
    params = {"c1": nn.init_conv2d(k1, 1, 32, 3), "c2": nn.init_conv2d(k2, 32, 64, 3)}
    x = np.random.default_rng(0).standard_normal((64, 1, 28, 28)).astype(np.float32)

    def loss(p, x):
        h = nn.relu(nn.conv2d(p["c1"], x, padding=1))
        h = nn.relu(nn.conv2d(p["c2"], h, padding=1))
        return fnp.mean(h)

    grad_fn = fnad.value_and_grad(loss)
    tp = {k: {n: torch.tensor(v, requires_grad=True) for n, v in d.items()}
          for k, d in params.items()}
    tx = torch.tensor(x)

    def torch_step():
        h = F.relu(F.conv2d(tx, tp["c1"]["w"], tp["c1"]["b"], padding=1))
        h = F.relu(F.conv2d(h, tp["c2"]["w"], tp["c2"]["b"], padding=1))
        out = h.mean()
        grads = torch.autograd.grad(out, [t for d in tp.values() for t in d.values()])
        return out, grads

    v, _ = grad_fn(params, x)
    assert abs(float(v) - float(torch_step()[0].detach())) < 1e-4 * abs(float(v)) + 1e-6
    med = median_times({"fnad": lambda: grad_fn(params, x), "torch": torch_step}, repeats)
    report(f"conv2d 1->32->64, 3x3, batch 64, 28x28, forward+backward (float32, "
           f"{THREADS} threads)", med)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2, help="BLAS and torch threads")
    ap.add_argument("--repeats", type=int, default=15)
    main(ap.parse_args().repeats)
