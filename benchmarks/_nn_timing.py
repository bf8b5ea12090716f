"""Timing helper shared by benchmarks/conv.py and benchmarks/transformer.py."""

import statistics
import time


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
