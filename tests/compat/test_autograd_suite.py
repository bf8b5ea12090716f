"""autograd's own test suite against fnad.autograd (the `compat` marker: run it with
`python -m pytest -m compat tests/compat`).

The released source distribution of autograd is obtained with `pip download` (or taken from
$FNAD_AUTOGRAD_SDIST, a local autograd-1.9.1.tar.gz), unpacked in a temporary directory, and
its tests/ run in a child pytest with tests/compat/autograd_redirect.py as a plugin, which
makes `import autograd` import fnad.autograd. Nothing of autograd is in this repository.
The test skips, saying why, when the download is not possible. The tests in KNOWN are
deselected; each is listed with its reason in docs/migrating-from-autograd.md."""

import glob
import os
import pathlib
import re
import subprocess
import sys
import tarfile

import pytest

from fnad.extend import setting

pytestmark = pytest.mark.compat

ROOT = pathlib.Path(__file__).resolve().parents[2]
VERSION = "1.9.1"
# autograd tests fnad does not pass, by design (docs/migrating-from-autograd.md says why)
KNOWN = {
    "tests/test_fft.py::test_rfftn_odd_not_implemented":
        "autograd raises NotImplementedError for rfftn gradients of odd-length last axes; "
        "fnad differentiates them",
    "tests/test_misc.py::test_const_graph":
        "const_graph runs the function each call (autograd replays a cached graph and skips "
        "the Python around it); fnad's way to that speed is fnad.jit",
    "tests/test_misc.py::test_const_graph_args":
        "the same: the test counts the calls of primitives under const_graph",
}


def _sdist(tmp):
    local = setting("FNAD_AUTOGRAD_SDIST")
    if local:
        if not pathlib.Path(local).is_file():
            pytest.fail(f"FNAD_AUTOGRAD_SDIST={local} is not a file")
        return pathlib.Path(local)
    cmd = [sys.executable, "-m", "pip", "download", f"autograd=={VERSION}", "--no-deps",
           "--no-binary", ":all:", "--disable-pip-version-check", "-q", "-d", str(tmp)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.skip("pip download of autograd's sdist timed out (offline?); set "
                    "FNAD_AUTOGRAD_SDIST to a local autograd-1.9.1.tar.gz")
    found = glob.glob(str(tmp / f"autograd-{VERSION}.tar.gz"))
    if out.returncode != 0 or not found:
        pytest.skip(f"pip download autograd=={VERSION} failed ({out.stderr.strip()[-300:]}); "
                    "set FNAD_AUTOGRAD_SDIST to a local autograd-1.9.1.tar.gz")
    return pathlib.Path(found[0])


def test_autograds_suite_passes_on_fnad_autograd(tmp_path):
    sdist = _sdist(tmp_path)
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path, filter="data")
    src = tmp_path / f"autograd-{VERSION}"
    (src / "autograd").rename(src / "autograd_original_unused")  # only fnad.autograd imports
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    cmd = [sys.executable, "-m", "pytest", "tests", "-q", "-p", "tests.compat.autograd_redirect",
           "-p", "no:cacheprovider", "-o", "addopts=", "-o", "required_plugins=",
           "-W", "ignore::DeprecationWarning"]
    for test in KNOWN:
        cmd += ["--deselect", test]
    out = subprocess.run(cmd, cwd=src, env=env, capture_output=True, text=True, timeout=1800)
    tail = out.stdout[-4000:] + out.stderr[-2000:]
    assert out.returncode == 0, tail
    passed = int(re.search(r"(\d+) passed", out.stdout).group(1))
    assert passed >= 600, tail  # 615 on autograd 1.9.1 (13 skipped by autograd itself)
