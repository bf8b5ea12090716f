"""fnad/_core/heap.py: fnad keeps freed arrays on glibc's heap (raised mmap and trim
thresholds, set once at import), and FNAD_MALLOC=system leaves glibc's defaults alone."""

import ctypes.util
import os
import subprocess
import sys

import pytest

from fnad._core import heap

GLIBC = sys.platform.startswith("linux") and "musl" not in (ctypes.util.find_library("c") or "")


def _in_child(env):
    code = "import fnad._core.heap as h, fnad; print(h.keep_freed_memory())"
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, **env),
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's")
def test_importing_fnad_raises_the_thresholds_once():
    assert heap.keep_freed_memory() is True
    assert heap.keep_freed_memory() is True  # idempotent
    assert _in_child({"FNAD_MALLOC": ""}) == "True"


def test_fnad_malloc_system_keeps_the_defaults():
    assert _in_child({"FNAD_MALLOC": "system"}) == "False"
