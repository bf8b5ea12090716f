"""The first call of the jitted GPT training step of benchmarks/steps.py (trace, optimise,
compile its fused kernels, compile fnad.kernels.cpu's layer kernels, run once), with cold
kernel caches and then warm ones, each in a fresh process.

Cold: empty FNAD_CACHE_DIR (jit's fused kernels) and NUMBA_CACHE_DIR (the layer kernels'
numba cache) directories, so every kernel is compiled. Warm: the same directories again,
so every kernel is loaded from disk. Each line also gives the second call (a replay).
Issue 22's limit: a cold first call under 30 s; issue 30's goal: the GPT step's first call
within 10 s with cold caches and 1 s with warm ones. --fast-math jits with fast_math=True.

Run: python benchmarks/compile_time.py [--workload gpt|plain_gpt|mlp|rnn] [--fast-math]
     [--rounds N]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import json, sys, time
sys.path[:0] = [{here!r}, {root!r}]
t0 = time.perf_counter()
import numpy as np
import fnad, steps
t_import = time.perf_counter() - t0
c = steps.FULL[{name!r}]
w = steps.WORKLOADS[{name!r}](c, np.random.default_rng(0))
step, args = w["step"], w["args"]
j = fnad.jit(step, fast_math={fast!r})
t0 = time.perf_counter(); j(*args); first = time.perf_counter() - t0
t0 = time.perf_counter(); j(*args); second = time.perf_counter() - t0
print(json.dumps(dict(imports=t_import, first=first, second=second)))
"""


def run_child(name, cache, numba_cache, threads, fast=False):
    env = dict(os.environ, FNAD_CACHE_DIR=cache, NUMBA_CACHE_DIR=numba_cache,
               OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    src = CHILD.format(here=HERE, root=os.path.dirname(HERE), name=name, fast=fast)
    out = subprocess.run([sys.executable, "-c", src], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(prog="python benchmarks/compile_time.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="gpt", choices=["gpt", "plain_gpt", "mlp", "rnn"])
    ap.add_argument("--fast-math", action="store_true", help="fnad.jit(step, fast_math=True)")
    ap.add_argument("--rounds", type=int, default=2, help="cold/warm pairs")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    mode = ", fast math" if args.fast_math else ""
    print(f"# benchmarks/compile_time.py: the jitted {args.workload} step's first call{mode}, "
          f"{args.threads} threads, load average {os.getloadavg()[0]:.1f}")
    print(f"{'round':>5s} {'caches':>6s} {'import s':>9s} {'first call s':>13s} "
          f"{'second call ms':>15s}")
    for r in range(args.rounds):
        with tempfile.TemporaryDirectory() as d:
            cache, numba_cache = os.path.join(d, "fnad"), os.path.join(d, "numba")
            for label in ("cold", "warm"):
                t = run_child(args.workload, cache, numba_cache, args.threads, args.fast_math)
                print(f"{r + 1:5d} {label:>6s} {t['imports']:9.2f} {t['first']:13.2f} "
                      f"{t['second'] * 1e3:15.1f}")


if __name__ == "__main__":
    main()
