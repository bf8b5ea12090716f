"""The project's main job, examples/quickstart.py, trains to >= 97% held-out accuracy."""

import importlib.util
import pathlib

PATH = pathlib.Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"


def test_quickstart_runs(capsys):
    spec = importlib.util.spec_from_file_location("quickstart", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    acc = module.main()
    out = capsys.readouterr().out
    assert acc >= 0.97
    assert "held-out accuracy" in out and "checkpoint reloaded: params identical True" in out


def test_quickstart_asks_for_one_blas_thread_unless_told():
    """Its small matrices run fastest on one BLAS thread; with two on a loaded 2-core machine
    it took 1.2-21 s (issue 31). Run as a script, it sets the thread variables it finds
    unset before NumPy loads, and keeps the ones the environment gives."""
    import os
    import subprocess
    import sys

    code = ("import os, runpy, sys; sys.argv = ['quickstart.py', '--steps', '3']; "
            f"runpy.run_path({str(PATH)!r}, run_name='__main__'); "
            "print([os.environ.get(v) for v in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS')])")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONPATH"] = str(PATH.parents[1]) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "['1', '1']", r.stdout
    r = subprocess.run([sys.executable, "-c", code], env=dict(env, OPENBLAS_NUM_THREADS="2"),
                       capture_output=True, text=True, timeout=300)
    assert r.stdout.splitlines()[-1] == "['2', '1']", (r.stdout, r.stderr)
