"""fnad's build backend: setuptools' (`setuptools.build_meta`), except for editable installs.

`pip install -e .` with setuptools puts the clone's root on sys.path (a path entry in a .pth
file; pyproject.toml says why a path entry and not an import hook). That made everything at
the root importable from anywhere, so the clone's `tests` package shadowed a user's own
`tests/` folder (a namespace package, which a regular package outranks). Here the editable
wheel's .pth runs `__editable___fnad_path.install()` instead, which adds one path entry whose
finder (a path hook) sees only fnad, fnad_nn and fnad_optim in the clone: nothing else of it
is importable, and a path entry still outranks a folder named `fnad` in the working
directory, as before. Regular wheels and sdists are setuptools' own.
"""

import base64
import hashlib
import zipfile
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 - every other hook as setuptools has it

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("fnad", "fnad_nn", "fnad_optim")
MODULE = "__editable___fnad_path"

FINDER = '''"""fnad's editable install: the packages {names} of the clone at {root}, and nothing
else of it, on sys.path (written by tools/pep517/fnad_build_backend.py)."""

import sys
from importlib.machinery import (BYTECODE_SUFFIXES, EXTENSION_SUFFIXES, SOURCE_SUFFIXES,
                                 ExtensionFileLoader, FileFinder, SourceFileLoader,
                                 SourcelessFileLoader)

ROOT = {root!r}
NAMES = {names!r}
ENTRY = ROOT + "/<fnad packages only>"  # a sys.path entry only this module's hook claims


class PackagesOnly(FileFinder):
    def find_spec(self, fullname, target=None):
        return super().find_spec(fullname, target) if fullname in NAMES else None


def hook(path):
    if path != ENTRY:
        raise ImportError(path)
    return PackagesOnly(ROOT, (ExtensionFileLoader, EXTENSION_SUFFIXES),
                        (SourceFileLoader, SOURCE_SUFFIXES),
                        (SourcelessFileLoader, BYTECODE_SUFFIXES))


def install():
    if hook not in sys.path_hooks:
        sys.path_hooks.insert(0, hook)
    if ENTRY not in sys.path:
        sys.path.append(ENTRY)
'''


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _rewrite(wheel):
    """Replace the editable wheel's path-entry .pth by the finder above (RECORD updated)."""
    with zipfile.ZipFile(wheel) as z:
        entries = [(info, z.read(info)) for info in z.infolist()]
    pth = [i.filename for i, _ in entries if i.filename.endswith(".pth") and "/" not in i.filename]
    if len(pth) != 1:
        return  # not the layout this backend knows: leave setuptools' wheel as it is
    new = {pth[0]: f"import {MODULE}; {MODULE}.install()\n".encode(),
           f"{MODULE}.py": FINDER.format(root=str(ROOT), names=PACKAGES).encode()}
    record = next(i.filename for i, _ in entries if i.filename.endswith(".dist-info/RECORD"))
    kept = [(i, d) for i, d in entries if i.filename not in new and i.filename != record]
    lines = [_record_line(i.filename, d) for i, d in kept]
    lines += [_record_line(n, d) for n, d in new.items()] + [f"{record},,"]
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for info, data in kept:
            z.writestr(info, data)
        for name, data in new.items():
            z.writestr(name, data)
        z.writestr(record, "\n".join(lines) + "\n")


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    _rewrite(Path(wheel_directory) / name)
    return name
