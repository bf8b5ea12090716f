"""fnad.jit's elementwise fusion backends, side by side with PyTorch eager and hand NumPy.

Two workloads, each timed in this one process (medians of alternating blocks):
  1. mlp: one training step (forward, backward, Adam update) of an MLP 784-256-10 at batch
     128 in float32.
  2. gpt: the elementwise work of a GPT block at batch 32, context 64, d 128, 4 heads,
     float32: layer norm of (2048, 128), tanh-GELU of (2048, 512), softmax of the attention
     scores (128, 64, 64).
  3. adam: the Adam update alone of one 784x256 float32 parameter (gradient given).
for fnad eager, fnad jit with numba / numexpr / NumPy-fallback fusion, fnad jit without
fusion (the other passes only), PyTorch eager and hand-written NumPy. The first call of
each jit (trace + optimise + kernel build, with an empty numba cache) is reported
separately, with the memory plan's peak of the optimised program and the dispatch cost of
a jitted call (tiny step, jitted call vs the compiled program called directly, fastest
of many calls).

Run: python benchmarks/jit_fusion.py [--repeats N] [--threads N]
"""

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_times, threads_from_argv

THREADS = threads_from_argv()
os.environ.setdefault("FNAD_CACHE_DIR", tempfile.mkdtemp(prefix="fnad_bench_cache_"))

import numpy as np  # noqa: E402

import fnad  # noqa: E402
import fnad.numpy as fnp  # noqa: E402
import fnad_nn as nn  # noqa: E402
import fnad_optim as optim  # noqa: E402
from fnad._jit import fusion as _graph_fusion  # noqa: E402

LR, B1, B2, EPS = 1e-3, 0.9, 0.999, 1e-8


# --------------------------------------------------------------------------- 1. MLP step
def init_mlp(rng, sizes=(784, 256, 10)):
    return [{"w": (rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32),
             "b": np.zeros(o, np.float32)} for i, o in zip(sizes[:-1], sizes[1:])]


OPT = optim.adam(LR, B1, B2, EPS)


def mlp_loss(params, x, y):
    h = fnp.maximum(x @ params[0]["w"] + params[0]["b"], 0.0)
    return nn.sparse_softmax_cross_entropy(h @ params[1]["w"] + params[1]["b"], y)


def mlp_step(params, state, x, y):
    loss, grads = fnad.value_and_grad(mlp_loss)(params, x, y)
    updates, state = OPT.update(grads, state, params)
    return optim.apply_updates(params, updates), state, loss


class NumpyMLP:
    """Hand-written forward, backward and Adam of the same MLP, in place."""

    def __init__(self, params):
        self.p = [{k: v.copy() for k, v in layer.items()} for layer in params]
        self.m = [{k: np.zeros_like(v) for k, v in layer.items()} for layer in params]
        self.v = [{k: np.zeros_like(v) for k, v in layer.items()} for layer in params]
        self.t = 0

    def step(self, x, y):
        (w1, b1), (w2, b2) = ((lay["w"], lay["b"]) for lay in self.p)
        a = x @ w1
        a += b1
        h = np.maximum(a, 0, out=a)
        z = h @ w2
        z += b2
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(s[:, 0]) - z[np.arange(len(y)), y])
        g = e / s
        g[np.arange(len(y)), y] -= 1
        g /= len(y)
        grads = [{"w": None, "b": None}, {"w": h.T @ g, "b": g.sum(0)}]
        gh = g @ w2.T
        gh *= h > 0
        grads[0] = {"w": x.T @ gh, "b": gh.sum(0)}
        self.t += 1
        c1, c2 = 1 - B1 ** self.t, 1 - B2 ** self.t
        for p, m, v, gr in zip(self.p, self.m, self.v, grads):
            for k in p:
                gk = gr[k]
                m[k] *= B1
                m[k] += (1 - B1) * gk
                v[k] *= B2
                gk *= gk
                gk *= 1 - B2
                v[k] += gk
                den = np.sqrt(v[k] / np.float32(c2))
                den += np.float32(EPS)
                upd = m[k] / den
                upd *= np.float32(LR / c1)
                p[k] -= upd
        return loss


