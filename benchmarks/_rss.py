"""Peak resident memory of one training step, for `benchmarks/steps.py --memory`: each
implementation runs in a fresh process of its own (`steps.py --measure-rss IMPL WORKLOAD`),
since a process's peak RSS is a high-water mark that setup (imports, compilation) would
otherwise set. Linux: RSS from /proc/self/status, the high-water mark reset through
/proc/self/clear_refs (else `ru_maxrss`, which then includes setup).
"""

import ctypes
import gc
import json
import re
import resource
import subprocess
import sys


def _status_mib(field):
    try:
        with open("/proc/self/status") as f:
            m = re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.M)
    except OSError:
        return None
    return int(m.group(1)) / 1024 if m else None


def _release_free_memory():
    """Hand memory malloc holds but no longer uses back to the system (glibc), so the
    warm-up call's freed intermediates do not sit in the setup RSS."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_of(fn, steps):
    """RSS (MiB) before `steps` calls of the already warm `fn`, and the peak during them:
    `{"setup_mib", "peak_mib", "exact"}` (`exact` False: the peak is the process's
    `ru_maxrss`, setup included)."""
    _release_free_memory()
    setup = _status_mib("VmRSS")
    exact = setup is not None and _reset_peak()
    for _ in range(steps):
        fn()
    peak = _status_mib("VmHWM") if exact else None
    if peak is None:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # KiB on Linux
    return {"setup_mib": setup if setup is not None else float("nan"), "peak_mib": peak,
            "exact": exact}


def emit(result):
    """The child's answer: one JSON line, the last of its stdout."""
    print(json.dumps(result), flush=True)


def in_child(script, impl, workload, extra_args):
    """Run `script --measure-rss impl workload *extra_args` in a fresh Python and return its
    JSON answer, or `{"error": ...}` with the last line of its stderr."""
    cmd = [sys.executable, script, "--measure-rss", impl, workload, *extra_args]
    r = subprocess.run(cmd, capture_output=True, text=True)
    lines = r.stdout.strip().splitlines()
    if r.returncode == 0 and lines:
        try:
            return json.loads(lines[-1])
        except json.JSONDecodeError:
            pass
    err = (r.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"exit {r.returncode}: {err[:200]}"}
