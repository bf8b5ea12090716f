"""XOR with a 2-4-4-1 MLP (tanh hidden layers, one logit), full-batch Adam on the four
points, binary cross-entropy. Goal: loss below 1e-3 and all four points right.

    python examples/xor.py
    python examples/xor.py --steps 50       # a smoke run
"""

import sys
import time

import numpy as np

import fnad
import fnad.random as random
import fnad_nn as nn
import fnad_optim as optim

from _common import parser, progress, write_result

GOAL = 1e-3
X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], np.float64)
Y = np.array([0, 1, 1, 0], np.float64)


def model(params, x):
    return nn.mlp(params, x, activation=nn.tanh)[..., 0]


def loss_fn(params, x, y):
    return nn.binary_cross_entropy_with_logits(model(params, x), y)


def build_parser():
    p = parser("xor", __doc__)
    p.add_argument("--steps", type=int, default=2000, help="Adam steps (default 2000)")
    p.add_argument("--lr", type=float, default=0.1, help="learning rate (default 0.1)")
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    start = time.perf_counter()
    params = nn.init_mlp(random.PRNGKey(args.seed), [2, 4, 4, 1], dtype=np.float64)
    opt = optim.adam(args.lr)
    opt_state = opt.init(params)
    loss_and_grad = fnad.value_and_grad(loss_fn)
    bar = progress(range(1, args.steps + 1), desc="xor", disable=args.no_progress)
    t0 = time.perf_counter()
    for step in bar:
        loss, grads = loss_and_grad(params, X, Y)
        updates, opt_state = opt.update(grads, opt_state, params)
        params = optim.apply_updates(params, updates)
        if step % 20 == 0:
            bar.set_postfix(loss=f"{float(loss):.2e}",
                            steps_per_s=f"{step / (time.perf_counter() - t0):.0f}")
    bar.close()
    final = float(loss_fn(params, X, Y))
    pred = (model(params, X) > 0).astype(int)
    print(f"final loss {final:.3e} (goal < {GOAL:g}); predictions {pred.tolist()} for inputs "
          f"{X.astype(int).tolist()}, targets {Y.astype(int).tolist()}")
    return write_result(args, argv, "xor", "XOR 2-4-4-1 MLP final loss (BCE)", final,
                        goal=f"< {GOAL:g}", start=start, steps=args.steps,
                        predictions=pred.tolist(), all_correct=bool((pred == Y).all()))


if __name__ == "__main__":
    main()