def torch_mlp(torch, params):
    tp = [torch.tensor(lay[k], requires_grad=True) for lay in params for k in ("w", "b")]
    opt = torch.optim.Adam(tp, lr=LR, betas=(B1, B2), eps=EPS)

    def step(x, y):
        h = torch.relu(x @ tp[0] + tp[1])
        loss = torch.nn.functional.cross_entropy(h @ tp[2] + tp[3], y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss
    return step


# --------------------------------------------------------------------------- 2. GPT pieces
def gpt_elementwise(m, x, h, s, g, b):
    """Layer norm, tanh-GELU and softmax written with module `m` (fnad.numpy or numpy)."""
    mu = m.mean(x, axis=-1, keepdims=True)
    xc = x - mu
    var = m.mean(xc * xc, axis=-1, keepdims=True)
    y = xc / m.sqrt(var + 1e-5) * g + b
    gelu = 0.5 * h * (1.0 + m.tanh(0.7978845608 * (h + 0.044715 * (h * h * h))))
    e = m.exp(s - m.max(s, axis=-1, keepdims=True))
    return y, gelu, e / m.sum(e, axis=-1, keepdims=True)


def gpt_torch(torch, x, h, s, g, b):
    y = torch.nn.functional.layer_norm(x, (x.shape[-1],), g, b, 1e-5)
    return y, torch.nn.functional.gelu(h, approximate="tanh"), torch.softmax(s, -1)


# --------------------------------------------------------------------------- the runs
def jits(fun):
    """{label: jitted fun} for each fusion backend installed, and without fusion; and the
    first-call seconds of each (a fresh trace and, for numba, an empty kernel cache)."""
    out = {}
    for b in _graph_fusion.available_backends() + ["off"]:
        _graph_fusion.set_backend(b)
        out[f"jit {b if b != 'off' else 'no fusion'}"] = fnad.jit(fun)
    return out


def first_calls(jitted, args):
    secs, peaks = {}, {}
    for k, j in jitted.items():
        _graph_fusion.set_backend(k.split()[1] if "fusion" not in k else "off")
        t0 = time.perf_counter()
        j(*args)
        secs[k] = time.perf_counter() - t0
        peaks[k] = j.graph(*args).memory_plan().peak
    return secs, peaks


def table(title, med, unit=1e3, ref="torch eager"):
    print(f"\n{title} (median ms; ratio to {ref} and to hand NumPy)")
    for k, v in med.items():
        r = f"{v / med[ref]:6.2f}" if ref in med else "   -  "
        print(f"  {k:18s} {v * unit:9.3f}   {r}   {v / med['hand numpy']:6.2f}")


def check_same(a, b, rtol):
    for x, y in zip(fnad.tree.tree_leaves(a), fnad.tree.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x, np.float64), np.asarray(y, np.float64),
                                   rtol=rtol, atol=rtol)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=60)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    try:
        import torch
        torch.set_num_threads(THREADS)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    print(f"threads {THREADS}; fusion backends installed: "
          f"{_graph_fusion.available_backends()}; numba cache {os.environ['FNAD_CACHE_DIR']}")

    # ---- MLP
    params = init_mlp(rng)
    state = OPT.init(params)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = rng.integers(0, 10, 128)
    jitted = jits(mlp_step)
    secs, peaks = first_calls(jitted, (params, state, x, y))
    ref = mlp_step(params, state, x, y)
    for j in jitted.values():
        check_same(j(params, state, x, y), ref, 1e-5)
    fns = {"fnad eager": lambda: mlp_step(params, state, x, y)}
    fns.update({k: (lambda j=j: j(params, state, x, y)) for k, j in jitted.items()})
    hand = NumpyMLP(params)
    fns["hand numpy"] = lambda: hand.step(x, y)
    if torch is not None:
        tstep = torch_mlp(torch, params)
        xt, yt = torch.tensor(x), torch.tensor(y)
        fns["torch eager"] = lambda: tstep(xt, yt)
    table("MLP 784-256-10 training step, Adam, batch 128, float32",
          median_times(fns, args.repeats))
    print("  first call (trace + optimise + kernels), s; memory plan peak, MiB:")
    for k in jitted:
        print(f"    {k:18s} {secs[k]:7.2f} s   peak {peaks[k] / 2**20:6.2f} MiB")

    # ---- GPT elementwise
    gx = rng.standard_normal((32 * 64, 128)).astype(np.float32)
    gh = rng.standard_normal((32 * 64, 512)).astype(np.float32)
    gs = rng.standard_normal((32 * 4, 64, 64)).astype(np.float32)
    gg, gb = np.ones(128, np.float32), np.zeros(128, np.float32)
    gargs = (gx, gh, gs, gg, gb)
    f = lambda *a: gpt_elementwise(fnp, *a)
    jitted = jits(f)
    secs, peaks = first_calls(jitted, gargs)
    for j in jitted.values():
        check_same(j(*gargs), gpt_elementwise(np, *gargs), 1e-5)
    fns = {"fnad eager": lambda: f(*gargs)}
    fns.update({k: (lambda j=j: j(*gargs)) for k, j in jitted.items()})
    fns["hand numpy"] = lambda: gpt_elementwise(np, *gargs)
    if torch is not None:
        targs = [torch.tensor(a) for a in gargs]
        check_same([t.numpy() for t in gpt_torch(torch, *targs)], gpt_elementwise(np, *gargs),
                   1e-4)
        fns["torch eager"] = lambda: gpt_torch(torch, *targs)
    table("GPT block elementwise work (layer norm, tanh-GELU, softmax), float32",
          median_times(fns, args.repeats))
    print("  first call (trace + optimise + kernels), s; memory plan peak, MiB:")
    for k in jitted:
        print(f"    {k:18s} {secs[k]:7.2f} s   peak {peaks[k] / 2**20:6.2f} MiB")

    # ---- Adam update alone
    p = {"w": params[0]["w"]}
    g = {"w": rng.standard_normal((784, 256)).astype(np.float32)}
    s = OPT.init(p)

    def adam(g, s, p):
        u, s = OPT.update(g, s, p)
        return optim.apply_updates(p, u), s
    jitted = jits(adam)
    secs, peaks = first_calls(jitted, (g, s, p))
    for j in jitted.values():
        check_same(j(g, s, p), adam(g, s, p), 1e-6)
    fns = {"fnad eager": lambda: adam(g, s, p)}
    fns.update({k: (lambda j=j: j(g, s, p)) for k, j in jitted.items()})
    hm = NumpyMLP([p])
    hp, hmm, hv = hm.p[0]["w"], hm.m[0]["w"], hm.v[0]["w"]

    def hand_adam():
        hm.t += 1
        c1, c2 = 1 - B1 ** hm.t, 1 - B2 ** hm.t
        gk = g["w"].copy()
        hmm[...] *= B1
        hmm[...] += (1 - B1) * gk
        hv[...] *= B2
        gk *= gk
        gk *= 1 - B2
        hv[...] += gk
        den = np.sqrt(hv / np.float32(c2))
        den += np.float32(EPS)
        upd = hmm / den
        upd *= np.float32(LR / c1)
        hp[...] -= upd
    fns["hand numpy"] = hand_adam
    if torch is not None:
        tw = torch.tensor(p["w"], requires_grad=True)
        tw.grad = torch.tensor(g["w"])
        topt = torch.optim.Adam([tw], lr=LR, betas=(B1, B2), eps=EPS)
        fns["torch eager"] = topt.step
    table("Adam update of one 784x256 float32 parameter", median_times(fns, args.repeats))

    # ---- dispatch
    tiny = init_mlp(rng, (8, 8, 4))
    tstate = OPT.init(tiny)
    tx, ty = x[:4, :8].copy(), y[:4] % 4
    _graph_fusion.set_backend(_graph_fusion.available_backends()[0])
    j = fnad.jit(mlp_step)
    j(tiny, tstate, tx, ty)
    run = j._entry(tiny, tstate, tx, ty).run
    flat = fnad.tree.tree_leaves((tiny, tstate, tx, ty))
    # the fixed cost is what matters here: the fastest of many alternating calls
    best = {"jitted call": float("inf"), "compiled program": float("inf")}
    calls = {"jitted call": lambda: j(tiny, tstate, tx, ty),
             "compiled program": lambda: run(*flat)}
    for _ in range(args.repeats * 20):
        for k, fn in calls.items():
            t0 = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    print(f"\ndispatch, tiny MLP step ({len(flat)} leaves), fastest of "
          f"{args.repeats * 20} calls: jitted call {best['jitted call'] * 1e6:.1f} us, "
          f"compiled program alone {best['compiled program'] * 1e6:.1f} us, overhead "
          f"{(best['jitted call'] - best['compiled program']) * 1e6:.1f} us")


if __name__ == "__main__":
    main()
