"""An opt-in: keep freed array memory in the process instead of handing it back to the OS.

By default fnad leaves glibc's malloc as it is: importing fnad changes nothing process-wide,
so memory the user frees goes back to the OS as glibc decides (a large array is unmapped
when it is freed). A jitted program keeps its own intermediates in buffers it owns and
reuses across calls instead (fnad/_jit/arena.py), released with the program.

`FNAD_MALLOC=keep` (read at import) restores what fnad used to do for the whole process:
raise glibc's mmap and trim thresholds (`mallopt`), so arrays below 256 MiB come from the
heap and up to 1 GiB may lie free at its top before it is trimmed. A training step that
allocates and frees the same large arrays then skips the page faults of fresh mappings on
every call (docs/benchmarks.md, "Heap thresholds", measures it). The cost: memory the
process frees stays mapped to it, for every library in it: dropping a 150 MB vjp tape
leaves the resident size where it was, and 13 freed 100 MiB arrays below a live one keep
1.4 GB resident. It does nothing where the C library is not glibc.
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
    """Raise glibc's mmap and trim thresholds once per process when FNAD_MALLOC=keep; True
    when they were set (False by default: the process keeps glibc's own)."""
    global _done
    if _done is None:
        _done = _set_thresholds()
    return _done


def _set_thresholds():
    if setting("FNAD_MALLOC") != "keep" or not sys.platform.startswith("linux"):
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
