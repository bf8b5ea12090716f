"""Installing: pyproject.toml raises no setuptools deprecation (the licence is an SPDX
string), and an editable install finds the real package even from the folder holding a
clone named `fnad` (which Python would otherwise import as an empty namespace package)."""

import os
import pathlib
import shutil
import subprocess
import sys
import warnings

import pytest

ROOT = str(pathlib.Path(__file__).resolve().parents[2])


def test_pyproject_applies_without_setuptools_warnings():
    setuptools = pytest.importorskip("setuptools")
    if tuple(int(p) for p in setuptools.__version__.split(".")[:1]) < (77,):
        pytest.skip(f"setuptools {setuptools.__version__} predates SPDX licence strings")
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the table form warns "project.license ... deprecated"
        dist = apply_configuration(Distribution(), os.path.join(ROOT, "pyproject.toml"))
    assert dist.metadata.license_expression == "MIT"


def _clone_named_fnad(tmp_path):
    """A copy of what `pip install -e .` reads, in tmp_path/fnad (the clone's name)."""
    clone = tmp_path / "fnad"
    clone.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(ROOT, name), clone / name)
    for package in ("fnad", "fnad_nn", "fnad_optim"):
        shutil.copytree(os.path.join(ROOT, package), clone / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return clone


@pytest.mark.slow
def test_editable_install_wins_over_the_clone_folder(tmp_path):
    """pip install -e . (no deprecation warning), then `import fnad` from the folder that
    holds the clone: it used to import the clone folder (`no attribute 'grad'`)."""
    pytest.importorskip("setuptools", minversion="77")
    clone, prefix = _clone_named_fnad(tmp_path), tmp_path / "prefix"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-v", "-e", ".", "--no-deps",
         "--no-build-isolation", "--root-user-action=ignore", "--prefix", str(prefix)],
        cwd=clone, env=env, capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    log = install.stdout + install.stderr
    assert "Deprecat" not in log and "SetuptoolsWarning" not in log, log
    site = next(prefix.glob("lib/python*/site-packages"))
    check = ("import site; site.addsitedir(%r); import fnad; "
             "print(fnad.__file__); fnad.grad" % str(site))
    run = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(clone / "fnad" / "__init__.py")
