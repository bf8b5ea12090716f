"""Training-run parity: an fnad GPT (or Seq2Seq) and an identical PyTorch model, float64.

    FNAD_DATA_DIR=/path/to/data python examples/parity_gpt.py            # GPT, 300 steps
    python examples/parity_gpt.py --model seq2seq --data input.txt       # Seq2Seq, 100 steps

Both models start from the same weights (the fnad init, copied into torch tensors), see the
same TinyShakespeare character batches and train with AdamW under a warmup + cosine schedule
and global-norm gradient clipping. The PyTorch model is written here with torch ops in the
same layout as the fnad params (torch is the oracle; fnad never imports it). The script
writes docs/parity_<model>.csv (per-step losses and their difference) and
docs/parity_<model>.png, and fails unless the largest difference is at most 1e-12.

Clipping: torch's `clip_grad_norm_` scales by `max_norm / (norm + 1e-6)`, optax (and
fnad_optim) by `max_norm / max(norm, max_norm)`; the torch side applies the latter formula
by hand, so both runs compute the same function.
"""

import argparse
import csv
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import fnad
import fnad_nn as nn
import fnad_optim as optim
from fnad_nn import models

# ----------------------------------------------------------------------------- torch models


def _t_norm(kind, p, x, eps):
    if kind == "layer":
        return F.layer_norm(x, x.shape[-1:], p["scale"], p.get("bias"), eps)
    return x * (1.0 / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)) * p["scale"]


def _t_heads(p, x):
    y = torch.einsum("btd,dhe->bhte", x, p["w"])
    return y + p["b"][:, None, :] if "b" in p else y


def _t_rope(x, tables, offset):
    t, half = x.shape[-2], x.shape[-1] // 2
    cos, sin = tables["cos"][offset:offset + t], tables["sin"][offset:offset + t]
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin


def _t_mha(p, x, ctx=None, *, keep=None, causal=False, rope_q=None, rope_k=None):
    src = x if ctx is None else ctx
    q, k, v = _t_heads(p["q"], x), _t_heads(p["k"], src), _t_heads(p["v"], src)
    if rope_q is not None:
        q = _t_rope(q, rope_q, 0)
    if rope_k is not None:
        k = _t_rope(k, rope_k, 0)
    s = q @ k.transpose(-1, -2) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        tri = torch.ones(s.shape[-2:], dtype=torch.bool).tril()
        keep = tri if keep is None else keep & tri
    if keep is not None:
        s = s.masked_fill(~keep, float("-inf"))
    o = torch.softmax(s, -1) @ v
    y = torch.einsum("bhte,hed->btd", o, p["o"]["w"])
    return y + p["o"]["b"] if "b" in p["o"] else y


_T_ACT = {"relu": F.relu, "gelu": F.gelu, "silu": F.silu,
          "gelu_tanh": lambda x: F.gelu(x, approximate="tanh")}


def _t_linear(p, x):
    return x @ p["w"] + p["b"] if "b" in p else x @ p["w"]


def _t_ff(p, x, act):
    h = _t_linear(p["fc1"], x)
    h = F.silu(_t_linear(p["gate"], x)) * h if act == "swiglu" else _T_ACT[act](h)
    return _t_linear(p["fc2"], h)


def _t_tables(c, d_model):
    rope = nn.rotary_tables(c.max_len, d_model // c.n_heads, base=c.rope_base,
                            scale=c.rope_scale, dtype=np.float64)
    return ({k: torch.tensor(v) for k, v in rope.items()},
            torch.tensor(nn.sinusoidal_positional_encoding(c.max_len, d_model, dtype=np.float64)))


def torch_gpt(tp, c, x):
    """The same GPT as `fnad_nn.models.gpt`, in torch (dropout off)."""
    t = x.shape[1]
    rope, sin = _t_tables(c, c.d_model)
    h = tp["tok"]["w"][x]
    if c.positions == "learned":
        h = h + tp["pos"]["w"][:t]
    elif c.positions == "sinusoidal":
        h = h + sin[:t]
    r = rope if c.positions == "rotary" else None
    for p in tp["blocks"]:
        h = h + _t_mha(p["attn"], _t_norm(c.norm, p["norm1"], h, c.norm_eps), causal=True,
                       rope_q=r, rope_k=r)
        h = h + _t_ff(p["ff"], _t_norm(c.norm, p["norm2"], h, c.norm_eps), c.activation)
    h = _t_norm(c.norm, tp["norm"], h, c.norm_eps)
    return h @ tp["tok"]["w"].T if c.tie_embeddings else _t_linear(tp["head"], h)


def _t_embed(tp, c, ids, side):
    tok = tp["tok"] if c.shared_tok else tp[side + "_tok"]
    h = tok["w"][ids] * (math.sqrt(c.d_model) if c.shared_tok else 1.0)
    if c.positions == "learned":
        h = h + tp[side + "_pos"]["w"][:ids.shape[1]]
    elif c.positions == "sinusoidal":
        h = h + _t_tables(c, c.d_model)[1][:ids.shape[1]]
    return h


