"""The learning curve of one MLP run on Fashion-MNIST (the mnist_mlp.py model and flags,
10 epochs by default):
train loss and test accuracy after every epoch, written to docs/mnist_curve.csv and
docs/mnist_curve.png by the full default run (another run writes them only with --csv; the
plot is skipped, with a message, if matplotlib is absent). The figure in the README results
table is this run's last point.

    python examples/mnist_curve.py
    python examples/mnist_curve.py --steps 20 --csv /tmp/curve.csv    # smoke run
    python examples/mnist_curve.py --from-result docs/results/mnist_mlp.json

With --from-result the curve is drawn from the per-epoch history that a finished
mnist_mlp.py (or mnist_cnn.py) run recorded, without training again; a result under
docs/results/ redraws the committed curve, any other needs --csv and --out.
"""

import csv
import json
import sys
import time
from pathlib import Path

from _common import docs_path, parser, results_dir, write_result
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


def add_args(p):
    p.add_output("--csv", type=Path, default=lambda args: docs_path("mnist_curve.csv"),
                 shown="docs/mnist_curve.csv", help="the CSV to write; the PNG goes next to it")
    p.add_argument("--from-result", type=Path, default=None,
                   help="draw the curve of a finished run from its result JSON instead of "
                        "training (its training flags are then ignored)")
    p.full_run_if = full_run


def full_run(args, settings_are_default):
    """A curve redrawn from a committed result (docs/results/*.json, which only full runs
    or an explicit --out write) may replace the committed curve; else the usual rule."""
    if args.from_result is not None:
        return args.from_result.resolve().parent == results_dir().resolve()
    return settings_are_default


def build_parser():
    return mnist_mlp.build_parser("mnist_curve", __doc__, epochs=10, add_args=add_args)


def from_result(argv):
    p = parser("mnist_curve", __doc__)
    add_args(p)
    args, _ = p.parse_known_args(argv)
    run = json.loads(args.from_result.read_text())
    if not run.get("history"):
        raise SystemExit(f"mnist_curve: {args.from_result} has no per-epoch history; pass the "
                         f"result file of mnist_mlp.py or mnist_cnn.py.")
    return args, run


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if any(a == "--from-result" or a.startswith("--from-result=") for a in argv):
        args, run = from_result(argv)
        history, goal = run["history"], run.get("goal")
        metric = run["metric"].removesuffix(", last point of the curve")
        extra = {k: run[k] for k in ("parameters", "cpu_time_s", "load_average", "seed")
                 if k in run}
        extra["source"] = {"result": str(args.from_result), "command": run["command"],
                           "wall_time_s": run["wall_time_s"]}
        start = time.perf_counter() - run["wall_time_s"]   # report the training run's time
    else:
        args, start, history, n_params, metric, goal = mnist_mlp.run(
            "mnist_curve", argv, __doc__, epochs=10, add_args=add_args)
        extra = {"parameters": n_params}
    if args.csv is not None:
        write_csv(args.csv, history)
        png = args.csv.with_suffix(".png")
        plotted = plot(png, history, f"{metric}, one run")
        print(f"wrote {args.csv}" + (f" and {png}" if plotted else ""))
    result = write_result(args, argv, "mnist_curve", f"{metric}, last point of the curve",
                          history[-1]["test_accuracy"], goal=goal, start=start, **extra,
                          history=history)
    return result


if __name__ == "__main__":
    main()
