"""examples/lbfgs_logistic.py on a small slice: fnad_optim.lbfgs reaches SciPy's L-BFGS-B
minimiser (a strictly convex problem, so both must), on the synthetic problem always and on
Fashion-MNIST when its files are there."""

import json

import pytest

from .conftest import DATA, needs_fashion

pytest.importorskip("scipy")

ARGS = ["--train-limit", "300", "--test-limit", "100", "--steps", "40", "--l2", "0.1",
        "--no-progress"]


@pytest.mark.parametrize("data", ["synthetic", pytest.param("fashion", marks=needs_fashion)])
def test_lbfgs_matches_scipy(example, tmp_path, data, capsys):
    out = tmp_path / "r.json"
    extra = (["--synthetic"] if data == "synthetic"  # the files the skip looked for
             else ["--data-dir", str(DATA / "fashion-mnist")])
    r = example("lbfgs_logistic").main(ARGS + extra + ["--out", str(out)])
    assert json.loads(out.read_text()) == r
    assert r["data"] == ("synthetic" if data == "synthetic" else "Fashion-MNIST")
    assert abs(r["value"] - r["scipy_loss"]) <= 1e-9 * r["scipy_loss"]
    assert r["relative_iterate_gap"] < 1e-6
    assert r["test_accuracy"] > 0.6
    assert "scipy L-BFGS-B loss" in capsys.readouterr().out


def test_missing_data_falls_back_to_synthetic(example, tmp_path, capsys):
    r = example("lbfgs_logistic").main(ARGS + ["--data-dir", str(tmp_path), "--steps", "5",
                                               "--out", str(tmp_path / "r.json")])
    assert r["data"] == "synthetic"
    assert "using the synthetic problem" in capsys.readouterr().out