def torch_seq2seq(tp, c, src, tgt_in):
    """The same encoder-decoder as `fnad_nn.models.seq2seq`, in torch (dropout off)."""
    rope = _t_tables(c, c.d_model)[0]
    on = {k: rope if getattr(c, k) else None
          for k in ("rope_encoder", "rope_decoder", "rope_cross_q", "rope_cross_k")}
    keep = (src != c.pad_id)[:, None, None, :]
    h = _t_embed(tp, c, src, "src")
    for p in tp["enc"]:
        a = _t_norm(c.norm, p["norm1"], h, c.norm_eps)
        h = h + _t_mha(p["attn"], a, keep=keep, rope_q=on["rope_encoder"],
                       rope_k=on["rope_encoder"])
        h = h + _t_ff(p["ff"], _t_norm(c.norm, p["norm2"], h, c.norm_eps), c.activation)
    mem = _t_norm(c.norm, tp["enc_norm"], h, c.norm_eps)
    h = _t_embed(tp, c, tgt_in, "tgt")
    for p in tp["dec"]:
        a = _t_norm(c.norm, p["norm1"], h, c.norm_eps)
        h = h + _t_mha(p["self_attn"], a, causal=True, rope_q=on["rope_decoder"],
                       rope_k=on["rope_decoder"])
        a = _t_norm(c.norm, p["norm2"], h, c.norm_eps)
        h = h + _t_mha(p["cross_attn"], a, mem, keep=keep, rope_q=on["rope_cross_q"],
                       rope_k=on["rope_cross_k"])
        h = h + _t_ff(p["ff"], _t_norm(c.norm, p["norm3"], h, c.norm_eps), c.activation)
    h = _t_norm(c.norm, tp["dec_norm"], h, c.norm_eps)
    if c.shared_tok:
        return h @ tp["tok"]["w"].T + tp["out_b"]
    return _t_linear(tp["head"], h)


# ----------------------------------------------------------------------------- data

PAD, BOS, EOS = 0, 1, 2


def read_chars(path):
    """Character ids of a text file (vocabulary: its sorted characters)."""
    if not path or not os.path.exists(path):
        raise SystemExit(f"parity_gpt: no text at {path!r}; pass --data path/to/input.txt or set "
                         "FNAD_DATA_DIR to a folder with tinyshakespeare/input.txt.")
    text = open(path, encoding="utf-8").read()
    chars = sorted(set(text))
    lookup = {ch: i for i, ch in enumerate(chars)}
    return np.array([lookup[ch] for ch in text], np.int64), len(chars)


def lm_batch(rng, data, batch, seq_len):
    ix = rng.integers(0, len(data) - seq_len - 1, size=batch)
    x = np.stack([data[i:i + seq_len] for i in ix])
    return x, np.stack([data[i + 1:i + seq_len + 1] for i in ix])


def reverse_batch(rng, data, batch, max_src):
    """Source: a text chunk of 4..max_src characters (ids + 3, padded with PAD); target: the
    chunk reversed, then EOS. Returns (src, tgt_in, tgt_out)."""
    src = np.full((batch, max_src), PAD, np.int64)
    tgt = np.full((batch, max_src + 2), PAD, np.int64)
    for b in range(batch):
        n = int(rng.integers(4, max_src + 1))
        i = int(rng.integers(0, len(data) - n))
        chunk = data[i:i + n] + 3
        src[b, :n] = chunk
        tgt[b, 0], tgt[b, 1:n + 1], tgt[b, n + 1] = BOS, chunk[::-1], EOS
    return src, tgt[:, :-1], tgt[:, 1:]


# ----------------------------------------------------------------------------- the run


