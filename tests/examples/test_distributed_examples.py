"""`mpiexec -n 2 python examples/<name>.py --distributed` trains with data parallelism and
gives what one process gives on the same global batches (dropout off, so that the runs are
comparable): tiny configs, a few steps, skipped without MPI or the data sets."""

import json

import numpy as np
import pytest

import fnad

from tests.distributed.helpers import ROOT, needs_mpi, run_mpi

from .conftest import DATA, needs_fashion
from .test_lm_examples import needs_shakespeare

pytestmark = needs_mpi


@needs_shakespeare
def test_train_gpt_distributed(example, tmp_path):
    common = ["--preset", "tiny", "--dropout", "0", "--steps", "4", "--eval-every", "2",
              "--data-dir", str(DATA / "tinyshakespeare"), "--text-limit", "20000",
              "--no-progress", "--plot", "none", "--eval-batches", "2", "--sample-chars", "0"]
    two, ck = tmp_path / "two.json", tmp_path / "two.npz"
    r = run_mpi(ROOT / "examples" / "train_gpt.py", "--distributed", *common, "--out", two,
                "--checkpoint", ck, timeout=180)
    assert r.returncode == 0, r
    assert r.out.count("wrote ") == 1, r  # process 0 writes the result; the others are quiet
    res2 = json.loads(two.read_text())
    res1 = example("train_gpt").main([*common, "--out", str(tmp_path / "one.json")])
    assert res2["value"] == pytest.approx(res1["value"], rel=1e-5)  # float32 rounding
    for h1, h2 in zip(res1["history"], res2["history"]):
        assert h2["train_loss"] == pytest.approx(h1["train_loss"], rel=1e-5)
    st = fnad.load(ck)  # written once, by process 0, readable here by one process
    assert st["step"] == 4 and len(fnad.tree_leaves(st["params"])) > 0


@needs_fashion
@pytest.mark.parametrize("name", ["mnist_mlp", "mnist_cnn"])
def test_mnist_distributed(example, tmp_path, name):
    common = ["--data-dir", str(DATA / "fashion-mnist"), "--train-limit", "256",
              "--test-limit", "100", "--batch-size", "64", "--no-progress", "--steps", "3",
              "--dropout", "0"]
    two = tmp_path / "two.json"
    r = run_mpi(ROOT / "examples" / f"{name}.py", "--distributed", *common, "--out", two,
                timeout=180)
    assert r.returncode == 0, r
    res2 = json.loads(two.read_text())
    res1 = example(name).main([*common, "--out", str(tmp_path / "one.json")])
    np.testing.assert_allclose(res2["history"][0]["train_loss"], res1["history"][0]["train_loss"],
                               rtol=1e-4)
    assert abs(res2["value"] - res1["value"]) <= 0.02  # an argmax may flip on rounding
