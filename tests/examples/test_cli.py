"""The command line every example shares: --help prints usage without running anything,
--seed exists, a missing data set ends the run with one message and no traceback, and only
the full default run (or an explicit output flag) writes under docs/."""

import os
import subprocess
import sys

import pytest

from .conftest import EXAMPLES

SCRIPTS = sorted(p.stem for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))
NO_SEED = {"report"}  # rebuilds README's table from result files: nothing random to seed

FASHION = ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
           "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]
DATA_EXAMPLES = {"mnist_mlp": ("fashion-mnist", FASHION), "mnist_cnn": ("fashion-mnist", FASHION),
                 "mnist_curve": ("fashion-mnist", FASHION),
                 "per_example_grads": ("fashion-mnist", FASHION),
                 "train_gpt": ("tinyshakespeare", ["input.txt"]),
                 "rnn_lm": ("tinyshakespeare", ["input.txt"]),
                 "parity_gpt": ("tinyshakespeare", ["input.txt"])}
# Data examples that run a synthetic problem of the same shape when the files are missing
# (tests/examples/test_lbfgs_logistic.py checks that) instead of exiting with the message.
FALLBACK_EXAMPLES = {"lbfgs_logistic"}


def _env(tmp_path):
    """No data anywhere and no downloads: an empty FNAD_DATA_DIR and cache, FNAD_OFFLINE."""
    empty = tmp_path / "empty"
    empty.mkdir(exist_ok=True)
    root = str(EXAMPLES.parent)
    path = os.pathsep.join([root] + [p for p in os.environ.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    return empty, {**os.environ, "FNAD_DATA_DIR": str(empty), "FNAD_CACHE_DIR": str(empty / "c"),
                   "FNAD_OFFLINE": "1", "PYTHONPATH": path, "MPLBACKEND": "Agg"}


def _run_all(commands, env, timeout=240):
    """Start every command at once (the imports dominate; two cores), then collect
    `{name: (returncode, stdout, stderr)}`."""
    procs = {name: subprocess.Popen([sys.executable, *cmd], cwd=EXAMPLES.parent, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name, cmd in commands.items()}
    out = {}
    for name, p in procs.items():
        try:
            stdout, stderr = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            stdout, stderr = p.communicate()
            stderr += f"\n(timed out after {timeout} s)"
        out[name] = (p.returncode, stdout, stderr)
    return out


@pytest.fixture(scope="module")
def helps(tmp_path_factory):
    _, env = _env(tmp_path_factory.mktemp("help"))
    return _run_all({n: [f"examples/{n}.py", "--help"] for n in SCRIPTS}, env)


@pytest.mark.parametrize("name", SCRIPTS)
def test_help_prints_usage_and_runs_nothing(helps, name):
    rc, out, err = helps[name]
    assert rc == 0, err
    assert out.startswith(f"usage: python examples/{name}.py"), out[:200]
    assert name in NO_SEED or "--seed SEED" in out
    assert "Traceback" not in err


def test_every_data_example_is_checked(helps):
    takes_data_dir = {n for n, (_, out, _) in helps.items() if "--data-dir" in out}
    assert takes_data_dir == set(DATA_EXAMPLES) | FALLBACK_EXAMPLES


@pytest.fixture(scope="module")
def without_data(tmp_path_factory):
    empty, env = _env(tmp_path_factory.mktemp("nodata"))
    runs = {n: [f"examples/{n}.py", "--data-dir", str(empty)] for n in DATA_EXAMPLES}
    runs.update({f"{n} (no --data-dir)": [f"examples/{n}.py", "--steps", "1"]
                 for n in ("mnist_mlp", "train_gpt")})
    return empty, _run_all(runs, env)


@pytest.mark.parametrize("name", list(DATA_EXAMPLES) + ["mnist_mlp (no --data-dir)",
                                                        "train_gpt (no --data-dir)"])
def test_missing_data_is_one_message_naming_every_file(without_data, name):
    empty, results = without_data
    rc, out, err = results[name]
    script = name.split()[0]
    dataset, files = DATA_EXAMPLES[script]
    assert rc == 1, (out, err)
    assert "Traceback" not in err, err
    assert err.startswith(f"{script}: the {dataset} data are missing"), err
    assert "--data-dir" in err and "FNAD_DATA_DIR" in err
    assert all(f in err for f in files), err
    if "no --data-dir" in name:  # searched $FNAD_DATA_DIR/<name> and the cache, no download
        assert str(empty / dataset) in err and "FNAD_OFFLINE is set" in err
    else:
        assert f"Looked in: {empty}\n" in err and "Nothing is downloaded" in err


def test_seed_is_used(example, tmp_path):
    xor = example("xor")
    a = xor.main(["--steps", "3", "--seed", "1", "--out", str(tmp_path / "a.json")])
    b = xor.main(["--steps", "3", "--seed", "2", "--out", str(tmp_path / "b.json")])
    assert a["seed"] == 1 and b["seed"] == 2 and a["value"] != b["value"]
    qs = example("quickstart")
    assert qs.parse(["--seed", "3", "--steps", "5"]) == {"steps": 5, "batch_size": 128,
                                                         "noise": 0.05, "seed": 3}
