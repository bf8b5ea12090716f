"""Whole training steps (loss, gradients, optimizer update), float32, side by side in one
process: a hand-written NumPy step (forward, hand-derived backward, in-place update; the
baseline every ratio is taken to), fnad eager, fnad jit (`fnad.jit(step)`), fnad jit with
fast math (`fnad.jit(step, fast_math=True)`, docs/jit.md "Fast math"), PyTorch eager,
torch.compile (the same PyTorch step, zero_grad + forward + backward + optimizer step,
through `torch.compile` with its default backend) and, when jax is installed (the `bench`
extra), jax.jit (benchmarks/_jax_steps.py: the same model, loss and optimizer, the whole
step under `jax.jit`). Issue 12's three workloads:

  mlp  MLP 784-256-256-10 (ReLU), batch 128, softmax cross-entropy, SGD lr 0.01
  gpt  GPT vocab 65, d 128, 4 heads, 4 layers, context 64, batch 32, exact GELU, tied head,
       AdamW (lr 1e-3, betas 0.9/0.95, weight decay 0.1 on every leaf)
  rnn  tanh RNN input 32, hidden 128, 50 time steps, batch 32, linear readout 128->10 of the
       last hidden state, MSE, Adam lr 1e-3
  rnn_scan  the rnn with fnad's loss written over fnad.lax.scan as users write it (x_t @ W
       and h @ U in the body, the jax peer's code), whose weight GEMMs scan hoists
  rnn_loop  the rnn with fnad's loss (and the jax peer's) written as a Python loop over time
       (x[:, t] @ W + h @ U), which jit unrolls; fast math batches its weight GEMMs

and issue 30's "GPT as users write it" (no hand NumPy step: its ratios are n/a):

  plain_gpt  the gpt sizes from plain array ops (benchmarks/_plain_gpt.py: fused q/k/v split
       by slicing, tanh GELU, layer norm from mean and var, softmax via logsumexp, causal
       mask), tied head, Adam lr 1e-3 (fnad_optim's, inside the jitted step)

The fnad step is what a user writes: `fnad.value_and_grad(loss)` and a fnad_optim update,
pure (`step(params, opt_state, *batch) -> (params, opt_state, loss)`), so `fnad.jit(step)`
applies unchanged. Every implementation starts from the same weights; the script checks that
their first losses agree before timing. Medians over interleaved blocks
(benchmarks/_timing.py); the first call of fnad.jit, torch.compile and jax.jit (trace +
compile) is reported on its own (fnad.jit's numba kernels and torch.compile's inductor keep
on-disk caches: a warm cache shortens it). --threads sets BLAS's and torch's threads; jax
runs on XLA's own thread pool, which it does not limit. Without jax, the table shows issue
12's measured jax.jit / NumPy ratio instead, for reference.

--memory adds the peak memory of each step: fnad.jit's memory plan (the intermediates of
the optimised program, fnad/_graph/memory.py) and, for every implementation, the peak RSS
measured in a fresh process (benchmarks/_rss.py).

Run: python benchmarks/steps.py [--only mlp,gpt,plain_gpt,rnn,rnn_scan,rnn_loop] [--repeats N]
     [--threads N] [--no-jit] [--no-fast] [--no-torch] [--no-compile] [--no-jax] [--memory]
     [--markdown] [--quick]     (--quick: small sizes and few repeats, a smoke run)
"""

import argparse
import copy
import datetime
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_times, threads_from_argv

if __name__ == "__main__":
    THREADS = threads_from_argv()   # before NumPy loads its BLAS

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import fnad
import fnad.random as random
import fnad_nn as nn
import fnad_optim as optim
from fnad_nn import models

import _hand
import _jax_steps
import _plain_gpt
import _rss

# jax.jit's median ms / hand NumPy's median ms in issue 12's reference measurement: shown
# for reference, and the jit goal's bar, only when jax is not installed.
JAX_RATIO = {"mlp": 0.78 / 1.09, "gpt": 105 / 166, "rnn": 1.92 / 2.75, "rnn_scan": 1.92 / 2.75,
             "rnn_loop": 1.92 / 2.75}
