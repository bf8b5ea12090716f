"""What every example shares: common flags, the progress bar, the result file."""

import argparse
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results"


def parser(name, doc):
    """An ArgumentParser with --seed and --out (the result JSON) already added."""
    p = argparse.ArgumentParser(prog=f"python examples/{name}.py", description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--out", type=Path, default=RESULTS / f"{name}.json",
                   help=f"where to write the JSON result (default docs/results/{name}.json)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-jit", action="store_true",
                   help="run the training step eagerly instead of compiled with fnad.jit")
    return p


def train_step(loss_fn, opt, *, jit=True):
    """`step(params, opt_state, *batch) -> (params, opt_state, loss)`: value_and_grad of
    `loss_fn(params, *batch)`, the optimizer update and its application; compiled with
    fnad.jit (traced at the first step, replayed after) unless `jit` is False."""
    import fnad
    import fnad_optim as optim

    def step(params, opt_state, *batch):
        loss, grads = fnad.value_and_grad(loss_fn)(params, *batch)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optim.apply_updates(params, updates), opt_state, loss

    return fnad.jit(step) if jit else step


def add_distributed_flag(p):
    """--distributed: data-parallel training over the processes of an MPI job."""
    p.add_argument("--distributed", action="store_true",
                   help="data parallel over the processes of an MPI job, e.g. `mpiexec -n 2 "
                        "python examples/train_gpt.py --distributed`: each process trains on "
                        "its part of every batch, gradients are averaged (fnad.distributed)")


def start_distributed(args):
    """With --distributed, join the MPI job and leave the printing (and the files) to
    process 0; returns `(process index, process count)`, `(0, 1)` without the flag."""
    if not getattr(args, "distributed", False):
        return 0, 1
    import fnad.distributed as dist
    dist.initialize()
    if dist.process_index() != 0:
        sys.stdout = open(os.devnull, "w")  # for the life of the process
        args.no_progress = True
    return dist.process_index(), dist.process_count()


def is_main(args):
    """False on the processes other than 0 of a --distributed run."""
    if not getattr(args, "distributed", False):
        return True
    import fnad.distributed as dist
    return dist.process_index() == 0


def progress(iterable=None, *, total=None, desc=None, disable=False):
    """A tqdm bar if tqdm is installed (else a silent iterator)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return _Silent(iterable)
    return tqdm(iterable, total=total, desc=desc, disable=disable, dynamic_ncols=True,
                mininterval=0.5, file=sys.stderr)


class _Silent:
    def __init__(self, iterable):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def set_postfix(self, *args, **kwargs):
        pass

    def update(self, n=1):
        pass

    def close(self):
        pass


def machine():
    """A one-line description of this computer (CPU model, cores, Python, NumPy)."""
    import numpy as np
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"{cpu}, {os.cpu_count()} CPU cores, Python {platform.python_version()}, "
            f"NumPy {np.__version__}")


THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")


def command(name, argv):
    """The command line that reproduces this run (from the repository root), with the
    thread-count variables that were set."""
    env = [f"{v}={shlex.quote(os.environ[v])}" for v in THREAD_VARS if os.environ.get(v)]
    return " ".join(env + [f"python examples/{name}.py"] + [shlex.quote(a) for a in argv])


def write_result(args, argv, name, metric, value, *, goal=None, start, **extra):
    """Write the run's JSON result file (read by examples/report.py) and return its dict.

    `metric` names the figure (e.g. "Fashion-MNIST test accuracy"), `value` is it, `goal`
    a short text such as ">= 0.925" (or None)."""
    result = {"example": name, "metric": metric, "value": value, "goal": goal,
              "command": command(name, argv), "wall_time_s": round(time.perf_counter() - start, 1),
              # CPU seconds of all this process's threads, and the 1-minute load average at
              # the end: the wall time of a run on a shared machine needs both to be read
              "cpu_time_s": round(time.process_time(), 1),
              "load_average": round(os.getloadavg()[0], 1), "machine": machine(),
              "date": time.strftime("%Y-%m-%d", time.gmtime()),
              "seed": args.seed, **extra}
    if not is_main(args):  # one file per run: process 0 writes it
        return result
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(args.out.suffix + ".tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    os.replace(tmp, args.out)
    print(f"wrote {args.out}")
    return result
