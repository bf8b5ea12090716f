"""Two-way data parallelism for the hot primitives, on one persistent helper thread.

NumPy's ufuncs, reductions and matmul release the GIL on large arrays, so a pass split into
parts, some run on a helper thread, uses the second core. Each part computes exactly what the
serial code computes for its slice (parts are fixed by the sizes, not by the timing), so the
results do not depend on the threading: `set_threads(1)` runs the same parts in order
(`parallel_map`), or the whole pass at once where the parts are independent rows
(`parallel_rows`).

GEMMs inside a part run single-threaded (OpenBLAS's `openblas_set_num_threads_local`, which
sets the process-wide count: the calling thread sets 1 and restores it around the map): the
parts are the parallelism. This matters beyond the GEMM itself: after a multi-threaded call
OpenBLAS's worker busy-waits on the other core for about 0.1 s, and an elementwise pass split
over two threads then gains nothing (measured: a 32x4x64x64 softmax 1.8 ms serial, 1.16 ms in
two halves, but 1.8 ms in two halves right after an OpenBLAS GEMM). Where that function is
missing (another BLAS), parts that call GEMMs run serially.
"""

import ctypes
import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from fnad.extend import environ_get

__all__ = ["set_threads", "parallel_map", "parallel_rows", "scratch", "MIN_BYTES"]

MIN_BYTES = 1 << 19  # below this a pass stays on one thread (a hand-off costs ~20-50 us)

def _default_threads():
    """2, or fewer where the machine or OPENBLAS_NUM_THREADS / OMP_NUM_THREADS allow fewer."""
    n = min(2, os.cpu_count() or 1)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        text = (environ_get(var) or "").strip()
        if text.isdigit():
            return max(1, min(n, int(text)))
    return n


_state = {"threads": _default_threads(), "pool": None}
_local = threading.local()


def _find_blas_local():
    """`openblas_set_num_threads_local` of the BLAS NumPy loaded, or None."""
    try:
        with open("/proc/self/maps") as f:
            paths = {ln.split()[-1] for ln in f if "openblas" in ln.lower() and "/" in ln}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            fn = ctypes.CDLL(path).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int]
        return fn
    return None


_blas_local = _find_blas_local()


def set_threads(n):
    """Use `n` threads (1 or 2) in fnad_nn's fused primitives; returns the previous number.

    Results are bit-identical for either setting.

    Example:
      old = set_threads(1)   # serial
    """
    old, _state["threads"] = _state["threads"], max(1, min(2, int(n)))
    return old


def _pool():
    if _state["pool"] is None:
        _state["pool"] = ThreadPoolExecutor(1, thread_name_prefix="fnad_nn")
    return _state["pool"]


def _drain(fn, items, counter, results, slot):
    for i in counter:
        if i >= len(items):
            return
        results[i] = fn(items[i], slot)


def parallel_map(fn, items, *, blas=False, threads=None):
    """`[fn(item, slot) for item in items]`, the items shared out between this thread
    (slot 0) and the helper thread (slot 1) as each becomes free; `slot` picks per-thread
    scratch. Serial (slot 0, BLAS untouched) with fewer than 2 items or threads. `blas=True`
    says `fn` calls GEMMs: they run single-threaded, and the map is serial where that cannot
    be arranged."""
    threads = _state["threads"] if threads is None else threads
    if threads < 2 or len(items) < 2 or (blas and _blas_local is None):
        return [fn(item, 0) for item in items]
    counter, results = itertools.count(), [None] * len(items)
    # The BLAS thread count is process-wide (`openblas_set_num_threads_local` sets the
    # global count in OpenBLAS 0.3.x): only this thread sets and restores it, around both
    # threads' work. (Setting it in each thread raced: the helper could read the main
    # thread's 1 as "old" and restore it last, leaving OpenBLAS on one thread for good.)
    old = _blas_local(1) if blas else None
    try:
        fut = _pool().submit(_drain, fn, items, counter, results, 1)
        try:
            _drain(fn, items, counter, results, 0)
        finally:
            fut.result()
    finally:
        if blas:
            _blas_local(old)
    return results


def parallel_rows(fn, n, nbytes, *, blas=False, parts=2):
    """Call `fn(lo, hi)` on `parts` equal ranges of `[0, n)` on both threads when the pass
    touches at least `MIN_BYTES` (`nbytes`), else `fn(0, n)` once. `fn` must treat rows
    independently (each row's result the same whatever range it is computed in), so threaded
    and serial runs compute the same."""
    if nbytes < MIN_BYTES or n < 2 or _state["threads"] < 2 or (blas and _blas_local is None):
        fn(0, n)
        return
    parts = min(parts, n)
    bounds = [(n * i // parts, n * (i + 1) // parts) for i in range(parts)]
    parallel_map(lambda r, slot: fn(*r), bounds, blas=blas)


def scratch(name, shape, dtype, zero=False):
    """A reusable array for this thread (internal buffers only, never a result): reusing one
    spares the page faults of a fresh large allocation. `zero=True` zeroes it on first use
    only, for buffers whose untouched entries must stay 0 (key them by the geometry)."""
    cache = getattr(_local, "cache", None)
    if cache is None:
        cache = _local.cache = {}
    key = (name, tuple(shape), np.dtype(dtype))
    buf = cache.get(key)
    if buf is None:
        if len(cache) > 64:
            cache.clear()
        buf = cache[key] = (np.zeros if zero else np.empty)(shape, dtype)
    return buf