FULL = {"mlp": dict(sizes=(784, 256, 256, 10), batch=128, repeats=300),
        "gpt": dict(d=128, heads=4, layers=4, context=64, batch=32, repeats=30),
        "plain_gpt": dict(d=128, heads=4, layers=4, context=64, batch=32, repeats=30),
        "rnn": dict(d_in=32, hidden=128, steps=50, batch=32, d_out=10, repeats=150)}
FULL["rnn_scan"] = FULL["rnn_loop"] = FULL["rnn"]
QUICK = {"mlp": dict(sizes=(64, 32, 32, 10), batch=16, repeats=3),
         "gpt": dict(d=32, heads=2, layers=1, context=16, batch=4, repeats=3),
         "plain_gpt": dict(d=32, heads=2, layers=1, context=16, batch=4, repeats=3),
         "rnn": dict(d_in=8, hidden=16, steps=10, batch=4, d_out=10, repeats=3)}
QUICK["rnn_scan"] = QUICK["rnn_loop"] = QUICK["rnn"]
VOCAB = 65


def make_step(loss_fn, opt):
    """The idiomatic pure training step: `(params, opt_state, *batch) -> (params, opt_state,
    loss)`."""
    loss_and_grad = fnad.value_and_grad(loss_fn)

    def step(params, opt_state, *batch):
        loss, grads = loss_and_grad(params, *batch)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optim.apply_updates(params, updates), opt_state, loss

    return step


# --------------------------------------------------------------------------- the losses

def mlp_loss(params, x, labels):
    return nn.sparse_softmax_cross_entropy(nn.mlp(params, x), labels)


def rnn_loss(params, xs, target):
    _, h_n = nn.rnn(params["rnn"], xs)
    return nn.mse_loss(nn.linear(params["out"], h_n[-1]), target)


def rnn_scan_loss(params, xs, target):
    """The tanh RNN as users write it over `fnad.lax.scan` (the jax peer's code): both weight
    GEMMs inside the body, which scan hoists (docs/jit.md, "Recurrences")."""
    fnp = fnad.numpy
    cell = params["rnn"][0]

    def body(h, x_t):
        h = fnp.tanh(x_t @ cell["w_ih"] + cell["b_ih"] + h @ cell["w_hh"] + cell["b_hh"])
        return h, None

    h0 = fnp.zeros((xs.shape[0], cell["w_hh"].shape[0]), xs.dtype)
    h, _ = fnad.lax.scan(body, h0, fnp.swapaxes(xs, 0, 1))
    return nn.mse_loss(nn.linear(params["out"], h), target)


def rnn_loop_loss(params, xs, target):
    """The tanh RNN as users write it in a Python loop over time (the jax peer's code too):
    jit unrolls it, and under fast math batches its weight GEMMs (docs/jit.md, "Fast math")."""
    fnp = fnad.numpy
    cell = params["rnn"][0]
    h = fnp.zeros((xs.shape[0], cell["w_hh"].shape[0]), xs.dtype)
    for t in range(xs.shape[1]):
        h = fnp.tanh(xs[:, t] @ cell["w_ih"] + cell["b_ih"] + h @ cell["w_hh"] + cell["b_hh"])
    return nn.mse_loss(nn.linear(params["out"], h), target)


def gpt_config(c, dtype=np.float32):
    return models.GPTConfig(vocab=VOCAB, d_model=c["d"], n_heads=c["heads"],
                            n_layers=c["layers"], max_len=c["context"], dtype=dtype)


def gpt_loss_fn(config):
    def gpt_loss(params, ids, targets):
        return models.token_loss(params, config, ids, targets)
    return gpt_loss


# --------------------------------------------------------------------------- workloads

def hand_step(params, grads_fn, make_opt):
    """A hand-NumPy step on a private copy of `params` (its `.params`), updated in place by
    the optimizer `make_opt(copy)` (`_hand.SGD` or `_hand.AdamW`)."""
    p = copy.deepcopy(params)
    opt = make_opt(p)

    def step():
        loss, grads = grads_fn(p)
        opt.update_(p, grads)
        return loss
    step.params = p
    return step


