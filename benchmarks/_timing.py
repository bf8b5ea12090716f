"""Timing helpers shared by the benchmark scripts (no NumPy import here: `threads_from_argv`
must run before NumPy loads its BLAS)."""

import os
import statistics
import sys
import time


def threads_from_argv(default=2):
    """--threads N (default 2), applied to BLAS through the environment; returns N.

    Call it before importing NumPy, and pass N to `torch.set_num_threads`.
    """
    n = str(default)
    if "--threads" in sys.argv:
        n = sys.argv[sys.argv.index("--threads") + 1]
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = n
    return int(n)


def median_times(fns, repeats, rounds=3, pause=0.3):
    """Median seconds per call of each function in `fns` (a dict name -> callable).

    The functions alternate in `rounds` blocks of `repeats // rounds` calls (so drift hits
    all alike), each block after a warm-up call and a short pause (so the other library's
    worker threads are idle).
    """
    per_block = max(1, repeats // rounds)
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            time.sleep(pause)
            f()
            for _ in range(per_block):
                t0 = time.perf_counter()
                f()
                times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def report(title, med):
    fn, tr = med["fnad"], med["torch"]
    print(title)
    print(f"  fnad   {fn * 1e3:8.2f} ms (median)")
    print(f"  torch  {tr * 1e3:8.2f} ms (median)")
    print(f"  ratio fnad/torch = {fn / tr:.2f}")