def run(kind, config, data, *, steps, batch, seq_len, lr=3e-3, warmup=20, clip=1.0,
        weight_decay=0.1, seed=0, log_every=0):
    """Train the fnad and torch models side by side; returns per-step (lr, fnad, torch)."""
    params = (models.init_gpt if kind == "gpt" else models.init_seq2seq)(
        fnad.random.PRNGKey(seed), config)
    tparams = fnad.tree_map(lambda a: torch.tensor(np.array(a), requires_grad=True), params)
    warmup = min(warmup, steps // 4)
    sched = optim.warmup_cosine_decay_schedule(0.0, lr, warmup, steps, end_value=lr / 10)
    opt = optim.chain(optim.clip_by_global_norm(clip),
                      optim.adamw(sched, b1=0.9, b2=0.95, eps=1e-8, weight_decay=weight_decay))
    state = opt.init(params)
    leaves = fnad.tree_leaves(tparams)
    topt = torch.optim.AdamW(leaves, lr=1.0, betas=(0.9, 0.95), eps=1e-8,
                             weight_decay=weight_decay, foreach=False)
    tsched = torch.optim.lr_scheduler.LambdaLR(topt, lambda s: float(sched(s)))
    ignore = PAD if kind == "seq2seq" else None

    def loss_fn(p, inputs, targets):
        return models.token_loss(p, config, inputs, targets, ignore_index=ignore)

    grad_fn = fnad.value_and_grad(loss_fn)
    rng = np.random.default_rng(seed)
    rows = []
    for step in range(steps):
        if kind == "gpt":
            x, y = lm_batch(rng, data, batch, seq_len)
            inputs, t_logits = x, lambda: torch_gpt(tparams, config, torch.tensor(x))
        else:
            src, x, y = reverse_batch(rng, data, batch, seq_len)
            inputs = (src, x)
            t_logits = lambda: torch_seq2seq(tparams, config, torch.tensor(src),  # noqa: E731
                                             torch.tensor(x))
        loss, grads = grad_fn(params, inputs, y)
        updates, state = opt.update(grads, state, params)
        params = optim.apply_updates(params, updates)

        lr_now = topt.param_groups[0]["lr"]
        topt.zero_grad()
        logits = t_logits()
        tl = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.tensor(y).reshape(-1),
                             ignore_index=-100 if ignore is None else ignore)
        tl.backward()
        with torch.no_grad():
            norm = torch.sqrt(sum((g.grad * g.grad).sum() for g in leaves))
            factor = clip / torch.clamp(norm, min=clip)
            for g in leaves:
                g.grad.mul_(factor)
        topt.step()
        tsched.step()
        rows.append((lr_now, float(loss), tl.item()))
        if log_every and step % log_every == 0:
            print(f"step {step:4d}  lr {lr_now:.2e}  fnad {float(loss):.15f}  "
                  f"torch {float(tl):.15f}  diff {abs(float(loss) - float(tl)):.2e}", flush=True)
    return rows


def gpt_config(vocab, seq_len):
    return models.GPTConfig(vocab=vocab, d_model=64, n_heads=4, n_layers=4, max_len=seq_len,
                            positions="learned", norm="layer", activation="gelu",
                            dtype=np.float64)


def seq2seq_config(vocab, seq_len):
    return models.Seq2SeqConfig(src_vocab=vocab + 3, tgt_vocab=vocab + 3, d_model=64, n_heads=4,
                                n_enc_layers=2, n_dec_layers=2, max_len=seq_len + 1,
                                pad_id=PAD, shared_tok=True, positions="sinusoidal",
                                rope_encoder=True, rope_decoder=True, dtype=np.float64)


def write_outputs(rows, stem):
    with open(stem + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", "lr", "loss_fnad", "loss_torch", "abs_diff"])
        for i, (lr, a, b) in enumerate(rows):
            w.writerow([i, f"{lr:.17g}", f"{a:.17g}", f"{b:.17g}", f"{abs(a - b):.3e}"])
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    steps = np.arange(len(rows))
    a, b = np.array([r[1] for r in rows]), np.array([r[2] for r in rows])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    ax1.plot(steps, a, label="fnad", lw=2)
    ax1.plot(steps, b, "--", label="PyTorch", lw=1.5)
    ax1.set(xlabel="step", ylabel="training loss (nats/token)", title="loss, float64")
    ax1.legend()
    ax2.plot(steps, np.abs(a - b), ".", ms=3)
    ax2.set(xlabel="step", ylabel="|fnad - PyTorch|",
            title=f"difference (max {np.abs(a - b).max():.2e})")
    ax2.set_ylim(0, max(np.abs(a - b).max() * 1.2, 1e-16))
    fig.tight_layout()
    fig.savefig(stem + ".png", dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=("gpt", "seq2seq"), default="gpt")
    ap.add_argument("--data", default=None, help="text file (default: "
                    "$FNAD_DATA_DIR/tinyshakespeare/input.txt)")
    ap.add_argument("--steps", type=int, default=None, help="default 300 (gpt), 100 (seq2seq)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "docs"))
    args = ap.parse_args(argv)
    path = args.data or os.path.join(os.environ.get("FNAD_DATA_DIR", ""),
                                     "tinyshakespeare", "input.txt")
    data, vocab = read_chars(path)
    torch.set_num_threads(1)
    if args.model == "gpt":
        steps, seq_len, batch = args.steps or 300, 64, 16
        config = gpt_config(vocab, seq_len)
    else:
        steps, seq_len, batch = args.steps or 100, 24, 16
        config = seq2seq_config(vocab, seq_len)
    print(config)
    t0 = time.perf_counter()
    rows = run(args.model, config, data, steps=steps, batch=batch, seq_len=seq_len,
               log_every=max(steps // 10, 1))
    diff = max(abs(a - b) for _, a, b in rows)
    stem = os.path.join(args.out, f"parity_{args.model}")
    write_outputs(rows, stem)
    print(f"{steps} steps in {time.perf_counter() - t0:.0f} s; loss {rows[0][1]:.4f} -> "
          f"{rows[-1][1]:.4f}; max |fnad - torch| = {diff:.3e}; wrote {stem}.csv/.png")
    if not diff <= 1e-12:
        sys.exit(f"parity_gpt: max divergence {diff:.3e} > 1e-12")


if __name__ == "__main__":
    main()
