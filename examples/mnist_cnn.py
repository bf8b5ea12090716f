"""A small CNN on Fashion-MNIST (or MNIST): two 3x3 conv layers (32 and 64 channels), each
followed by ReLU and 2x2 max pooling, then dropout, a 128-unit hidden layer and the 10-way
classifier (about 420K parameters). AdamW with warmup + cosine decay, random horizontal
flips. Goal: >= 92.5% Fashion-MNIST test accuracy (the "2 Conv <100K parameters" row of the
dataset's benchmark, 0.925) in under 30 minutes on a 2-core CPU.

    python examples/mnist_cnn.py                 # the full run (12 epochs)
    python examples/mnist_cnn.py --steps 20      # a smoke run of a few seconds
"""

import sys
import time

from _common import parser, write_result
import _mnist

GOAL = 0.925


def build_parser():
    p = parser("mnist_cnn", __doc__)
    _mnist.add_args(p, epochs=12, lr=2e-3, batch_size=128, dropout=0.3)
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    start = time.perf_counter()
    name = _mnist.NAMES[args.dataset]
    goal = f">= {GOAL}" if args.dataset == "fashion" else None

    def save(history, n_params, complete):
        return write_result(args, argv, "mnist_cnn", f"{name} test accuracy (CNN)",
                            history[-1]["test_accuracy"], goal=goal, start=start,
                            parameters=n_params, complete=complete, history=history)

    # a long run leaves a result after every epoch (marked incomplete until the end)
    _, history, n_params = _mnist.train(args, "cnn", on_epoch=lambda h, n: save(h, n, False))
    print(f"{name} test accuracy {history[-1]['test_accuracy']:.4f}"
          + (f" (goal {goal})" if goal else ""))
    return save(history, n_params, True)


if __name__ == "__main__":
    main()
