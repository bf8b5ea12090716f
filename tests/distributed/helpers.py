"""Running a script under `mpiexec -n N` from pytest: with a timeout, the repository on
PYTHONPATH, one BLAS thread per process, and a clean skip where MPI is not installed."""

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JOBS = Path(__file__).resolve().parent / "jobs"


def mpiexec():
    """The `mpiexec` of this Python's environment (where `pip install mpich` puts it, even
    when that environment's bin/ is not on PATH), else the one on PATH, else None."""
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


def mpi_missing():
    """Why `mpiexec` jobs cannot run here, or None."""
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed (pip install mpi4py mpich, or the dev extra)"
    if mpiexec() is None:
        return "no mpiexec (pip install mpich, or the dev extra)"
    return None


needs_mpi = pytest.mark.skipif(mpi_missing() is not None, reason=str(mpi_missing()))


def job_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PMI_", "PMIX_", "OMPI_", "MPI_LOCAL", "HYDRA_"))}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               FNAD_FUSION="numpy")
    env.update(extra)
    return env


class Result:
    def __init__(self, returncode, out, seconds):
        self.returncode = returncode
        self.out = out
        self.seconds = seconds

    def __repr__(self):
        return f"<mpiexec job: exit {self.returncode} after {self.seconds:.1f} s>\n{self.out}"


def run_mpi(script, *args, n=2, timeout=120, env=None):
    """Run `python script args` on `n` processes; returns a Result (exit code, stdout and
    stderr together, wall seconds). A job still running after `timeout` is killed and
    fails the test: a hang is a bug.

    A launch that fails before any process prints (a nonzero exit with no output within
    a second: too soon for Python to import NumPy) is retried, twice at most: CI saw
    MPICH's mpiexec exit 1 after 0.2 s without a word once (not reproduced here), and
    a job that never started says nothing about fnad."""
    for _ in range(2):
        r = _run_once(script, args, n, timeout, env)
        if r.returncode == 0 or r.out.strip() or r.seconds >= 1.0:
            return r
        time.sleep(0.5)
    return _run_once(script, args, n, timeout, env)


def _run_once(script, args, n, timeout, env):
    cmd = [mpiexec(), "-n", str(n), sys.executable, str(script), *map(str, args)]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=ROOT, env=env or job_env(), start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"mpiexec job {script} {args} hung (killed after {timeout} s):\n{out}")
    return Result(proc.returncode, out, time.monotonic() - start)