def torch_step_of(topt, loss_fn):
    """The usual PyTorch step: zero the gradients, loss, backward, optimizer step."""
    def step():
        topt.zero_grad(set_to_none=True)
        loss = loss_fn()
        loss.backward()
        topt.step()
        return loss
    return step

# Each returns a dict: label, the fnad loss and the hand-derived `hand_grads(params, *batch)`
# (checked against each other in tests/examples/test_bench_steps.py), the fnad step with its
# arguments, and the hand-NumPy, PyTorch and JAX steps as factories of no-argument callables
# (each on its own copy of the weights; the hand step's copy is its `.params`).

def mlp_workload(c, rng, dtype=np.float32):
    params = nn.init_mlp(random.PRNGKey(0), c["sizes"], dtype=dtype)
    x = rng.standard_normal((c["batch"], c["sizes"][0])).astype(dtype)
    labels = rng.integers(0, c["sizes"][-1], c["batch"])
    lr = 0.01
    opt = optim.sgd(lr)

    def hand():
        return hand_step(params, lambda p: _hand.mlp_grads(p, x, labels),
                         lambda p: _hand.SGD(p, lr))

    def torch_step(torch):
        F = torch.nn.functional
        layers = []
        for q in params:
            lin = torch.nn.Linear(*q["w"].shape)
            with torch.no_grad():
                lin.weight.copy_(torch.from_numpy(q["w"].T.copy()))
                lin.bias.copy_(torch.from_numpy(q["b"]))
            layers += [lin, torch.nn.ReLU()]
        model = torch.nn.Sequential(*layers[:-1])
        topt = torch.optim.SGD(model.parameters(), lr=lr)
        xt, yt = torch.from_numpy(x), torch.from_numpy(labels)
        return torch_step_of(topt, lambda: F.cross_entropy(model(xt), yt))

    sizes = "-".join(map(str, c["sizes"]))
    return dict(label=f"MLP {sizes}, batch {c['batch']}, SGD",
                loss=mlp_loss, hand_grads=_hand.mlp_grads, step=make_step(mlp_loss, opt),
                args=(params, opt.init(params), x, labels), hand=hand, torch=torch_step,
                jax=lambda jax: _jax_steps.mlp(jax, params, x, labels, lr))


def gpt_workload(c, rng, dtype=np.float32):
    config = gpt_config(c, dtype)
    params = models.init_gpt(random.PRNGKey(0), config)
    ids = rng.integers(0, VOCAB, (c["batch"], c["context"]))
    targets = rng.integers(0, VOCAB, (c["batch"], c["context"]))
    hp = dict(lr=1e-3, b1=0.9, b2=0.95, weight_decay=0.1)
    opt = optim.adamw(hp["lr"], b1=hp["b1"], b2=hp["b2"], weight_decay=hp["weight_decay"])

    def hand():
        return hand_step(params, lambda p: _hand.gpt_grads(p, config, ids, targets),
                         lambda p: _hand.AdamW(p, **hp))

    def torch_step(torch):
        tp = fnad.tree_map(lambda a: torch.tensor(a, requires_grad=True), params)
        topt = torch.optim.AdamW(fnad.tree_leaves(tp), lr=hp["lr"], betas=(hp["b1"], hp["b2"]),
                                 weight_decay=hp["weight_decay"])
        it, tt = torch.from_numpy(ids), torch.from_numpy(targets)
        return torch_step_of(topt, lambda: torch_gpt_loss(torch, tp, config, it, tt))

    return dict(label=f"GPT d {c['d']}, {c['heads']} heads, {c['layers']} layers, context "
                      f"{c['context']}, batch {c['batch']}, AdamW",
                loss=gpt_loss_fn(config),
                hand_grads=lambda p, i, t: _hand.gpt_grads(p, config, i, t),
                step=make_step(gpt_loss_fn(config), opt),
                args=(params, opt.init(params), ids, targets), hand=hand, torch=torch_step,
                jax=lambda jax: _jax_steps.gpt(jax, params, config, ids, targets, hp))


