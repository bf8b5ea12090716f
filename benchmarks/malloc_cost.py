"""What FNAD_MALLOC costs a jitted training step: the GPT step of benchmarks/steps.py
(`fnad.jit` of fnad's step, float32, one thread) in a fresh process per setting, since the
setting is read when fnad is imported. Prints per setting the median process CPU time
(user + sys) per step, the minor page faults per step (both from getrusage) and the
resident size after the steps (VmRSS). CPU time rather than wall time, so that a busy
machine changes the numbers less.

  python benchmarks/malloc_cost.py [--steps 15] [--rounds 2]
"""

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, resource, sys
import numpy as np
sys.path.insert(0, "benchmarks")
import steps
w = steps.WORKLOADS["gpt"](steps.FULL["gpt"], np.random.default_rng(0))
f = steps.factory(w, "jit", None, None)()
for _ in range(2):
    f()
cpu, faults = [], []
for _ in range(int(sys.argv[1])):
    a = resource.getrusage(resource.RUSAGE_SELF)
    f()
    b = resource.getrusage(resource.RUSAGE_SELF)
    cpu.append((b.ru_utime + b.ru_stime - a.ru_utime - a.ru_stime) * 1e3)
    faults.append(b.ru_minflt - a.ru_minflt)
rss = next(int(l.split()[1]) // 1024 for l in open("/proc/self/status") if l.startswith("VmRSS"))
print(json.dumps([float(np.median(cpu)), float(np.median(faults)), rss]))
"""


def run(setting, steps):
    env = dict(os.environ, FNAD_MALLOC=setting, OPENBLAS_NUM_THREADS="1", FNAD_NUM_THREADS="1",
               OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", CHILD, str(steps)], env=env, check=True,
                         capture_output=True, text=True, cwd=os.path.dirname(
                             os.path.dirname(os.path.abspath(__file__)))).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=15)
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args()
    rows = {"system": [], "keep": []}
    for _ in range(a.rounds):  # interleaved, so drift in the machine's load hits both
        for s in rows:
            rows[s].append(run(s, a.steps))
    print("FNAD_MALLOC  CPU ms/step (each round)  minor faults/step  RSS after (MiB)")
    for s, rs in rows.items():
        print(f"{s:11s}  {', '.join(f'{r[0]:.0f}' for r in rs):24s}  "
              f"{', '.join(f'{r[1]:.0f}' for r in rs):17s}  {', '.join(str(r[2]) for r in rs)}")


if __name__ == "__main__":
    main()
