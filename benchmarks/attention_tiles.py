"""Attention as the plain GPT writes it (benchmarks/_plain_gpt.py: q @ k^T / sqrt(D), causal
`where(mask, s, -inf)`, `exp(s - logsumexp(s)) @ v`) on its shapes (batch 32, 4 heads,
context 64, head size 32, float32), forward alone and `jit(grad)` of `sum(o * g)`
(forward and backward), under:
  exact       fnad.jit
  fast        fnad.jit(fast_math=True) with the attention pass switched off (batched GEMMs
              and row kernels over the (B, H, T, T) scores)
  fast tiles  fnad.jit(fast_math=True): the tile kernels of fnad/_jit/attention.py
  fnad_nn     fnad.jit of fnad_nn.scaled_dot_product_attention(causal=True) (its hand-
              fused softmax kernels, fnad.kernels.cpu)
Medians in interleaved blocks (benchmarks/_timing.py); also each one's largest error
against float64, normwise, in float32 eps. `--gpt`: instead, `jit(value_and_grad(loss),
fast_math=True)` of the plain GPT (benchmarks/_plain_gpt.py, steps.py's sizes, no
optimizer) with and without the attention pass, interleaved in one process (so that a
loaded machine slows both alike).

Run: python benchmarks/attention_tiles.py [--threads N] [--repeats N] [--gpt]
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _plain_gpt
from _timing import median_times, threads_from_argv

if __name__ == "__main__":
    THREADS = threads_from_argv()

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import fnad
import fnad.numpy as fnp
import fnad_nn
from fnad._jit import jit as jit_module
from fnad.kernels import _threads

B, H, T, D = 32, 4, 64, 32
CAUSAL = np.tril(np.ones((T, T), bool))


def attend(q, k, v):
    s = fnp.where(CAUSAL, q @ fnp.swapaxes(k, -1, -2) / math.sqrt(D), -np.inf)
    return fnp.exp(s - fnp.logsumexp(s, axis=-1, keepdims=True)) @ v


def nn_attend(q, k, v):
    return fnad_nn.scaled_dot_product_attention(q, k, v, causal=True)


def reference(q, k, v, g):
    q, k, v, g = (a.astype(np.float64) for a in (q, k, v, g))
    s = np.where(CAUSAL, q @ np.swapaxes(k, -1, -2) / math.sqrt(D), -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    dp = g @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) / math.sqrt(D)
    return p @ v, (ds @ k, np.swapaxes(ds, -1, -2) @ q, np.swapaxes(p, -1, -2) @ g)


def _no_tiles(fun, args, **kw):
    """jit(fun, **kw) traced and compiled at `args` with the attention pass switched off
    (a function of its own, so that jit's caches keep it apart)."""
    jitted = fnad.jit(lambda *a: fun(*a), **kw)
    keep = jit_module.fuse_attention
    jit_module.fuse_attention = lambda graph: graph
    try:
        jitted(*args)
    finally:
        jit_module.fuse_attention = keep
    return jitted


def _err(got, want):
    eps = float(np.finfo(np.float32).eps)
    return float(np.max(np.abs(np.asarray(got, np.float64) - want)) / np.max(np.abs(want))
                 / eps)


def gpt(repeats):
    p = _plain_gpt.init(65, 128, 4, 64)
    rng = np.random.default_rng(0)
    ids, targets = rng.integers(0, 65, (2, 32, 64))

    def loss(p, ids, targets):
        return _plain_gpt.loss(fnp, fnp.logsumexp, p, ids, targets, 4)

    step = fnad.value_and_grad(loss)
    fns = {"fast math, attention pass off": _no_tiles(step, (p, ids, targets), fast_math=True),
           "fast math (tiles)": fnad.jit(step, fast_math=True)}
    med = median_times({k: (lambda f=f: f(p, ids, targets)) for k, f in fns.items()}, repeats)
    print(f"# benchmarks/attention_tiles.py --gpt, {THREADS} threads: plain GPT loss and "
          "gradient (d 128, 4 heads, 4 layers, context 64, batch 32)")
    for key, t in med.items():
        print(f"  {key:32s} {t * 1e3:8.2f} ms")


if __name__ == "__main__":
    _threads.set_threads(THREADS)
    repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 30
    if "--gpt" in sys.argv:
        gpt(repeats)
        sys.exit()
    rng = np.random.default_rng(0)
    q, k, v, g = (rng.standard_normal((B, H, T, D)).astype(np.float32) for _ in range(4))

    def loss_of(f):
        return lambda q, k, v, g: fnp.sum(f(q, k, v) * g)

    grad = fnad.grad(loss_of(attend), argnums=(0, 1, 2))
    nn_grad = fnad.grad(loss_of(nn_attend), argnums=(0, 1, 2))
    fwd = {"exact": fnad.jit(attend), "fast": _no_tiles(attend, (q, k, v), fast_math=True),
           "fast tiles": fnad.jit(attend, fast_math=True), "fnad_nn": fnad.jit(nn_attend)}
    bwd = {"exact": fnad.jit(grad), "fast": _no_tiles(grad, (q, k, v, g), fast_math=True),
           "fast tiles": fnad.jit(grad, fast_math=True), "fnad_nn": fnad.jit(nn_grad)}
    o_ref, grads_ref = reference(q, k, v, g)
    fns = {}
    for name in fwd:
        fns[f"forward, {name}"] = (lambda f=fwd[name]: f(q, k, v))
        fns[f"forward + backward, {name}"] = (lambda f=bwd[name]: f(q, k, v, g))
    errors = {name: max([_err(fwd[name](q, k, v), o_ref)]
                        + [_err(a, b) for a, b in zip(bwd[name](q, k, v, g), grads_ref)])
              for name in fwd}
    med = median_times(fns, repeats)
    print(f"# benchmarks/attention_tiles.py, {THREADS} threads, B {B} H {H} T {T} D {D} "
          "float32, causal")
    for key, t in med.items():
        name = key.split(", ")[1]
        print(f"  {key:32s} {t * 1e3:8.2f} ms   (largest error {errors[name]:.1f} eps)")
    base = med["forward + backward, fast"]
    print(f"  fast tiles / fast (forward + backward): "
          f"{med['forward + backward, fast tiles'] / base:.2f}")