def torch_gpt_loss(torch, p, config, ids, targets):
    """The same GPT in PyTorch's functional ops (weights laid out as fnad's)."""
    F = torch.nn.functional
    b, t = ids.shape
    d, h, eps = config.d_model, config.n_heads, config.norm_eps

    def lin(x, w, bias):   # fnad's (in, out) or (H, Dh, out) weight as torch's (out, in)
        return F.linear(x, w.reshape(-1, w.shape[-1]).t(), bias)

    def ln(x, q):
        return F.layer_norm(x, (d,), q["scale"], q["bias"], eps)

    tok = p["tok"]["w"]
    x = F.embedding(ids, tok) + p["pos"]["w"][:t]
    for blk in p["blocks"]:
        a, hx = blk["attn"], ln(x, blk["norm1"])
        q, k, v = (F.linear(hx, a[n]["w"].reshape(d, d).t(), a[n]["b"].reshape(d))
                   .reshape(b, t, h, d // h).transpose(1, 2) for n in "qkv")
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + lin(o.transpose(1, 2).reshape(b, t, d), a["o"]["w"], a["o"]["b"])
        f = blk["ff"]
        x = x + lin(F.gelu(lin(ln(x, blk["norm2"]), f["fc1"]["w"], f["fc1"]["b"])),
                    f["fc2"]["w"], f["fc2"]["b"])
    logits = ln(x, p["norm"]) @ tok.t()
    return F.cross_entropy(logits.reshape(b * t, -1), targets.reshape(-1))


def rnn_workload(c, rng, dtype=np.float32):
    kr, ko = random.split(random.PRNGKey(0))
    params = {"rnn": nn.init_rnn(kr, c["d_in"], c["hidden"], dtype=dtype),
              "out": nn.init_linear(ko, c["hidden"], c["d_out"], dtype=dtype)}
    xs = rng.standard_normal((c["batch"], c["steps"], c["d_in"])).astype(dtype)
    target = rng.standard_normal((c["batch"], c["d_out"])).astype(dtype)
    lr = 1e-3
    opt = optim.adam(lr)

    def hand():
        return hand_step(params, lambda p: _hand.rnn_grads(p, xs, target),
                         lambda p: _hand.AdamW(p, lr))

    def torch_step(torch):
        cell, out = params["rnn"][0], params["out"]
        rnn = torch.nn.RNN(c["d_in"], c["hidden"], batch_first=True)
        head = torch.nn.Linear(c["hidden"], c["d_out"])
        with torch.no_grad():
            for name, a in [("weight_ih_l0", cell["w_ih"].T), ("weight_hh_l0", cell["w_hh"].T),
                            ("bias_ih_l0", cell["b_ih"]), ("bias_hh_l0", cell["b_hh"])]:
                getattr(rnn, name).copy_(torch.from_numpy(np.ascontiguousarray(a)))
            head.weight.copy_(torch.from_numpy(out["w"].T.copy()))
            head.bias.copy_(torch.from_numpy(out["b"]))
        topt = torch.optim.Adam(list(rnn.parameters()) + list(head.parameters()), lr=lr)
        xt, yt = torch.from_numpy(xs), torch.from_numpy(target)
        return torch_step_of(topt, lambda: torch.nn.functional.mse_loss(head(rnn(xt)[1][-1]),
                                                                        yt))

    return dict(label=f"tanh RNN {c['d_in']}->{c['hidden']}, {c['steps']} steps, batch "
                      f"{c['batch']}, Adam",
                loss=rnn_loss, hand_grads=_hand.rnn_grads, step=make_step(rnn_loss, opt),
                args=(params, opt.init(params), xs, target), hand=hand, torch=torch_step,
                jax=lambda jax: _jax_steps.rnn(jax, params, xs, target, lr))


def rnn_scan_workload(c, rng, dtype=np.float32):
    """`rnn` with fnad's loss written over `fnad.lax.scan` as users write it; the same peers."""
    w = rnn_workload(c, rng, dtype)
    opt = optim.adam(1e-3)
    params = w["args"][0]
    return dict(w, label=w["label"] + ", fnad as lax.scan(x_t @ W + h @ U)", loss=rnn_scan_loss,
                step=make_step(rnn_scan_loss, opt), args=(params, opt.init(params)) + w["args"][2:])


def rnn_loop_workload(c, rng, dtype=np.float32):
    """`rnn` with fnad's loss and the jax peer's written as a Python loop over time."""
    w = rnn_workload(c, rng, dtype)
    opt = optim.adam(1e-3)
    params, _, xs, target = w["args"]
    return dict(w, label=w["label"] + ", fnad and jax as a Python loop over time",
                loss=rnn_loop_loss, step=make_step(rnn_loop_loss, opt),
                args=(params, opt.init(params), xs, target),
                jax=lambda jax: _jax_steps.rnn(jax, params, xs, target, 1e-3, loop=True))


def plain_gpt_workload(c, rng, dtype=np.float32):
    params = _plain_gpt.init(VOCAB, c["d"], c["layers"], c["context"], dtype)
    ids = rng.integers(0, VOCAB, (c["batch"], c["context"]))
    targets = rng.integers(0, VOCAB, (c["batch"], c["context"]))
    lr, heads = 1e-3, c["heads"]
    opt = optim.adam(lr)

    def loss(p, ids, targets):
        return _plain_gpt.loss(fnad.numpy, fnad.numpy.logsumexp, p, ids, targets, heads)

    def torch_step(torch):
        tp = fnad.tree_map(lambda a: torch.tensor(a, requires_grad=True), params)
        topt = torch.optim.Adam(fnad.tree_leaves(tp), lr=lr)
        it, tt = torch.from_numpy(ids), torch.from_numpy(targets)
        return torch_step_of(topt, lambda: _plain_gpt.torch_loss(torch, tp, it, tt, heads))

    return dict(label=f"GPT from plain array ops, d {c['d']}, {heads} heads, {c['layers']} "
                      f"layers, context {c['context']}, batch {c['batch']}, Adam",
                loss=loss, hand_grads=None, step=make_step(loss, opt),
                args=(params, opt.init(params), ids, targets), hand=None, torch=torch_step,
                jax=lambda jax: _plain_gpt.jax_step(jax, _jax_steps.adamw, _jax_steps._runner,
                                                    params, ids, targets, heads, lr))


WORKLOADS = {"mlp": mlp_workload, "gpt": gpt_workload, "plain_gpt": plain_gpt_workload,
             "rnn": rnn_workload, "rnn_scan": rnn_scan_workload, "rnn_loop": rnn_loop_workload}


# --------------------------------------------------------------------------- running

COLS = ["numpy", "fnad", "jit", "fast", "torch", "compile", "jax"]
HEAD = ["hand NumPy", "fnad eager", "fnad jit", "fnad jit fast math", "PyTorch eager",
        "torch.compile", "jax.jit"]
LABEL = dict(zip(COLS, HEAD))
FIRST_CALL = ["jit", "fast", "compile", "jax"]   # compiled on their first call: reported alone


def _loss(value):
    return float(value.detach()) if hasattr(value, "detach") else float(value)


def columns(args, torch, jax):
    """The implementations this run measures, in COLS order."""
    has_jit = not args.no_jit and hasattr(fnad, "jit")
    on = {"numpy": True, "fnad": True, "jit": has_jit, "fast": has_jit and not args.no_fast,
          "torch": torch is not None, "compile": torch is not None and not args.no_compile,
          "jax": jax is not None}
    return [k for k in COLS if on[k]]


def factory(w, key, torch, jax):
    """A maker of the no-argument callable that runs one step of implementation `key` on its
    own copy of the weights and returns the loss (fnad jit's also has `.plan()`, the
    memory plan of its optimised program)."""
    step, sargs = w["step"], w["args"]

    def jit(fast_math=False):
        jstep = fnad.jit(step, fast_math=fast_math)
        f = lambda: jstep(*sargs)[2]
        f.plan = lambda: jstep.graph(*sargs).memory_plan()
        return f

    return {"numpy": w["hand"], "fnad": lambda: lambda: step(*sargs)[2], "jit": jit,
            "fast": lambda: jit(fast_math=True),
            "torch": lambda: w["torch"](torch),
            "compile": lambda: torch.compile(w["torch"](torch)),
            "jax": lambda: w["jax"](jax)}[key]


def _why(e):
    first = (str(e).strip().splitlines() or [""])[0]
    return f"{type(e).__name__}: {first[:200]}"


def start(name, w, keys, torch, jax):
    """Build each implementation and make its first call: (callables, first losses, first-call
    seconds of FIRST_CALL's, notes on those that failed, which are left out)."""
    fns, losses, first_s, notes = {}, {}, {}, []
    for k in keys:
        try:
            f = factory(w, k, torch, jax)()
            t0 = time.perf_counter()
            losses[k] = _loss(f())
            if k in FIRST_CALL:
                first_s[k] = time.perf_counter() - t0
            fns[k] = f
        except Exception as e:   # a compiler's failure: report it, and time the rest
            if k not in FIRST_CALL:
                raise
            notes.append(f"{LABEL[k]} failed on the {name} step ({_why(e)}): column n/a")
    return fns, losses, first_s, notes


def measure(name, c, args, torch, jax):
    """Median seconds per step of each implementation (absent where not run), first-call
    seconds of the compiled ones, and the first losses (checked to agree)."""
    w = WORKLOADS[name](c, np.random.default_rng(0))
    keys = [k for k in columns(args, torch, jax) if k != "numpy" or w["hand"] is not None]
    fns, losses, first_s, notes = start(name, w, keys, torch, jax)
    ref = losses.get("numpy", losses["fnad"])
    for k, v in losses.items():
        if not abs(v - ref) <= 1e-4 * max(1.0, abs(ref)):
            raise SystemExit(f"steps.py: the {name} step's first loss differs: {losses}")
    reps = args.repeats or c["repeats"]
    med = median_times(fns, reps, rounds=1 if args.quick else 3, pause=0 if args.quick else 0.3)
    return dict(name=name, label=w["label"], med=med, first_s=first_s, notes=notes,
                losses=losses, repeats=reps, keys=keys)


def _ms(row, k):
    v = row["med"].get(k)
    return "n/a" if v is None else f"{v * 1e3:.2f}"


def _ratio(row, k, to="numpy"):
    v, r = row["med"].get(k), row["med"].get(to)
    return "n/a" if v is None or r is None else f"{v / r:.2f}"


def print_table(rows, markdown, jax_ref):
    """The table; `jax_ref`: add issue 12's jax.jit / NumPy column (jax not measured)."""
    cells = [[r["label"]] + [_ms(r, k) for k in COLS] + [_ratio(r, k) for k in COLS[1:]]
             + ([f"{JAX_RATIO[r['name']]:.2f}" if r["name"] in JAX_RATIO else "n/a"]
                if jax_ref else []) for r in rows]
    head = (["step (median ms)"] + HEAD + [f"{h} / NumPy" for h in HEAD[1:]]
            + (["jax.jit / NumPy (issue 12)"] if jax_ref else []))
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|---" + "|---:" * (len(head) - 1) + "|")
        for c in cells:
            print("| " + " | ".join(c) + " |")
        return
    print_text_table(head, cells)


def print_text_table(head, cells, left=(0,)):
    """Columns padded to their widest cell; those in `left` flush left, the rest right."""
    widths = [max(len(x[i]) for x in cells + [head]) for i in range(len(head))]
    for c in [head] + cells:
        print("  ".join(x.ljust(widths[i]) if i in left else x.rjust(widths[i])
                        for i, x in enumerate(c)).rstrip())


# issue 30's goals: (column, peer, the most column / peer may be) per workload
ISSUE30_GOALS = {"plain_gpt": (("jit", "jax", 1.0), ("fast", "torch", 0.9)),
                 "gpt": (("jit", "torch", 0.9),), "mlp": (("jit", "jax", 1.0),),
                 "rnn": (("jit", "jax", 1.0),), "rnn_loop": (("jit", "jax", 1.0),),
                 "rnn_scan": (("jit", "jax", 1.0),)}


def print_notes(r, jax_ref):
    """The `#` lines under the table for one workload: losses, first calls, failures, ratios
    and the jit goal."""
    n, med = r["name"], r["med"]
    print(f"# {n}: {r['repeats']} timed calls per library; first losses "
          + ", ".join(f"{k} {v:.6f}" for k, v in r["losses"].items()))
    if r["first_s"]:
        print(f"# {n}: first call (trace + compile) "
              + ", ".join(f"{LABEL[k]} {v:.2f} s" for k, v in r["first_s"].items()))
    for note in r["notes"]:
        print(f"# {n}: {note}")
    print(f"# {n}: jit / torch eager {_ratio(r, 'jit', 'torch')}, jit / torch.compile "
          f"{_ratio(r, 'jit', 'compile')}, jit / jax.jit {_ratio(r, 'jit', 'jax')}, "
          f"eager / torch eager {_ratio(r, 'fnad', 'torch')}")
    if "fast" in med:
        print(f"# {n}: jit fast math / torch eager {_ratio(r, 'fast', 'torch')}, "
              f"jit fast math / jax.jit {_ratio(r, 'fast', 'jax')}")
    for column, peer, bar in ISSUE30_GOALS.get(n, ()):
        if column in med and peer in med:
            ratio = med[column] / med[peer]
            print(f"# {n}: issue 30's goal ({LABEL[column]} <= {bar:.2f} x {LABEL[peer]}): "
                  f"{ratio:.2f}, {'met' if ratio <= bar else 'not met'}")
    jit, tr, jx = med.get("jit"), med.get("torch"), med.get("jax")
    if jit is None:
        return
    if jax_ref and n not in JAX_RATIO:   # no hand baseline, jax not measured
        print(f"# {n}: issue 12's goal (jit <= jax.jit): n/a, jax is not installed")
        return
    if jax_ref:
        bar = JAX_RATIO[n]
        goal = tr is not None and jit <= tr and jit / med["numpy"] <= bar
        what = f"jit <= PyTorch eager and jit/NumPy <= {bar:.2f} (issue 12's jax.jit)"
    else:
        goal = tr is not None and jx is not None and jit <= tr and jit <= jx
        what = "jit <= PyTorch eager and jit <= jax.jit"
    print(f"# {n}: issue 12's goal ({what}): {'met' if goal else 'not met'}")


# --------------------------------------------------------------------------- memory

RSS_STEPS = 3   # steps whose peak RSS --memory records (after one warm-up call)


def measure_rss_child(impl, name, args, torch, jax):
    """`--measure-rss IMPL WORKLOAD`: in this fresh process, build `impl`'s step, call it
    once, then report the RSS before RSS_STEPS further steps and its peak during them (one
    JSON line; fnad jit adds its memory plan's peak and input bytes)."""
    c = (QUICK if args.quick else FULL)[name]
    w = WORKLOADS[name](c, np.random.default_rng(0))
    f = factory(w, impl, torch, jax)()
    f()
    out = _rss.peak_of(f, args.repeats or RSS_STEPS)
    if hasattr(f, "plan"):
        plan = f.plan()
        out["plan_mib"] = plan.peak / 2**20
        out["plan_inputs_mib"] = sum(v.aval.size * v.aval.dtype.itemsize
                                     for v in plan.graph.invars) / 2**20
    _rss.emit(out)


def print_memory(name, label, keys, args):
    """Each implementation's peak RSS over its setup RSS, each measured in a fresh process,
    and fnad jit's memory plan beside it."""
    extra = ["--threads", str(args.threads)] + (["--quick"] if args.quick else [])
    extra += ["--repeats", str(args.repeats)] if args.repeats else []
    print(f"# {name} memory ({label}): each implementation in a fresh process: RSS after "
          f"setup and one step, then its peak over {args.repeats or RSS_STEPS} more steps; MiB; "
          "plan: fnad.jit's memory plan, peak of intermediates (inputs)")
    head = ["implementation", "setup RSS", "peak RSS", "peak - setup", "plan"]
    cells = []
    for k in keys:
        r = _rss.in_child(os.path.abspath(__file__), k, name, extra)
        if "error" in r:
            cells.append([LABEL[k], "n/a", "n/a", "n/a", r["error"]])
            continue
        plan = (f"{r['plan_mib']:.2f} ({r['plan_inputs_mib']:.2f})" if "plan_mib" in r
                else "")
        peak = f"{r['peak_mib']:.1f}" + ("" if r["exact"] else " (ru_maxrss)")
        cells.append([LABEL[k], f"{r['setup_mib']:.1f}", peak,
                      f"{r['peak_mib'] - r['setup_mib']:.1f}", plan])
    print_text_table(head, cells, left=(0, 4))


# --------------------------------------------------------------------------- main

def _import_torch(args):
    if args.no_torch:
        return None
    try:
        import torch
    except ImportError:
        print("# PyTorch is not installed: its columns are n/a")
        return None
    torch.set_num_threads(args.threads)
    return torch


def _import_jax(args):
    if args.no_jax:
        return None
    try:
        import jax
    except ImportError:
        print("# jax is not installed (pip install fnad[bench]): its column is n/a")
        return None
    return jax


def parse(argv):
    ap = argparse.ArgumentParser(prog="python benchmarks/steps.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="mlp,gpt,plain_gpt,rnn",
                    help="comma-separated workloads")
    ap.add_argument("--repeats", type=int, default=None, help="timed calls per library")
    ap.add_argument("--threads", type=int, default=2, help="BLAS and torch threads")
    ap.add_argument("--no-jit", action="store_true", help="leave out the fnad.jit columns")
    ap.add_argument("--no-fast", action="store_true",
                    help="leave out fnad.jit(step, fast_math=True)")
    ap.add_argument("--no-torch", action="store_true", help="leave out PyTorch")
    ap.add_argument("--no-compile", action="store_true", help="leave out torch.compile")
    ap.add_argument("--no-jax", action="store_true", help="leave out jax.jit")
    ap.add_argument("--memory", action="store_true",
                    help="also report each step's peak memory (a fresh process each)")
    ap.add_argument("--markdown", action="store_true", help="print a table for the docs")
    ap.add_argument("--quick", action="store_true", help="small sizes, few repeats (smoke)")
    ap.add_argument("--measure-rss", nargs=2, metavar=("IMPL", "WORKLOAD"),
                    help=argparse.SUPPRESS)   # --memory's child process
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    bad = [n for n in names if n not in WORKLOADS]
    if bad:
        ap.error(f"--only: unknown workload(s) {bad}; choose from {sorted(WORKLOADS)}")
    return args, names


def main(argv=None):
    args, names = parse(argv)
    if args.measure_rss:
        impl, name = args.measure_rss
        return measure_rss_child(impl, name, args, _import_torch(args) if impl in
                                 ("torch", "compile") else None,
                                 _import_jax(args) if impl == "jax" else None)
    torch, jax = _import_torch(args), _import_jax(args)
    sizes = QUICK if args.quick else FULL
    print(f"# benchmarks/steps.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"{os.cpu_count()} CPUs, {args.threads} threads, load average "
          f"{os.getloadavg()[0]:.1f}, NumPy {np.__version__}"
          + (f", torch {torch.__version__}" if torch is not None else "")
          + (f", jax {jax.__version__} (XLA's own thread pool: --threads does not limit it)"
             if jax is not None else "")
          + (", fnad.jit present" if hasattr(fnad, "jit") else ", no fnad.jit (column n/a)")
          + (" -- QUICK: small sizes, not for the record" if args.quick else ""))
    rows = []
    for n in names:
        rows.append(measure(n, sizes[n], args, torch, jax))
        print(f"# {n} measured: " + ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in
                                             rows[-1]["med"].items()), file=sys.stderr)
    jax_ref = jax is None
    print_table(rows, args.markdown, jax_ref)
    for r in rows:
        print_notes(r, jax_ref)
    if args.memory:
        for r in rows:
            print_memory(r["name"], r["label"], r["keys"], args)
    return rows


if __name__ == "__main__":
    main()
