"""Run a kernel's ranges on several cores: a small pool of worker threads that sleep between
calls.

A kernel here is a function `kernel(lo, hi, *args)` that releases the GIL (numba's
`nogil=True`) and fills rows `[lo, hi)` of its output. `run_ranges` cuts `[0, n)` into one
range per thread, hands all but the first to the workers and runs the first itself. The
workers block on a queue between calls, so nothing spins after a kernel ends (numba's own
OpenMP layer busy-waits after each parallel loop and slowed the BLAS call that followed on
the 2-core machine these kernels were measured on). The price is a wake-up per call: on
that machine's VM a worker that has gone idle wakes slowly, and OpenBLAS's worker
busy-waits for about 0.1 s after each GEMM, so two threads speed up a 1M-element GELU
called back to back (0.59 ms against 0.99 ms in one run of benchmarks/layer_kernels.py)
but gain little inside a training step (docs/benchmarks.md).

`FNAD_NUM_THREADS` sets the number of threads (default: the CPUs this process may use).
"""

import os
import queue
import threading

from .._core.settings import setting

__all__ = ["num_threads", "run_ranges", "MIN_WORK"]

# elements: below this a kernel runs on the calling thread alone (handing ranges to the
# workers and collecting them costs 50-100 us, a 512K-element GELU 0.45 ms of one core)
MIN_WORK = 1 << 19


def num_threads():
    """Threads the kernels use: FNAD_NUM_THREADS, else the CPUs this process may run on."""
    n = setting("FNAD_NUM_THREADS")
    if n is not None:
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class _Pool:
    def __init__(self):
        self.tasks = queue.SimpleQueue()
        self.threads = []

    def grow(self, workers):
        """Start workers until there are `workers` of them (all serve the one queue)."""
        while len(self.threads) < workers:
            t = threading.Thread(target=self._work, daemon=True,
                                 name=f"fnad-kernel-{len(self.threads)}")
            t.start()
            self.threads.append(t)

    def _work(self):
        while True:
            kernel, lo, hi, args, done = self.tasks.get()
            try:
                kernel(lo, hi, *args)
                done.put(None)
            except BaseException as e:  # handed back to the caller, raised there
                done.put(e)


_pool = None
_pool_lock = threading.Lock()
_pool_pid = None


def _get_pool(workers):
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():  # threads do not survive a fork
            _pool, _pool_pid = _Pool(), os.getpid()
        _pool.grow(workers)
        return _pool


def run_ranges(kernel, n, args, work=None):
    """`kernel(lo, hi, *args)` over `[0, n)`, split across the threads when `work` (elements
    touched; default n) is at least MIN_WORK."""
    threads = min(num_threads(), n)
    if threads <= 1 or (n if work is None else work) < MIN_WORK:
        kernel(0, n, *args)
        return
    cuts = [n * k // threads for k in range(threads + 1)]
    pool = _get_pool(threads - 1)
    done = queue.SimpleQueue()
    for k in range(1, threads):
        pool.tasks.put((kernel, cuts[k], cuts[k + 1], args, done))
    error = None
    try:
        kernel(0, cuts[1], *args)
    except BaseException as e:
        error = e
    for _ in range(threads - 1):
        e = done.get()
        error = error or e
    if error is not None:
        raise error
