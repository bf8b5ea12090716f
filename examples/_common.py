"""What every example shares: common flags, where results go (docs/ only for the full default
run), the missing-data message, the progress bar, the result file."""

import argparse
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"   # where the full default run of an example leaves its result files

# Flags that change where data are read from, where checkpoints go or how progress is shown,
# not what a run computes: a run that differs from the defaults only in these (and in its
# output flags) is still the full default run.
NEUTRAL = ("data_dir", "no_progress", "checkpoint", "checkpoint_every", "resume")


def docs_path(*parts):
    """A path under docs/ (read when called, so tests can point DOCS elsewhere)."""
    return DOCS.joinpath(*parts)


def results_dir():
    return docs_path("results")


class ExampleParser(argparse.ArgumentParser):
    """An ArgumentParser whose output flags (`add_output`) default to files under docs/ only
    for the full default run: every flag at its default, except the NEUTRAL ones, and no
    output flag given. A quick or otherwise changed run writes nothing there unless its
    output flags say where, so that the committed results always come from the runs their
    commands describe; a run given one output flag (`--dot PATH`) writes only there.

    Parsing also sets `args.example` (the script's name) and `args.full_run`.
    """

    def __init__(self, name, doc):
        super().__init__(prog=f"python examples/{name}.py", description=doc,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
        self.example = name
        self.outputs = {}        # dest -> default path, or a function of the parsed args
        self.full_run_if = None  # optional override: f(args, settings_are_default) -> bool
        self.neutral = set(NEUTRAL)  # an example may add its own (e.g. parity_gpt's --model)

    def add_output(self, *flags, default, shown, help, **kwargs):
        """An output flag: `default` (a path, or a function of the parsed args giving one)
        applies to the full default run only; `shown` describes it in --help."""
        action = self.add_argument(*flags, default=None, help=f"{help} (default: {shown} for "
                                   "the full default run, else not written)", **kwargs)
        self.outputs[action.dest] = default
        return action

    def changed(self, args):
        """The settings of `args` that differ from the defaults, as command-line text."""
        defaults = vars(super().parse_known_args([])[0])
        flags = {a.dest: a.option_strings[-1] for a in self._actions if a.option_strings}
        out = []
        for dest, default in defaults.items():
            value = getattr(args, dest)
            if dest in self.neutral or dest in self.outputs or value == default:
                continue
            out.append(flags[dest] if isinstance(value, bool) else f"{flags[dest]} {value}")
        return out

    def parse_known_args(self, args=None, namespace=None):
        args, extras = super().parse_known_args(args, namespace)
        changed = self.changed(args)
        full = not changed
        if self.full_run_if is not None:
            full = self.full_run_if(args, full)
        args.example, args.full_run = self.example, full
        # an output flag given says where this run writes: the others then write nothing
        told = [a.option_strings[-1] for a in self._actions
                if a.dest in self.outputs and getattr(args, a.dest) is not None]
        for dest, default in self.outputs.items():
            if getattr(args, dest) is None and full and not told:
                setattr(args, dest, default(args) if callable(default) else default)
        unset = [a.option_strings[-1] for a in self._actions
                 if a.dest in self.outputs and getattr(args, a.dest) is None]
        if unset:
            why = (f"not the full default run ({', '.join(changed)})" if not full else
                   f"{' and '.join(told)} given")
            print(f"{self.example}: {why}, so nothing is written under docs/; give "
                  f"{' and '.join(unset)} to keep this run's results.")
        return args, extras


def parser(name, doc, *, result=True):
    """An ExampleParser with --seed and, for an example that writes a result (`result`),
    --out (the result JSON), --no-progress and --no-jit."""
    p = ExampleParser(name, doc)
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    if result:
        p.add_output("--out", type=Path, default=lambda args: results_dir() / f"{name}.json",
                     shown=f"docs/results/{name}.json", help="where to write the JSON result")
        p.add_argument("--no-progress", action="store_true", help="no progress bar")
        p.add_argument("--no-jit", action="store_true",
                       help="run the training step eagerly instead of compiled with fnad.jit")
    return p


def require_data(args, name, files=None):
    """The paths of data set `name`'s files (all of them by default), found under
    `args.data_dir` (or $FNAD_DATA_DIR, the cache, a download). When some are missing,
    exit with one message (no traceback) that names every missing file, --data-dir and
    FNAD_DATA_DIR."""
    from fnad_nn import data

    files = list(data.SOURCES[name]) if files is None else list(files)
    try:
        return data.resolve_files(name, files, path=args.data_dir)
    except data.MissingDataError as e:
        raise SystemExit(missing_data_message(args.example, e, args.data_dir)) from None


def missing_data_message(example, error, data_dir):
    from fnad_nn import data

    lines = [f"{example}: the {error.name} data are missing; not found:"]
    for f in error.missing:
        bases = data.SOURCES.get(error.name, {}).get(f, ((),))[0]
        lines.append(f"  {f}" + (f"  (published at {bases[0]}{f})" if bases else ""))
    lines.append("Looked in: " + ", ".join(str(d) for d in error.dirs))
    if data_dir is not None:
        lines.append("Nothing is downloaded when --data-dir is given.")
    else:
        lines.append(error.why)
    lines.append(f"Pass --data-dir DIR with a folder that holds these files (gzip-compressed "
                 f"or not), or set FNAD_DATA_DIR to a folder whose {error.name}/ subfolder "
                 "holds them; without either, missing files are downloaded into "
                 f"{data.cache_dir() / error.name} unless FNAD_OFFLINE is set.")
    return "\n".join(lines)


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
    """Write the run's JSON result file (read by examples/report.py) to `args.out`, if set,
    and return its dict.

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
    if args.out is None or not is_main(args):  # quick run without --out; or not process 0
        return result
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(args.out.suffix + ".tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    os.replace(tmp, args.out)
    print(f"wrote {args.out}")
    return result
