"""benchmarks/gpu_check.sh --dry-run passes without a GPU: every stage's code imports and its
tests are collected (with the packages the GPU machine lacks blocked), the GPT step runs on
the simulated device, and the outputs fit what comes back from the GPU machine (8 files at
most, no folder)."""

import os
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_gpu_check_dry_run(tmp_path):
    r = subprocess.run(["bash", "benchmarks/gpu_check.sh", "--dry-run"], cwd=ROOT,
                       env=dict(os.environ, OUT=str(tmp_path)), capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    summary = (tmp_path / "summary.txt").read_text()
    for line in ("collect -m gpu tests: ok", "GPT step on the simulated device: ok",
                 "matmul benchmark (CPU, n = 64): ok", "dry run done"):
        assert line in summary, summary
    out = list(tmp_path.iterdir())
    assert len(out) <= 8 and all(p.is_file() for p in out), out
    assert "the battery holds" in (tmp_path / "pytest_gpu.log").read_text()
