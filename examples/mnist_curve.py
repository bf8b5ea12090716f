"""The learning curve of one MLP run on Fashion-MNIST (the mnist_mlp.py model and flags,
10 epochs by default):
train loss and test accuracy after every epoch, written to docs/mnist_curve.csv and
docs/mnist_curve.png (the plot is skipped, with a message, if matplotlib is absent). The
figure in the README results table is this run's last point.

    python examples/mnist_curve.py
    python examples/mnist_curve.py --steps 20 --csv /tmp/curve.csv    # smoke run
"""

import csv
import sys
from pathlib import Path

from _common import ROOT, write_result
import mnist_mlp


def write_csv(path, history):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["epoch", "step", "train_loss", "test_accuracy", "seconds"])
        for h in history:
            w.writerow([h["epoch"], h["step"], f"{h['train_loss']:.6f}",
                        f"{h['test_accuracy']:.4f}", h["seconds"]])


def plot(path, history, title):
    """Two panels: train loss and test accuracy per epoch. Returns False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the plot (pip install matplotlib)")
        return False
    epochs = [h["epoch"] for h in history]
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.5))
    a.plot(epochs, [h["train_loss"] for h in history], marker="o")
    a.set(xlabel="epoch", ylabel="train loss (cross-entropy)", title="train loss")
    b.plot(epochs, [100 * h["test_accuracy"] for h in history], marker="o", color="C1")
    b.set(xlabel="epoch", ylabel="test accuracy (%)",
          title=f"test accuracy (last {100 * history[-1]['test_accuracy']:.2f}%)")
    for ax in (a, b):
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    add = lambda p: p.add_argument("--csv", type=Path, default=ROOT / "docs" / "mnist_curve.csv",
                                   help="the CSV to write; the PNG goes next to it "
                                        "(default docs/mnist_curve.csv)")
    args, start, history, n_params, metric, goal = mnist_mlp.run("mnist_curve", argv, __doc__,
                                                                 epochs=10, add_args=add)
    write_csv(args.csv, history)
    png = args.csv.with_suffix(".png")
    plotted = plot(png, history, f"{metric}, one run")
    print(f"wrote {args.csv}" + (f" and {png}" if plotted else ""))
    return write_result(args, argv, "mnist_curve", f"{metric}, last point of the curve",
                        history[-1]["test_accuracy"], goal=goal, start=start,
                        parameters=n_params, history=history)


if __name__ == "__main__":
    main()
