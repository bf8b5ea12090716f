"""A multilayer perceptron (784-512-512-10, ReLU, dropout) on Fashion-MNIST or MNIST, trained
with AdamW, warmup + cosine decay and (Fashion-MNIST) random horizontal flips.
Goal: >= 89.5% Fashion-MNIST test accuracy (scikit-learn's MLPClassifier reaches 87.7% in
the dataset's own benchmark).

    python examples/mnist_mlp.py                       # Fashion-MNIST, 20 epochs
    python examples/mnist_mlp.py --dataset mnist
    python examples/mnist_mlp.py --steps 20            # a smoke run of a few seconds
"""

import sys
import time

from _common import parser, write_result
import _mnist

GOAL = 0.895


def build_parser(name="mnist_mlp", doc=__doc__, *, epochs=20, add_args=None):
    """The MLP flags (shared with mnist_curve.py, which adds its own with
    `add_args(parser)`)."""
    p = parser(name, doc)
    _mnist.add_args(p, epochs=epochs, lr=1e-3, batch_size=128, dropout=0.2)
    if add_args is not None:
        add_args(p)
    return p


def run(name, argv, doc, *, epochs=20, add_args=None, save=None):
    """Parse the MLP flags, train, print the final figure. `save(args, start, history,
    n_params, metric, goal)` runs after every epoch but the last."""
    args = build_parser(name, doc, epochs=epochs, add_args=add_args).parse_args(argv)
    start = time.perf_counter()
    dataset = _mnist.NAMES[args.dataset]
    metric = f"{dataset} test accuracy (MLP)"
    goal = f">= {GOAL}" if args.dataset == "fashion" else None
    on_epoch = None if save is None else lambda h, n: save(args, start, h, n, metric, goal)
    _, history, n_params = _mnist.train(args, "mlp", on_epoch=on_epoch)
    acc = history[-1]["test_accuracy"]
    print(f"{dataset} test accuracy {acc:.4f}" + (f" (goal {goal})" if goal else ""))
    return args, start, history, n_params, metric, goal


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)

    def save(args, start, history, n_params, metric, goal, complete=False):
        # a long run leaves a result after every epoch (marked incomplete until the end)
        return write_result(args, argv, "mnist_mlp", metric, history[-1]["test_accuracy"],
                            goal=goal, start=start, parameters=n_params, complete=complete,
                            history=history)

    args, start, history, n_params, metric, goal = run("mnist_mlp", argv, __doc__, save=save)
    return save(args, start, history, n_params, metric, goal, complete=True)


if __name__ == "__main__":
    main()
