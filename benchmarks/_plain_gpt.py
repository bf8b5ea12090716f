"""benchmarks/steps.py's "GPT as users write it" (`--only plain_gpt`): a GPT from plain array
ops, no layer library: one fused q/k/v projection split by slicing, tanh-approximation
GELU, layer norm from mean and var, softmax as exp(x - logsumexp(x)), a causal mask, a
tied head and cross-entropy from log-softmax and take_along_axis; Adam.

`loss(xp, lse, p, ids, targets)` is the model for any NumPy-like module `xp` (fnad.numpy,
jax.numpy, NumPy itself) with its logsumexp `lse`; `torch_loss` is the same model in
PyTorch's tensor ops. `init` gives the weights every library starts from (NumPy arrays).
"""

import math

import numpy as np

EPS = 1e-5
GELU_C = math.sqrt(2 / math.pi)


def init(vocab, d, layers, context, dtype=np.float32, seed=0):
    """Weights: N(0, 0.02) matrices (the residual outputs scaled by 1/sqrt(2 layers)), zero
    biases, unit norm gains."""
    rng = np.random.default_rng(seed)

    def w(*shape, scale=0.02):
        return (rng.standard_normal(shape) * scale).astype(dtype)

    def zeros(n):
        return np.zeros(n, dtype)

    def norm():
        return {"g": np.ones(d, dtype), "b": zeros(d)}

    out_scale = 0.02 / math.sqrt(2 * layers)
    blocks = [{"norm1": norm(), "w_qkv": w(d, 3 * d), "b_qkv": zeros(3 * d),
               "w_o": w(d, d, scale=out_scale), "b_o": zeros(d), "norm2": norm(),
               "w_fc": w(d, 4 * d), "b_fc": zeros(4 * d),
               "w_proj": w(4 * d, d, scale=out_scale), "b_proj": zeros(d)}
              for _ in range(layers)]
    return {"tok": w(vocab, d), "pos": w(context, d), "blocks": blocks, "norm": norm()}


def _layer_norm(xp, x, q):
    mean = xp.mean(x, axis=-1, keepdims=True)
    var = xp.var(x, axis=-1, keepdims=True)
    return (x - mean) / xp.sqrt(var + EPS) * q["g"] + q["b"]


def _gelu(xp, x):
    return 0.5 * x * (1.0 + xp.tanh(GELU_C * (x + 0.044715 * x ** 3)))


def _log_softmax(lse, x):
    return x - lse(x, axis=-1, keepdims=True)


def _attention(xp, lse, blk, x, heads):
    b, t, d = x.shape
    qkv = x @ blk["w_qkv"] + blk["b_qkv"]
    q, k, v = (qkv[..., i * d:(i + 1) * d].reshape(b, t, heads, d // heads)
               .transpose(0, 2, 1, 3) for i in range(3))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d // heads)
    causal = np.tril(np.ones((t, t), bool))
    scores = xp.where(causal, scores, -np.inf)
    o = xp.exp(_log_softmax(lse, scores)) @ v
    return o.transpose(0, 2, 1, 3).reshape(b, t, d) @ blk["w_o"] + blk["b_o"]


def loss(xp, lse, p, ids, targets, heads):
    """Mean next-token cross-entropy of the pre-norm GPT."""
    t = ids.shape[1]
    x = p["tok"][ids] + p["pos"][:t]
    for blk in p["blocks"]:
        x = x + _attention(xp, lse, blk, _layer_norm(xp, x, blk["norm1"]), heads)
        h = _gelu(xp, _layer_norm(xp, x, blk["norm2"]) @ blk["w_fc"] + blk["b_fc"])
        x = x + h @ blk["w_proj"] + blk["b_proj"]
    logp = _log_softmax(lse, _layer_norm(xp, x, p["norm"]) @ p["tok"].T)
    return -xp.mean(xp.take_along_axis(logp, targets[..., None], axis=-1))


def torch_loss(torch, p, ids, targets, heads):
    """`loss` in PyTorch's tensor ops, on the same weights as tensors."""
    def layer_norm(x, q):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        return (x - mean) / torch.sqrt(var + EPS) * q["g"] + q["b"]

    def log_softmax(x):
        return x - torch.logsumexp(x, -1, keepdim=True)

    b, t = ids.shape
    x = p["tok"][ids] + p["pos"][:t]
    causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
    for blk in p["blocks"]:
        hx = layer_norm(x, blk["norm1"])
        d = hx.shape[-1]
        qkv = hx @ blk["w_qkv"] + blk["b_qkv"]
        q, k, v = (qkv[..., i * d:(i + 1) * d].reshape(b, t, heads, d // heads)
                   .transpose(1, 2) for i in range(3))
        scores = (q @ k.transpose(-1, -2) / math.sqrt(d // heads)).masked_fill(~causal,
                                                                                -math.inf)
        o = (torch.exp(log_softmax(scores)) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + o @ blk["w_o"] + blk["b_o"]
        h = layer_norm(x, blk["norm2"]) @ blk["w_fc"] + blk["b_fc"]
        h = 0.5 * h * (1.0 + torch.tanh(GELU_C * (h + 0.044715 * h ** 3)))
        x = x + h @ blk["w_proj"] + blk["b_proj"]
    logp = log_softmax(layer_norm(x, p["norm"]) @ p["tok"].t())
    return -logp.gather(-1, targets[..., None]).mean()


def jax_step(jax, adam, runner, params, ids, targets, heads, lr):
    """The jax.jit column: `loss` on jax.numpy, Adam (`adam`, `runner`: benchmarks/
    _jax_steps.py's)."""
    lse = jax.scipy.special.logsumexp

    def jloss(p, ids, targets):
        return loss(jax.numpy, lse, p, ids, targets, heads)

    return runner(jax, jloss, adam(jax, lr), params,
                  (ids.astype(np.int32), targets.astype(np.int32)))
