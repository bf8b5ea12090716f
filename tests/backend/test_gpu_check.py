"""benchmarks/gpu_check.sh --dry-run passes without a GPU: every stage's code imports and its
tests are collected (with the packages the GPU machine lacks blocked), the GPT step runs on
the simulated device, and the outputs fit what comes back from the GPU machine (8 files at
most, no folder)."""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_gpu_check_dry_run(tmp_path):
    # the script runs this interpreter ($PYTHON), never a `python` found on PATH (issue 31:
    # it failed where the virtual environment was not activated); a stub there would fail
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "python").write_text("#!/bin/sh\necho 'not the tests interpreter' >&2\nexit 7\n")
    (stub / "python").chmod(0o755)
    out = tmp_path / "out"
    env = dict(os.environ, OUT=str(out), PYTHON=sys.executable,
               PATH=f"{stub}{os.pathsep}{os.environ.get('PATH', '')}")
    r = subprocess.run(["bash", "benchmarks/gpu_check.sh", "--dry-run"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    summary = (out / "summary.txt").read_text()
    for line in ("collect -m gpu tests: ok", "GPT step on the simulated device: ok",
                 "matmul benchmark (CPU, n = 64): ok", "dry run done"):
        assert line in summary, summary
    assert "not the tests interpreter" not in r.stdout + r.stderr + summary
    files = list(out.iterdir())
    assert len(files) <= 8 and all(p.is_file() for p in files), files
    assert "the battery holds" in (out / "pytest_gpu.log").read_text()
