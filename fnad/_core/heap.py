"""Keep freed array memory in the process instead of handing it back to the OS each time.

A training step allocates and frees the same large arrays (activations, gradients) on every
call. glibc's malloc serves each allocation above its mmap threshold with a fresh `mmap` and
returns it with `munmap` when it is freed, and trims the top of its heap when more than a
threshold lies free there, so every step pays a page fault per 4 KiB of every large array
it makes. Measured on the jitted GPT step of benchmarks/steps.py (2 cores, three interleaved
pairs of `FNAD_MALLOC=system python benchmarks/step_profile.py` and the default): 152-186 ms
per step with glibc's defaults, 110-143 ms with large arrays kept on the heap (its matmuls
88-114 ms against 75-94 ms).

`keep_freed_memory()` raises both thresholds (`mallopt`); fnad calls it once when it is
imported. The cost: memory freed by the process stays mapped to it (up to `TRIM_THRESHOLD`
bytes at the heap's top), as with PyTorch's or JAX's own allocators. It does nothing where the C
library is not glibc, and `FNAD_MALLOC=system` turns it off.
"""

import ctypes
import ctypes.util
import sys

from .settings import setting

__all__ = ["keep_freed_memory", "MMAP_THRESHOLD", "TRIM_THRESHOLD"]

_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 1 << 28  # arrays below 256 MiB come from the heap
TRIM_THRESHOLD = 1 << 30  # up to 1 GiB may lie free at the heap's top before it is trimmed
_done = None


def keep_freed_memory():
    """Raise glibc's mmap and trim thresholds once per process; True when they were set."""
    global _done
    if _done is None:
        _done = _set_thresholds()
    return _done


def _set_thresholds():
    if setting("FNAD_MALLOC") == "system" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and other C libraries have no mallopt
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # glibc before 2.35 refuses an mmap threshold above 32 MiB: take the largest it allows
    mmap_ok = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) or mallopt(_M_MMAP_THRESHOLD, 1 << 25)
    return bool(mmap_ok and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
