"""Full-batch L-BFGS: multinomial logistic regression on Fashion-MNIST features (14x14
average-pooled pixels, centred, one scale), L2-regularised, with fnad_optim.lbfgs (zoom line
search, memory 10), against SciPy's L-BFGS-B on the same objective as a check of the
iterates and the final loss. The problem is strictly convex: both must reach the same
minimiser. Without the Fashion-MNIST files it runs on a synthetic problem of the same shape.

    python examples/lbfgs_logistic.py
    python examples/lbfgs_logistic.py --train-limit 500 --steps 30     # a smoke run
"""

import sys
import time

import numpy as np

import fnad
import fnad.numpy as fnp
import fnad_optim as optim

from _common import parser, write_result

CLASSES = 10


def build_parser():
    p = parser("lbfgs_logistic", __doc__)
    p.add_argument("--data-dir", default=None,
                   help="directory with the Fashion-MNIST IDX files (default: "
                        "$FNAD_DATA_DIR/fashion-mnist, then the cache; nothing is downloaded)")
    p.add_argument("--steps", type=int, default=200, help="L-BFGS iterations (default 200)")
    p.add_argument("--l2", type=float, default=1e-2, help="L2 coefficient (default 1e-2)")
    p.add_argument("--train-limit", type=int, default=10000,
                   help="training images used (default 10000)")
    p.add_argument("--test-limit", type=int, default=2000, help="test images (default 2000)")
    p.add_argument("--synthetic", action="store_true", help="use the synthetic problem")
    return p


def features(images):
    """(N, 28, 28) uint8 -> (N, 196) float64: 2x2 average pooling."""
    x = images.astype(np.float64).reshape(len(images), 14, 2, 14, 2).mean(axis=(2, 4)) / 255
    return x.reshape(len(images), -1)


def synthetic(n, seed):
    """A problem of the same shape: ten Gaussian classes in 196 dimensions."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(CLASSES, 196))
    y = rng.integers(0, CLASSES, n)
    return centres[y] * 0.3 + rng.normal(size=(n, 196)), y


def load(args):
    """Standardised train and test features and labels, and where they came from."""
    n_train, n_test = args.train_limit, args.test_limit
    if not args.synthetic:
        from fnad_nn import data
        try:
            xtr, ytr = data.load_mnist("fashion", "train", path=args.data_dir, download=False,
                                       limit=n_train)
            xte, yte = data.load_mnist("fashion", "test", path=args.data_dir, download=False,
                                       limit=n_test)
            xtr, xte, source = features(xtr), features(xte), "Fashion-MNIST"
        except data.MissingDataError as e:
            print(f"lbfgs_logistic: no Fashion-MNIST files ({e.name}); using the synthetic "
                  "problem instead (give --data-dir or FNAD_DATA_DIR for the real one).")
            args.synthetic = True
    if args.synthetic:
        x, y = synthetic(n_train + n_test, args.seed)
        xtr, ytr, xte, yte, source = x[:n_train], y[:n_train], x[n_train:], y[n_train:], \
            "synthetic"
    mean, std = xtr.mean(0), xtr.std()  # one scale: near-constant pixels stay small
    return (xtr - mean) / std, ytr.astype(np.int64), (xte - mean) / std, \
        yte.astype(np.int64), source


def make_loss(x, y, l2):
    onehot = np.eye(CLASSES)[y]

    def loss(params):
        logits = x @ params["w"] + params["b"]
        top = fnp.max(logits, axis=1, keepdims=True)
        lse = fnp.log(fnp.sum(fnp.exp(logits - top), axis=1)) + top[:, 0]
        nll = fnp.mean(lse - fnp.sum(onehot * logits, axis=1))
        return nll + 0.5 * l2 * fnp.sum(params["w"] ** 2)

    return loss


def run_fnad(loss, params, steps, jit):
    """L-BFGS iterates (params after each step) and losses."""
    opt = optim.lbfgs()
    value_and_grad = optim.value_and_grad_from_state(loss)

    def step(params, state):
        value, grad = value_and_grad(params, state=state)
        updates, state = opt.update(grad, state, params, value=value, grad=grad,
                                    value_fn=loss)
        return optim.apply_updates(params, updates), state

    step = fnad.jit(step) if jit else step
    state, path = opt.init(params), []
    for _ in range(steps):
        params, state = step(params, state)
        path.append(params)
    return path


def run_scipy(loss, params, steps):
    from scipy.optimize import minimize

    d = params["w"].shape[0]
    unflat = lambda v: {"w": v[:d * CLASSES].reshape(d, CLASSES), "b": v[d * CLASSES:]}
    value_and_grad = fnad.jit(fnad.value_and_grad(lambda v: loss(unflat(v))))

    def fun(v):
        value, grad = value_and_grad(v)
        return float(value), np.asarray(grad, np.float64)

    path = []
    x0 = np.concatenate([params["w"].ravel(), params["b"]])
    minimize(fun, x0, jac=True, method="L-BFGS-B",
             callback=lambda v: path.append(unflat(np.array(v))),
             options={"maxcor": 10, "maxiter": steps, "gtol": 0.0, "ftol": 0.0})
    return path


def accuracy(params, x, y):
    return float(np.mean(np.argmax(x @ params["w"] + params["b"], axis=1) == y))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    start = time.perf_counter()
    xtr, ytr, xte, yte, source = load(args)
    loss = make_loss(xtr, ytr, args.l2)
    params = {"w": np.zeros((xtr.shape[1], CLASSES)), "b": np.zeros(CLASSES)}
    t0 = time.perf_counter()
    ours = run_fnad(loss, params, args.steps, not args.no_jit)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = run_scipy(loss, params, args.steps)
    t_ref = time.perf_counter() - t0
    flat = lambda p: np.concatenate([np.ravel(p["w"]), np.ravel(p["b"])])
    print(f"{source}: {len(ytr)} training examples, {xtr.shape[1]} features, "
          f"{CLASSES} classes, L2 {args.l2:g}")
    print(f"{'iter':>5} {'fnad lbfgs loss':>18} {'scipy L-BFGS-B loss':>20} {'|x - x_scipy|':>14}")
    n = min(len(ours), len(ref))
    for k in sorted({0, 1, 2, 4, 9, 19, 49, n - 1} & set(range(n))):
        gap = np.linalg.norm(flat(ours[k]) - flat(ref[k]))
        print(f"{k + 1:>5} {float(loss(ours[k])):>18.12f} {float(loss(ref[k])):>20.12f} "
              f"{gap:>14.3e}")
    final, final_ref = float(loss(ours[-1])), float(loss(ref[-1]))
    gap = float(np.linalg.norm(flat(ours[-1]) - flat(ref[-1])) / np.linalg.norm(flat(ref[-1])))
    acc = accuracy(ours[-1], xte, yte)
    print(f"final loss: fnad {final:.12f} ({len(ours)} iterations, {t_ours:.1f} s), "
          f"scipy {final_ref:.12f} ({len(ref)} iterations, {t_ref:.1f} s); relative "
          f"distance of the final iterates {gap:.2e}; test accuracy {acc:.4f}")
    return write_result(args, argv, "lbfgs_logistic",
                        f"{source} logistic regression final loss (fnad_optim.lbfgs)", final,
                        goal="equal to SciPy L-BFGS-B's", start=start, steps=args.steps,
                        scipy_loss=final_ref, relative_iterate_gap=gap, test_accuracy=acc,
                        data=source, seconds_fnad=round(t_ours, 2),
                        seconds_scipy=round(t_ref, 2))


if __name__ == "__main__":
    main()
