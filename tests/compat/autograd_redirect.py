"""A pytest plugin (`-p tests.compat.autograd_redirect`) that makes `import autograd...`
import `fnad.autograd...`: every module of fnad.autograd is entered in sys.modules under
autograd's name before the tests are collected, so autograd's own test files run unchanged
against fnad. Used by tests/compat/test_autograd_suite.py on a downloaded copy of autograd's
tests (nothing of autograd is in this repository)."""

import importlib
import pkgutil
import sys

import fnad.autograd


def alias_autograd():
    """Enter fnad.autograd and all its submodules in sys.modules as autograd's."""
    sys.modules["autograd"] = fnad.autograd
    for info in pkgutil.walk_packages(fnad.autograd.__path__, "fnad.autograd."):
        module = importlib.import_module(info.name)
        sys.modules["autograd" + info.name[len("fnad.autograd"):]] = module


alias_autograd()
