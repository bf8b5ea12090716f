"""Hand-written NumPy training steps for benchmarks/steps.py: forward pass, hand-derived
backward pass and an in-place optimizer update, in the dtype of the params (float32 in the
benchmark, float64 in the tests that check these gradients against `fnad.grad`).

The params are the same pytrees the fnad_nn models use (`init_mlp`, `init_gpt`, `init_rnn`
plus a linear readout), so one set of weights serves every implementation. Only NumPy (and
`scipy.special.erf` for the exact GELU) is used here.
"""

import math

import numpy as np
from scipy.special import erf


def leaves(tree):
    """The arrays of a dict/list tree in fnad's order (dict keys sorted)."""
    if isinstance(tree, dict):
        return [a for k in sorted(tree) for a in leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [a for t in tree for a in leaves(t)]
    return [tree]


# --------------------------------------------------------------------------- optimizers

class SGD:
    """Plain SGD, `p -= lr * g` in place."""

    def __init__(self, params, lr):
        self.lr = lr

    def update_(self, params, grads):
        for p, g in zip(leaves(params), leaves(grads)):
            g *= self.lr
            p -= g


class AdamW:
    """torch.optim.AdamW / fnad_optim.adamw (decay on every leaf), updating in place.
    `weight_decay=0` is Adam."""

    def __init__(self, params, lr, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.0):
        self.lr, self.b1, self.b2, self.eps, self.wd = lr, b1, b2, eps, weight_decay
        self.m = [np.zeros_like(p) for p in leaves(params)]
        self.v = [np.zeros_like(p) for p in leaves(params)]
        self.t = 0

    def update_(self, params, grads):
        self.t += 1
        b1, b2 = self.b1, self.b2
        c1, c2 = 1 - b1 ** self.t, 1 - b2 ** self.t
        for p, g, m, v in zip(leaves(params), leaves(grads), self.m, self.v):
            m *= b1
            m += (1 - b1) * g
            v *= b2
            g *= g
            g *= 1 - b2
            v += g
            d = np.sqrt(v / c2)
            d += self.eps
            np.divide(m, d, out=d)
            d *= 1 / c1
            if self.wd:
                d += self.wd * p
            d *= self.lr
            p -= d


# --------------------------------------------------------------------------- shared pieces

def _cross_entropy(logits, labels):
    """Mean cross-entropy of integer labels and its gradient w.r.t. `logits (N, C)`."""
    n = logits.shape[0]
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    loss = np.mean(np.log(s[:, 0]) - z[np.arange(n), labels])
    e /= s
    e[np.arange(n), labels] -= 1
    e *= 1 / n
    return loss, e


def _linear_back(x, w, g):
    """Gradients of `x @ w + b` given the output gradient `g`: (dx, {"w", "b"})."""
    return g @ w.T, {"w": x.T @ g, "b": g.sum(axis=0)}


# --------------------------------------------------------------------------- MLP

def mlp_grads(params, x, labels):
    """Loss and gradients of a ReLU MLP (`fnad_nn.mlp`) under softmax cross-entropy."""
    acts = [x]
    h = x
    for i, p in enumerate(params):
        h = h @ p["w"] + p["b"]
        if i < len(params) - 1:
            np.maximum(h, 0, out=h)
        acts.append(h)
    loss, g = _cross_entropy(h, labels)
    grads = [None] * len(params)
    for i in range(len(params) - 1, -1, -1):
        gx, grads[i] = _linear_back(acts[i], params[i]["w"], g)
        if i > 0:
            g = gx * (acts[i] > 0)
    return loss, grads


# --------------------------------------------------------------------------- tanh RNN

def rnn_grads(params, xs, target):
    """Loss and gradients of `mse(linear(out, h_T), target)` for a one-layer tanh RNN
    (`fnad_nn.rnn`) over `xs (B, T, I)`; params `{"rnn": [cell], "out": linear}`."""
    c, o = params["rnn"][0], params["out"]
    b, t, i = xs.shape
    xt = np.ascontiguousarray(xs.transpose(1, 0, 2))          # (T, B, I)
    xw = (xt.reshape(t * b, i) @ c["w_ih"] + (c["b_ih"] + c["b_hh"])).reshape(t, b, -1)
    hs = np.zeros((t + 1,) + xw.shape[1:], xs.dtype)            # hs[0] = h_{-1} = 0
    for s in range(t):
        np.tanh(xw[s] + hs[s] @ c["w_hh"], out=hs[s + 1])
    y = hs[t] @ o["w"] + o["b"]
    diff = y - target
    loss = np.mean(diff * diff)
    gy = diff * (2 / diff.size)
    dh, g_out = _linear_back(hs[t], o["w"], gy)
    dz = np.empty_like(xw)
    w_hh_t = c["w_hh"].T
    for s in range(t - 1, -1, -1):
        h = hs[s + 1]
        dz[s] = dh * (1 - h * h)
        dh = dz[s] @ w_hh_t
    dz2 = dz.reshape(t * b, -1)
    db = dz2.sum(axis=0)
    g_cell = {"w_ih": xt.reshape(t * b, i).T @ dz2, "b_ih": db,
              "w_hh": hs[:t].reshape(t * b, -1).T @ dz2, "b_hh": db.copy()}
    return loss, {"out": g_out, "rnn": [g_cell]}


# --------------------------------------------------------------------------- GPT

def _ln(x, p, eps):
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    rstd = 1 / np.sqrt((xc * xc).mean(axis=-1, keepdims=True) + eps)
    xc *= rstd
    return xc * p["scale"] + p["bias"], (xc, rstd)


def _ln_back(g, p, cache):
    xhat, rstd = cache
    grads = {"scale": (g * xhat).sum(axis=0), "bias": g.sum(axis=0)}
    dxh = g * p["scale"]
    dx = dxh - dxh.mean(axis=-1, keepdims=True)
    dx -= xhat * (dxh * xhat).mean(axis=-1, keepdims=True)
    dx *= rstd
    return dx, grads


def _gelu(x):
    phi = 0.5 * (1 + erf(x * (1 / math.sqrt(2))))
    return x * phi, phi


def _gelu_back(g, x, phi):
    return g * (phi + x * np.exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi)))


