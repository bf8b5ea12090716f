"""fnad's one thread pool: the layer kernels (fnad.kernels.cpu), jit's kernels and fnad_nn's
row-split passes share its workers, which sleep between calls.

Two ways in:
- `run_ranges(kernel, n, args)`: `kernel(lo, hi, *args)` (a numba kernel with `nogil=True`
  that fills rows `[lo, hi)` of its output) over one range of `[0, n)` per thread; the
  caller runs the first range itself.
- `parallel_map(fn, items)` and `parallel_rows(fn, n, nbytes)`: NumPy passes split into
  parts (ufuncs, reductions and GEMMs release the GIL on large arrays), the items shared
  out between the caller and the workers as each becomes free.

Parts are fixed by the sizes, never by the timing, so every result is the same at any
thread count (`set_threads(1)` or `FNAD_NUM_THREADS=1` runs the same parts in order).

The workers block on a queue between calls, so nothing spins after a call ends (numba's
OpenMP layer busy-waits after each parallel loop and slowed the BLAS call that followed on
the 2-core machine these kernels were measured on). The price is a wake-up per call: on
that machine's VM a worker that has gone idle wakes slowly, and OpenBLAS's worker
busy-waits for about 0.1 s after each multi-threaded GEMM, so two threads speed up a
1M-element GELU called back to back (0.59 ms against 0.99 ms in one run of
benchmarks/layer_kernels.py) but gain little inside a training step (docs/benchmarks.md).
GEMMs inside a `blas=True` map run single-threaded (OpenBLAS's
`openblas_set_num_threads_local`, which sets the process-wide count: the calling thread sets
1 and restores it around the map): the parts are the parallelism. Where that function is
missing (another BLAS), such maps run serially.

A call made from inside the pool (a kernel run by a part of a map) runs on its own thread
alone: workers never wait on work queued behind them. The pool is fork-safe: a child
process starts with no workers (`os.register_at_fork`) and makes its own on first use.

Threads: `set_threads(n)` if called, else `FNAD_NUM_THREADS`, else the CPUs this process
may use.
"""

import ctypes
import itertools
import os
import queue
import threading

import numpy as np

from .._core.settings import setting

__all__ = ["num_threads", "set_threads", "run_ranges", "parallel_map", "parallel_rows",
           "scratch", "MIN_WORK", "MIN_BYTES"]

# elements: below this a kernel runs on the calling thread alone (handing ranges to the
# workers and collecting them costs 50-100 us, a 512K-element GELU 0.45 ms of one core)
MIN_WORK = 1 << 19
MIN_BYTES = 1 << 19  # below this a NumPy pass stays on one thread (a hand-off costs 20-50 us)

_state = {"threads": None, "pool": None, "blas": None}
_lock = threading.Lock()
_local = threading.local()  # .inside: this thread runs a part; .cache: its scratch arrays


def num_threads():
    """Threads the pool uses: `set_threads`'s, else FNAD_NUM_THREADS, else the CPUs this
    process may run on."""
    n = _state["threads"]
    if n is not None:
        return n
    n = setting("FNAD_NUM_THREADS")
    if n is not None:
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def set_threads(n):
    """Use `n` threads in every kernel and pass (None: back to FNAD_NUM_THREADS or the CPU
    count); returns the previous value, for restoring. Results are the same bits for any n.

    Example:
      old = set_threads(1)   # serial
      set_threads(old)
    """
    old, _state["threads"] = _state["threads"], None if n is None else max(1, int(n))
    return old


class _Pool:
    def __init__(self):
        self.tasks = queue.SimpleQueue()
        self.threads = []

    def grow(self, workers):
        """Start workers until there are `workers` of them (all serve the one queue)."""
        while len(self.threads) < workers:
            t = threading.Thread(target=self._work, daemon=True,
                                 name=f"fnad-pool-{len(self.threads)}")
            t.start()
            self.threads.append(t)

    def _work(self):
        _local.inside = True
        while True:
            fn, args, done = self.tasks.get()
            try:
                fn(*args)
                done.put(None)
            except BaseException as e:  # handed back to the caller, raised there
                done.put(e)


