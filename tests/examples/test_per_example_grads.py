"""Smoke run of examples/per_example_grads.py (a few seconds: a small slice, few steps)."""

import pytest

from .conftest import DATA, needs_fashion


def test_help(example, capsys):
    with pytest.raises(SystemExit) as e:
        example("per_example_grads").main(["--help"])
    assert e.value.code == 0 and "usage: python examples/per_example_grads.py" in \
        capsys.readouterr().out


@needs_fashion
def test_per_example_grads(example, tmp_path):
    r = example("per_example_grads").main(
        ["--data-dir", str(DATA / "fashion-mnist"), "--train-limit", "256", "--test-limit",
         "100", "--batch-size", "32", "--steps", "4", "--check-batch", "8", "--no-progress",
         "--out", str(tmp_path / "peg.json")])
    assert r["per_example_max_abs_diff"] < 1e-5 and r["check_examples"] == 8
    assert 0.0 <= r["value"] <= 1.0 and r["steps"] == 4 and r["history"][-1]["step"] == 4
