"""Installing: pyproject.toml raises no setuptools deprecation (the licence is an SPDX
string), and an editable install finds the real package even from the folder holding a
clone named `fnad` (which Python would otherwise import as an empty namespace package)."""

import os
import pathlib
import shutil
import subprocess
import sys
import warnings
import zipfile

import numpy as np
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
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(os.path.join(ROOT, name), clone / name)
    for package in ("fnad", "fnad_nn", "fnad_optim", "tests", "tools"):
        shutil.copytree(os.path.join(ROOT, package), clone / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return clone


def _python(code, cwd, *sites):
    """Run `code` in a Python that sees the site dirs `sites` (their .pth files processed)
    and NumPy, but not this environment's own site-packages (where fnad may be installed
    editable from another clone)."""
    numpy_dir = os.path.dirname(os.path.dirname(np.__file__))
    prelude = (f"import site, sys; [site.addsitedir(s) for s in {[str(s) for s in sites]!r}]; "
               f"sys.path.append({numpy_dir!r}); ")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-S", "-c", prelude + code], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def _editable_wheel(clone, out):
    """The editable wheel fnad's build backend makes for `clone`, unpacked into `out`."""
    code = ("import sys; sys.path.insert(0, 'tools/pep517'); import fnad_build_backend as b; "
            f"print(b.build_editable({str(out)!r}))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-c", code], cwd=clone, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    wheel = out / r.stdout.strip().splitlines()[-1]
    site = out / "site"
    zipfile.ZipFile(wheel).extractall(site)
    return site


def test_the_editable_install_makes_only_the_packages_importable(tmp_path):
    """The editable wheel puts fnad, fnad_nn and fnad_optim on sys.path, and not the clone's
    `tests` (issue 31: it shadowed a user's own tests/ folder), `tools` or `examples`; a
    user's tests/ folder without __init__.py is then theirs."""
    clone = _clone_named_fnad(tmp_path)
    site = _editable_wheel(clone, tmp_path / "wheel")
    pth = next(site.glob("*.pth")).read_text()
    assert str(clone) not in pth.splitlines(), pth  # no path entry for the whole clone
    user = tmp_path / "user"
    (user / "tests").mkdir(parents=True)
    (user / "tests" / "test_mine.py").write_text("MINE = 1\n")
    code = ("import importlib.util as u; import tests.test_mine as t; print(t.MINE); "
            "print([u.find_spec(n) is None for n in ('tools', 'examples', 'benchmarks')]); "
            "print(u.find_spec('fnad').origin, u.find_spec('fnad_optim').origin)")
    r = _python(code, user, site)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == ["1", "[True, True, True]"], r.stdout
    assert lines[2] == f"{clone / 'fnad' / '__init__.py'} {clone / 'fnad_optim' / '__init__.py'}"
    r = _python("import tests", tmp_path / "wheel", site)
    assert "No module named 'tests'" in r.stderr, (r.stdout, r.stderr)


@pytest.mark.slow
def test_editable_install_wins_over_the_clone_folder(tmp_path):
    """pip install -e . (no deprecation warning), then `import fnad` from the folder that
    holds the clone: it used to import the clone folder (`no attribute 'grad'`)."""
    pytest.importorskip("setuptools", minversion="77")
    clone, prefix = _clone_named_fnad(tmp_path), tmp_path / "prefix"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    install = subprocess.run(  # --ignore-installed: never uninstall this environment's fnad
        [sys.executable, "-m", "pip", "install", "-v", "-e", ".", "--no-deps",
         "--no-build-isolation", "--ignore-installed", "--root-user-action=ignore",
         "--prefix", str(prefix)],
        cwd=clone, env=env, capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    log = install.stdout + install.stderr
    assert "Deprecat" not in log and "SetuptoolsWarning" not in log, log
    site = next(prefix.glob("lib/python*/site-packages"))
    run = _python("import fnad; print(fnad.__file__); fnad.grad", tmp_path, site)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(clone / "fnad" / "__init__.py")
    run = _python("import tests", tmp_path / "prefix", site)
    assert "No module named 'tests'" in run.stderr, (run.stdout, run.stderr)
