"""Quickstart: train an MLP on two interleaved spirals, then checkpoint and reload it.

    python examples/quickstart.py
    python examples/quickstart.py --steps 100 --seed 1     # a shorter run, another seed

Uses fnad (autodiff), fnad_nn (layers, loss) and fnad_optim (AdamW with warmup + cosine
decay, gradient clipping, a NaN/Inf guard). The data are generated here; nothing is
downloaded. About a second on an idle CPU core; on a machine other jobs load, longer (4 s
at a load average of 12 on 2 cores).

Its matrices are small (batches of 128 by 64 units), where a multi-threaded BLAS only makes
its threads wait for each other, and much longer when other jobs hold the cores (33 s
against 4 s with one thread, side by side at that load). So the script asks for one BLAS
thread unless the environment says otherwise (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS,
MKL_NUM_THREADS), before NumPy is imported, when it runs as a script.
"""

import argparse
import os
import sys
import tempfile
import time

if __name__ == "__main__":  # run as a script (not when a test imports it)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")  # small matrices: one BLAS thread (see above)

import numpy as np  # after the thread count is set

import fnad
import fnad.random
import fnad_nn as nn
import fnad_optim as optim


def two_spirals(n_per_class, noise, rng):
    """Points on two interleaved spirals, 1.75 turns each; labels 0 and 1."""
    t = np.sqrt(rng.uniform(0.02, 1.0, size=(2, n_per_class))) * 3.5 * np.pi
    xs, ys = [], []
    for label in (0, 1):
        angle = t[label] + label * np.pi
        r = t[label] / (3.5 * np.pi)
        pts = np.stack([r * np.cos(angle), r * np.sin(angle)], axis=1)
        xs.append(pts + noise * rng.normal(size=pts.shape))
        ys.append(np.full(n_per_class, label))
    x, y = np.concatenate(xs).astype(np.float32), np.concatenate(ys)
    order = rng.permutation(len(y))
    return x[order], y[order]


def model(params, x):
    return nn.mlp(params, x, activation=nn.relu)


def loss_fn(params, x, y):
    return nn.sparse_softmax_cross_entropy(model(params, x), y)


def accuracy(params, x, y):
    return float(np.mean(np.argmax(model(params, x), axis=-1) == y))


STEPS, GOAL = 1000, 0.97


def main(steps=STEPS, batch_size=128, noise=0.05, seed=0):
    """Train, check the checkpoint round trip and return the held-out accuracy; a run of at
    least the default 1000 steps must reach 0.97."""
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    x, y = two_spirals(1500, noise=noise, rng=rng)
    n_test = len(y) // 5
    x_test, y_test, x_train, y_train = x[:n_test], y[:n_test], x[n_test:], y[n_test:]
    print(f"two spirals: {len(y_train)} training points, {n_test} held out")

    params = nn.init_mlp(fnad.random.PRNGKey(seed), [2, 64, 64, 2])
    schedule = optim.warmup_cosine_decay_schedule(
        init_value=0.0, peak_value=1e-2, warmup_steps=min(100, steps // 10), decay_steps=steps,
        end_value=1e-4)
    opt = optim.apply_if_finite(optim.chain(
        optim.clip_by_global_norm(1.0),
        optim.adamw(schedule, weight_decay=1e-4,
                    mask=lambda p: fnad.tree_map(lambda w: w.ndim > 1, p)),  # no decay on biases
    ))
    opt_state = opt.init(params)
    loss_and_grad = fnad.value_and_grad(loss_fn)

    for step in range(1, steps + 1):
        idx = rng.integers(0, len(y_train), size=batch_size)
        loss, grads = loss_and_grad(params, x_train[idx], y_train[idx])
        updates, opt_state = opt.update(grads, opt_state, params)
        params = optim.apply_updates(params, updates)
        if step % 250 == 0 or step == 1:
            print(f"step {step:5d}  loss {float(loss):.4f}  "
                  f"grad norm {float(optim.global_norm(grads)):7.3f}  "
                  f"lr {float(schedule(step - 1)):.2e}  "
                  f"train acc {accuracy(params, x_train, y_train):.3f}")

    acc = accuracy(params, x_test, y_test)
    print(f"held-out accuracy: {acc:.4f}  (skipped non-finite steps: "
          f"{int(opt_state.total_notfinite)})")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "spirals.npz")
        fnad.save(path, {"params": params, "opt_state": opt_state, "step": steps})
        ckpt = fnad.load(path, like={"params": params, "opt_state": opt_state, "step": 0})
    same = all(np.array_equal(a, b) for a, b in zip(fnad.tree_leaves(ckpt["params"]),
                                                    fnad.tree_leaves(params)))
    reloaded_acc = accuracy(ckpt["params"], x_test, y_test)
    print(f"checkpoint reloaded: params identical {same}, held-out accuracy {reloaded_acc:.4f}")

    assert same and reloaded_acc == acc, "checkpoint round trip changed the model"
    if steps >= STEPS:
        assert acc >= GOAL, f"held-out accuracy {acc:.4f} is below {GOAL}"
    else:
        print(f"(a run of {steps} steps: the {GOAL} goal is for {STEPS} or more)")
    print(f"done in {time.perf_counter() - start:.1f} s")
    return acc


def parse(argv):
    p = argparse.ArgumentParser(prog="python examples/quickstart.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=STEPS, help=f"training steps (default {STEPS})")
    p.add_argument("--batch-size", type=int, default=128, help="batch size (default 128)")
    p.add_argument("--noise", type=float, default=0.05,
                   help="standard deviation of the noise added to the points (default 0.05)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    return vars(p.parse_args(argv))


if __name__ == "__main__":
    main(**parse(sys.argv[1:]))