def _attn(p, h, bsz, t, mask):
    """Causal multi-head self-attention on `h (N, D)`; returns `(y, cache)`."""
    d, nh, dh = p["q"]["w"].shape
    heads = []
    for n in "qkv":
        z = h @ p[n]["w"].reshape(d, d) + p[n]["b"].reshape(d)
        heads.append(z.reshape(bsz, t, nh, dh).transpose(0, 2, 1, 3))
    q, k, v = heads
    s = q @ k.transpose(0, 1, 3, 2)
    s *= 1 / math.sqrt(dh)
    s += mask
    s -= s.max(axis=-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)
    o = (s @ v).transpose(0, 2, 1, 3).reshape(bsz * t, d)
    y = o @ p["o"]["w"].reshape(d, d) + p["o"]["b"]
    return y, (h, q, k, v, s, o)


def _attn_back(g, p, cache, bsz, t):
    h, q, k, v, prob, o = cache
    d, nh, dh = p["q"]["w"].shape
    do, go = _linear_back(o, p["o"]["w"].reshape(d, d), g)
    grads = {"o": {"w": go["w"].reshape(nh, dh, d), "b": go["b"]}}
    do = do.reshape(bsz, t, nh, dh).transpose(0, 2, 1, 3)
    dv = prob.transpose(0, 1, 3, 2) @ do
    dp = do @ v.transpose(0, 1, 3, 2)
    dp -= (dp * prob).sum(axis=-1, keepdims=True)
    dp *= prob
    dp *= 1 / math.sqrt(dh)
    dq, dk = dp @ k, dp.transpose(0, 1, 3, 2) @ q
    dh_in = None
    for n, dz in zip("qkv", (dq, dk, dv)):
        dz = dz.transpose(0, 2, 1, 3).reshape(bsz * t, d)
        dx, gz = _linear_back(h, p[n]["w"].reshape(d, d), dz)
        grads[n] = {"w": gz["w"].reshape(d, nh, dh), "b": gz["b"].reshape(nh, dh)}
        dh_in = dx if dh_in is None else dh_in + dx
    return dh_in, grads


def gpt_grads(params, config, ids, targets):
    """Loss and gradients of `fnad_nn.models.token_loss` for a GPT with learned positions,
    LayerNorm, exact GELU, tied head and no dropout."""
    c = config
    bsz, t = ids.shape
    d = c.d_model
    tok = params["tok"]["w"]
    x = (tok[ids] + params["pos"]["w"][:t]).reshape(bsz * t, d)
    mask = np.triu(np.full((t, t), -np.inf, x.dtype), k=1)
    caches = []
    for p in params["blocks"]:
        h1, ln1 = _ln(x, p["norm1"], c.norm_eps)
        a, at = _attn(p["attn"], h1, bsz, t, mask)
        x = x + a
        h2, ln2 = _ln(x, p["norm2"], c.norm_eps)
        f1 = h2 @ p["ff"]["fc1"]["w"] + p["ff"]["fc1"]["b"]
        act, phi = _gelu(f1)
        x = x + act @ p["ff"]["fc2"]["w"] + p["ff"]["fc2"]["b"]
        caches.append((ln1, at, ln2, h2, f1, act, phi))
    hf, lnf = _ln(x, params["norm"], c.norm_eps)
    loss, g = _cross_entropy(hf @ tok.T, targets.reshape(-1))
    d_tok = g.T @ hf
    dx, g_norm = _ln_back(g @ tok, params["norm"], lnf)
    g_blocks = [None] * len(caches)
    for i in range(len(caches) - 1, -1, -1):
        p, (ln1, at, ln2, h2, f1, act, phi) = params["blocks"][i], caches[i]
        da, g_fc2 = _linear_back(act, p["ff"]["fc2"]["w"], dx)
        df = _gelu_back(da, f1, phi)
        dh2, g_fc1 = _linear_back(h2, p["ff"]["fc1"]["w"], df)
        dn2, g_n2 = _ln_back(dh2, p["norm2"], ln2)
        dx = dx + dn2
        dh1, g_attn = _attn_back(dx, p["attn"], at, bsz, t)
        dn1, g_n1 = _ln_back(dh1, p["norm1"], ln1)
        dx = dx + dn1
        g_blocks[i] = {"norm1": g_n1, "attn": g_attn, "norm2": g_n2,
                       "ff": {"fc1": g_fc1, "fc2": g_fc2}}
    onehot = np.zeros((bsz * t, tok.shape[0]), x.dtype)
    onehot[np.arange(bsz * t), ids.reshape(-1)] = 1
    d_tok += onehot.T @ dx
    d_pos = np.zeros_like(params["pos"]["w"])
    d_pos[:t] = dx.reshape(bsz, t, d).sum(axis=0)
    return loss, {"tok": {"w": d_tok}, "pos": {"w": d_pos}, "blocks": g_blocks,
                  "norm": g_norm}