def _after_fork_in_child():
    """The parent's workers do not exist in a child; a lock held at the fork may never be
    released: start again from nothing."""
    global _lock
    _lock = threading.Lock()
    _state["pool"] = None


os.register_at_fork(after_in_child=_after_fork_in_child)


def _run(fn, parts, first):
    """`fn(*p)` for each of `parts` on the workers and `fn(*first)` here; the first error
    raised anywhere is raised here once every part has ended."""
    with _lock:
        pool = _state["pool"]
        if pool is None:
            pool = _state["pool"] = _Pool()
        pool.grow(len(parts))
    done = queue.SimpleQueue()
    for p in parts:
        pool.tasks.put((fn, p, done))
    error = None
    was, _local.inside = getattr(_local, "inside", False), True
    try:
        fn(*first)
    except BaseException as e:
        error = e
    finally:
        _local.inside = was
    for _ in parts:
        e = done.get()
        error = error or e
    if error is not None:
        raise error


def _serial_here(threads):
    return threads <= 1 or getattr(_local, "inside", False)


def run_ranges(kernel, n, args, work=None):
    """`kernel(lo, hi, *args)` over `[0, n)`, split across the threads when `work` (elements
    touched; default n) is at least MIN_WORK."""
    threads = min(num_threads(), n)
    if _serial_here(threads) or (n if work is None else work) < MIN_WORK:
        kernel(0, n, *args)
        return
    cuts = [n * k // threads for k in range(threads + 1)]
    _run(kernel, [(cuts[k], cuts[k + 1], *args) for k in range(1, threads)],
         (0, cuts[1], *args))


def _blas_local():
    """`openblas_set_num_threads_local` of the BLAS NumPy loaded, or None (looked up once)."""
    if _state["blas"] is None:
        _state["blas"] = _find_blas_local() or False
    return _state["blas"] or None


def _find_blas_local():
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


def _drain(fn, items, counter, results, slot):
    for i in counter:
        if i >= len(items):
            return
        results[i] = fn(items[i], slot)


def parallel_map(fn, items, *, blas=False, threads=None):
    """`[fn(item, slot) for item in items]`, the items shared out between this thread
    (slot 0) and the workers (slots 1, 2, ...) as each becomes free; `slot` may pick
    per-thread scratch. Serial (slot 0, BLAS untouched) with fewer than 2 items or threads.
    `blas=True` says `fn` calls GEMMs: they run single-threaded, and the map is serial where
    that cannot be arranged. `threads`: at most this many (default `num_threads()`)."""
    threads = min(num_threads() if threads is None else threads, len(items))
    blas_local = _blas_local() if blas and threads > 1 else None
    if _serial_here(threads) or (blas and blas_local is None):
        return [fn(item, 0) for item in items]
    counter, results = itertools.count(), [None] * len(items)
    # The BLAS thread count is process-wide (`openblas_set_num_threads_local` sets the
    # global count in OpenBLAS 0.3.x): only this thread sets and restores it, around all
    # threads' work. (Setting it in each thread raced: a worker could read the caller's 1
    # as "old" and restore it last, leaving OpenBLAS on one thread for good.)
    old = blas_local(1) if blas else None
    try:
        _run(_drain, [(fn, items, counter, results, s) for s in range(1, threads)],
             (fn, items, counter, results, 0))
    finally:
        if blas:
            blas_local(old)
    return results


def parallel_rows(fn, n, nbytes, *, blas=False, parts=None):
    """Call `fn(lo, hi)` on `parts` (default: one per thread) equal ranges of `[0, n)` over
    the threads when the pass touches at least `MIN_BYTES` (`nbytes`), else `fn(0, n)` once.
    `fn` must treat rows independently (each row's result the same whatever range it is
    computed in), so threaded and serial runs compute the same."""
    threads = num_threads()
    if nbytes < MIN_BYTES or n < 2 or _serial_here(threads):
        fn(0, n)
        return
    parts = min(threads if parts is None else parts, n)
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
