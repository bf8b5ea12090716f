"""The GPT training step on one GPU: fnad eager and fnad.jit on CuPy against PyTorch on CUDA.

The workload is benchmarks/steps.py's GPT (vocabulary 65, d 128, 4 heads, 4 layers, context
64, batch 32, float32, AdamW), the same weights and batch in all three. The first step's
losses must agree to 1e-4 relative (float32), and one jitted step runs under
`cupyx.allow_synchronize(False)`, which raises if the step makes the host wait for the
device (a host copy). Times are medians of synchronised steps (the device is synchronised
before each clock read); jit's first call (the trace) is reported apart.

Run:   PYTHONPATH=. python benchmarks/gpu_gpt_step.py [--repeats N] [--out DIR]
Check: PYTHONPATH=. python benchmarks/gpu_gpt_step.py --dry-run   (no GPU: a tiny GPT, one
       step each, fnad on the simulated device of tests/simdevice, where a host copy in the
       jitted step raises, and torch on the CPU; the same code paths and checks, no timing)
"""

import argparse
import contextlib
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import fnad
import fnad_optim as optim
from fnad._core.backend import cupy_or_none, device_backend, gpu_unavailable_reason
from fnad_nn import models

from steps import FULL, QUICK, VOCAB, gpt_config, gpt_loss_fn, make_step, torch_gpt_loss

HP = dict(lr=1e-3, b1=0.9, b2=0.95, weight_decay=0.1)


def _median_seconds(step, sync, repeats):
    step()
    sync()
    times = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _no_sync():
    """cupyx.allow_synchronize(False) on a GPU: any host wait inside raises."""
    backend = device_backend()
    allow = getattr(backend.xpx, "allow_synchronize", None) if backend else None
    return allow(False) if allow is not None else contextlib.nullcontext()


def fnad_steps(c, params, ids, targets, on_gpu, repeats, sync):
    """(results, first losses) of the fnad eager and jitted steps."""
    config = gpt_config(c)
    opt = optim.adamw(HP["lr"], b1=HP["b1"], b2=HP["b2"], weight_decay=HP["weight_decay"])
    step = make_step(gpt_loss_fn(config), opt)
    put = (lambda t: fnad.device_put(t, "gpu")) if on_gpu else (lambda t: t)
    p, i, t = put((params, ids, targets))
    s = opt.init(p)
    out, losses = {}, {}
    losses["fnad eager"] = float(step(p, s, i, t)[2])
    jstep = fnad.jit(step)
    t0 = time.perf_counter()
    first = jstep(p, s, i, t)
    sync()
    out["fnad jit first call (s)"] = time.perf_counter() - t0
    losses["fnad jit"] = float(first[2])
    with _no_sync():  # a jitted step: no host copy, no host wait
        jstep(p, s, i, t)
    out["fnad jit: no host sync in a step"] = True
    if repeats:
        out["fnad eager (ms)"] = 1e3 * _median_seconds(lambda: step(p, s, i, t), sync, repeats)
        out["fnad jit (ms)"] = 1e3 * _median_seconds(lambda: jstep(p, s, i, t), sync, repeats)
    return out, losses


def torch_step(torch, c, params, ids, targets, device, repeats, sync):
    config = gpt_config(c)
    tp = fnad.tree_map(lambda a: torch.tensor(a, device=device, requires_grad=True), params)
    topt = torch.optim.AdamW(fnad.tree_leaves(tp), lr=HP["lr"], betas=(HP["b1"], HP["b2"]),
                             weight_decay=HP["weight_decay"])
    it = torch.from_numpy(ids).to(device)
    tt = torch.from_numpy(targets).to(device)

    def step():
        topt.zero_grad(set_to_none=True)
        loss = torch_gpt_loss(torch, tp, config, it, tt)
        loss.backward()
        topt.step()
        return loss
    loss = float(step().detach())
    out = {}
    if repeats:
        out["torch (ms)"] = 1e3 * _median_seconds(step, sync, repeats)
    return out, loss


def _simulated_gpu():
    """The simulated device of tests/simdevice as fnad's "gpu" (the dry run's GPU)."""
    from tests.simdevice import installed
    return installed()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--out", default=None, help="directory for gpu_gpt_step.json")
    ap.add_argument("--dry-run", action="store_true",
                    help="a tiny GPT, one step each: fnad on the simulated device, torch on "
                         "the CPU; no timing")
    args = ap.parse_args()
    import torch
    cp = None if args.dry_run else cupy_or_none()
    if not args.dry_run and (cp is None or not torch.cuda.is_available()):
        why = gpu_unavailable_reason() or "torch sees no CUDA device"
        print(f"gpu_gpt_step: needs CuPy and CUDA torch ({why}); run with --dry-run on a CPU.")
        return 2
    c = dict(QUICK["gpt"] if args.dry_run else FULL["gpt"])
    repeats = 0 if args.dry_run else args.repeats
    rng = np.random.default_rng(0)
    params = models.init_gpt(fnad.random.PRNGKey(0), gpt_config(c))
    ids = rng.integers(0, VOCAB, (c["batch"], c["context"]))
    targets = rng.integers(0, VOCAB, (c["batch"], c["context"]))
    label = (f"GPT vocab {VOCAB}, d {c['d']}, {c['heads']} heads, {c['layers']} layers, "
             f"context {c['context']}, batch {c['batch']}, float32, AdamW")
    print(f"gpu_gpt_step: {label}; " + ("dry run on the simulated device" if args.dry_run else
                                         f"on {torch.cuda.get_device_name()}"), flush=True)
    sync = (lambda: None) if args.dry_run else cp.cuda.Device().synchronize
    tsync = (lambda: None) if args.dry_run else torch.cuda.synchronize
    with _simulated_gpu() if args.dry_run else contextlib.nullcontext():
        result, losses = fnad_steps(c, params, ids, targets, True, repeats, sync)
    tres, losses["torch"] = torch_step(torch, c, params, ids, targets,
                                       "cpu" if args.dry_run else "cuda", repeats, tsync)
    result.update(tres)
    ref = losses["torch"]
    worst = max(abs(v - ref) / abs(ref) for v in losses.values())
    result.update({"workload": label, "first losses": losses, "loss max rel diff": worst})
    if repeats:
        for k in ("fnad eager", "fnad jit"):
            result[f"{k} / torch"] = result[f"{k} (ms)"] / result["torch (ms)"]
    for k, v in result.items():
        print(f"  {k}: {v:.4g}" if isinstance(v, float) else f"  {k}: {v}")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "gpu_gpt_step.json"), "w") as f:
            json.dump(result, f, indent=1)
    if worst > 1e-4:
        print(f"gpu_gpt_step: FAILED: the first losses differ by {worst:.2e} (> 1e-4)")
        return 1
    print("gpu_gpt_step: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
