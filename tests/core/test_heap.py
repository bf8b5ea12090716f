"""Memory the user frees goes back to the OS: importing fnad leaves glibc's malloc alone
(FNAD_MALLOC=system, the default), so the resident size falls back after a vjp's tape is
dropped and after large arrays below a live one are freed. FNAD_MALLOC=keep, the opt-in,
raises glibc's mmap and trim thresholds for the whole process (fnad/_core/heap.py)."""

import ctypes.util
import os
import subprocess
import sys

import pytest

GLIBC = sys.platform.startswith("linux") and "musl" not in (ctypes.util.find_library("c") or "")
pytestmark = pytest.mark.skipif(not GLIBC, reason="mallopt, VmRSS and mallinfo are glibc's")

PRELUDE = """
import ctypes, gc
import numpy as np
import fnad, fnad.numpy as fnp

def rss():
    with open("/proc/self/status") as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith("VmRSS")) * 1024
"""

# 36 float32 arrays of 4 MiB kept by the tape: 150 MB
TAPE = """
x = np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32)
def f(x):
    for _ in range(36):
        x = fnp.tanh(x * 1.01)
    return fnp.sum(x)
f(x); gc.collect()
before = rss()
y, back = fnad.vjp(f, x)
during = rss()
del y, back; gc.collect()
print(before, during, rss())
"""

BELOW_A_LIVE_ONE = """
arrays = [np.ones(100 << 20, np.uint8) for _ in range(13)]
live = np.ones(100 << 20, np.uint8)
during = rss()
del arrays; gc.collect()
print(during, rss())
"""


def _run(code, **env):
    out = subprocess.run([sys.executable, "-c", PRELUDE + code], capture_output=True, text=True,
                         env=dict(os.environ, **env))
    assert out.returncode == 0, out.stderr
    return [int(t) for t in out.stdout.split()]


def test_dropping_a_vjp_tape_gives_its_memory_back():
    before, during, after = _run(TAPE)
    assert during > before + 100e6  # the tape was there
    assert after <= 1.1 * before, (before, during, after)


def test_freed_arrays_below_a_live_one_go_back():
    during, after = _run(BELOW_A_LIVE_ONE)
    assert during > 1.3e9
    assert after < 0.2e9, (during, after)


def test_the_opt_in_keeps_freed_memory_at_its_stated_cost():
    during, after = _run(BELOW_A_LIVE_ONE, FNAD_MALLOC="keep")
    assert after > 1.3e9  # docs/benchmarks.md states this cost


def test_keep_freed_memory_is_off_by_default_and_idempotent():
    code = "from fnad._core import heap; print(int(heap.keep_freed_memory()))"
    assert _run(code) == [0]
    assert _run(code + "; print(int(heap.keep_freed_memory()))", FNAD_MALLOC="keep") == [1, 1]
