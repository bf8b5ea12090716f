"""Where the jitted training step's time goes, by op family: every call of the compiled
program (benchmarks/steps.py's GPT step by default) is timed and summed per primitive,
then per family. Medians of the per-step totals over --repeats steps.

Run: python benchmarks/step_profile.py [--workload gpt|mlp|rnn] [--repeats N] [--threads N]
     [--primitives]   (also the table by primitive)
     [--fast-math]    (profile fnad.jit(step, fast_math=True))
     [--notes]        (also the optimisation passes' notes on the program, and the sums
                       over leading axes left to NumPy, by what made their operand)
"""

import collections
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import threads_from_argv

if __name__ == "__main__":
    THREADS = threads_from_argv()

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import fnad
import steps

# family -> primitive names (anything else is "other")
FAMILIES = {
    "matmul (linear layers, attention, head)": ("matmul", "affine"),
    "GELU forward and backward": ("gelu", "gelu_grad_mul", "normal_cdf", "exp"),
    "softmax, attention and loss": ("attention_softmax", "softmax_vjp", "softmax",
                                    "sparse_softmax_cross_entropy"),
    "layer norm": ("normalize", "normalize_vjp", "ln_rstd", "scale_shift", "mean"),
    "fused elementwise kernels (jit)": ("fused_elementwise",),
    "sums (bias and scale gradients)": ("sum", "sum_leading"),
    "layout (reshape, transpose, copies)": ("reshape", "transpose", "contiguous", "swapaxes"),
    "embedding gather and scatter": ("getitem", "gather_transpose"),
    "elementwise outside kernels": ("multiply", "add", "subtract", "divide", "sqrt", "power",
                                    "negative", "where", "less"),
}


def family_of(name):
    for fam, names in FAMILIES.items():
        if name in names:
            return fam
    return "other"


def profile(name, repeats, fast_math=False):
    c = steps.FULL[name]
    w = steps.WORKLOADS[name](c, np.random.default_rng(0))
    step, args = w["step"], w["args"]
    jstep = fnad.jit(step, fast_math=fast_math)
    jstep(*args)
    entry = next(iter(jstep._cache.values()))
    prim_of = {id(e.prim.impl): e.prim.name for e in entry.optimized.eqns}
    ns = entry.run.__globals__
    per_step = collections.defaultdict(float)
    for key, fn in list(ns.items()):
        if key[:1] == "f" and key[1:].isdigit() and id(fn) in prim_of:
            def timed(*a, _fn=fn, _name=prim_of[id(fn)], **kw):
                t0 = time.perf_counter()
                out = _fn(*a, **kw)
                per_step[_name] += time.perf_counter() - t0
                return out
            ns[key] = timed
    jstep(*args)
    totals, prims = [], collections.defaultdict(list)
    for _ in range(repeats):
        per_step.clear()
        t0 = time.perf_counter()
        jstep(*args)
        totals.append(time.perf_counter() - t0)
        for k, v in per_step.items():
            prims[k].append(v)
    return (statistics.median(totals), {k: statistics.median(v) for k, v in prims.items()},
            entry.optimized)


def leading_sums(graph):
    """Sums over leading axes (column sums) left in `graph`, counted by the primitive that
    made their operand."""
    made_by = {v: e.prim.name for e in graph.eqns for v in e.outvars}
    left = collections.Counter()
    for e in graph.eqns:
        axis = dict(e.kwargs).get("axis")
        axis = (axis,) if type(axis) is int else axis or ()
        if e.prim.name == "sum" and tuple(axis)[:1] == (0,):
            left[made_by.get(e.args[0], "an input")] += 1
    return left


def main():
    argv = sys.argv[1:]
    name = argv[argv.index("--workload") + 1] if "--workload" in argv else "gpt"
    repeats = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else 20
    fast = "--fast-math" in argv
    total, prims, graph = profile(name, repeats, fast)
    fams = collections.defaultdict(float)
    for k, v in prims.items():
        fams[family_of(k)] += v
    what = f"{name} step{' (fast math)' if fast else ''}"
    print(f"# benchmarks/step_profile.py: jitted {what}, median of {repeats} steps, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"step {total * 1e3:.1f} ms; in primitives {sum(prims.values()) * 1e3:.1f} ms")
    print("| op family | ms per step | share |")
    print("|---|---:|---:|")
    for fam, v in sorted(fams.items(), key=lambda kv: -kv[1]):
        print(f"| {fam} | {v * 1e3:.1f} | {v / total:.0%} |")
    glue = total - sum(prims.values())
    print(f"| Python glue between calls | {glue * 1e3:.1f} | {glue / total:.0%} |")
    if "--notes" in argv:
        for note in graph.notes:
            print(f"# pass: {note}")
        left = leading_sums(graph)
        print(f"# sums over leading axes left to NumPy: {sum(left.values())} (operand made by "
              + ", ".join(f"{k} {n}" for k, n in left.most_common()) + ")")
    if "--primitives" in argv:
        for k, v in sorted(prims.items(), key=lambda kv: -kv[1]):
            print(f"  {v * 1e3:8.2f} ms  {k}")


if __name__ == "__main__":
    main()
