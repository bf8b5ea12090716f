"""Generation speed: tokens per second with and without the KV cache, fnad_nn.models vs a
PyTorch eager GPT of the same shape with its own KV cache (CPU, float32, 2 threads by
default: --threads N sets BLAS and torch threads alike).

Workload: GPT with 4 layers, d_model 128, 4 heads, feed-forward 512 (GELU), learned
positions, vocab 65, tied head; a 16-token prompt, 256 new tokens, greedy, batch 1 and 16.
The PyTorch model has the same weights and caches keys/values by concatenation (the usual
eager implementation); both also run without a cache (the whole prefix each step). Prints
median seconds (the long no-cache runs: once each), tokens/s (new tokens x batch / time)
and the ratios: cache speed-up (goal >= 5x) and fnad / torch time with the cache (goal
<= 1.5).

Run: python benchmarks/generate.py [--repeats N] [--threads N] [--new N]
"""

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_times, threads_from_argv

THREADS = threads_from_argv()

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import fnad  # noqa: E402
from fnad_nn import models  # noqa: E402

torch.set_num_threads(THREADS)
PROMPT = 16


class TorchGPT:
    """The fnad GPT's computation in torch eager, weights copied, with a KV cache."""

    def __init__(self, params, config):
        t = lambda a: torch.tensor(np.array(a))
        self.c = config
        self.tok, self.pos = t(params["tok"]["w"]), t(params["pos"]["w"])
        self.blocks = []
        for p in params["blocks"]:
            a, f = p["attn"], p["ff"]
            d = config.d_model
            self.blocks.append(dict(
                ln1=(t(p["norm1"]["scale"]), t(p["norm1"]["bias"])),
                ln2=(t(p["norm2"]["scale"]), t(p["norm2"]["bias"])),
                qkv_w=torch.cat([t(a[k]["w"]).reshape(d, d) for k in "qkv"], 1),
                qkv_b=torch.cat([t(a[k]["b"]).reshape(d) for k in "qkv"]),
                o_w=t(a["o"]["w"]).reshape(d, d), o_b=t(a["o"]["b"]),
                fc1=(t(f["fc1"]["w"]), t(f["fc1"]["b"])), fc2=(t(f["fc2"]["w"]), t(f["fc2"]["b"]))))
        self.ln = (t(params["norm"]["scale"]), t(params["norm"]["bias"]))

    def __call__(self, ids, cache=None):
        b, n = ids.shape
        h_, d = self.c.n_heads, self.c.d_model
        off = 0 if cache is None else cache[0][0].shape[2]
        x = self.tok[ids] + self.pos[off:off + n]
        new = []
        for i, p in enumerate(self.blocks):
            z = F.layer_norm(x, (d,), *p["ln1"])
            q, k, v = torch.addmm(p["qkv_b"], z.reshape(-1, d), p["qkv_w"]).view(
                b, n, 3, h_, d // h_).permute(2, 0, 3, 1, 4)
            if cache is not None:
                k, v = torch.cat([cache[i][0], k], 2), torch.cat([cache[i][1], v], 2)
                new.append((k, v))
            o = F.scaled_dot_product_attention(q, k, v, is_causal=n > 1)
            x = x + (o.transpose(1, 2).reshape(b, n, d) @ p["o_w"] + p["o_b"])
            z = F.layer_norm(x, (d,), *p["ln2"])
            x = x + F.linear(F.gelu(z @ p["fc1"][0] + p["fc1"][1]), p["fc2"][0].T, p["fc2"][1])
        logits = F.layer_norm(x[:, -1], (d,), *self.ln) @ self.tok.T
        return logits, (new if cache is not None else None)

    def generate(self, prompt, max_new, use_cache=True):
        with torch.inference_mode():
            ids = torch.tensor(prompt)
            shape = (ids.shape[0], self.c.n_heads, 0, self.c.d_model // self.c.n_heads)
            cache = ([(torch.zeros(shape), torch.zeros(shape))] * self.c.n_layers
                     if use_cache else None)
            logits, cache = self(ids, cache)
            out = [ids]
            for i in range(max_new):
                nxt = logits.argmax(-1, keepdim=True)
                out.append(nxt)
                if i + 1 < max_new:
                    seq = nxt if use_cache else torch.cat(out, 1)
                    logits, cache = self(seq, cache)
            return torch.cat(out, 1).numpy()


def _once(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=THREADS)
    ap.add_argument("--new", type=int, default=256)
    args = ap.parse_args()
    config = models.GPTConfig(vocab=65, d_model=128, n_heads=4, n_layers=4, d_ff=512,
                              max_len=PROMPT + args.new, positions="learned",
                              activation="gelu", dtype=np.float32)
    params = models.init_gpt(fnad.random.PRNGKey(0), config)
    tgpt = TorchGPT(params, config)
    print(f"GPT 4 layers, d_model 128, {PROMPT}-token prompt, {args.new} new tokens, greedy, "
          f"float32, {THREADS} threads; cached: median of {args.repeats} runs, "
          "no cache: one run")
    print(f"{'batch':>5} {'mode':>9} {'fnad s':>8} {'torch s':>8} {'fnad tok/s':>11} "
          f"{'torch tok/s':>11} {'fnad/torch':>10}")
    for batch in (1, 16):
        prompt = np.random.default_rng(batch).integers(0, 65, (batch, PROMPT))
        a = models.generate(params, config, prompt, max_new=args.new, temperature=0)
        same = np.mean(a == tgpt.generate(prompt, args.new))
        med = {}
        for cached in (True, False):
            fns = {"fnad": lambda: models.generate(params, config, prompt, max_new=args.new,
                                                   temperature=0, use_cache=cached),
                   "torch": lambda: tgpt.generate(prompt, args.new, use_cache=cached)}
            if cached:
                m = median_times(fns, repeats=args.repeats, rounds=args.repeats, pause=0.2)
            else:  # long: one timed run each (the cached runs warmed everything up)
                m = {k: _once(f) for k, f in fns.items()}
            med[cached] = m
            mode = "cache" if cached else "no cache"
            ntok = batch * args.new
            print(f"{batch:>5} {mode:>9} {m['fnad']:8.3f} {m['torch']:8.3f} "
                  f"{ntok / m['fnad']:11.0f} {ntok / m['torch']:11.0f} "
                  f"{m['fnad'] / m['torch']:10.2f}")
        print(f"      cache speed-up: fnad {med[False]['fnad'] / med[True]['fnad']:.1f}x, "
              f"torch {med[False]['torch'] / med[True]['torch']:.1f}x; greedy tokens equal to "
              f"torch's: {same:.1%}")
    assert math.isfinite(float(a.sum()))


if __name__ == "__main__":
    main()
