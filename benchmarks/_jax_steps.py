"""benchmarks/steps.py's three training steps in JAX, for its jax.jit column (jax is optional:
the `bench` extra; steps.py imports this module only when that column is on).

Each builder takes the `jax` module and fnad's weights (a pytree of NumPy arrays in dicts
and lists, converted with `jnp.asarray`, so every library starts from the same numbers) and
returns a no-argument callable that runs one `jax.jit`-compiled step (loss, gradients,
optimizer update) on fixed arguments, as fnad's columns do, and returns the loss after
`block_until_ready`. Adam and AdamW are written by hand (no optax dependency).
"""

import numpy as np


def _runner(jax, loss_fn, opt, params, batch):
    """`jax.jit` of the pure step `(params, state, *batch) -> (params, state, loss)` (nothing
    donated), as a no-argument callable on fixed arguments (with `.step`, the jitted step,
    and `.args`, its arguments)."""
    jnp = jax.numpy
    loss_and_grad = jax.value_and_grad(loss_fn)
    init, update = opt

    def step(params, state, *batch):
        loss, grads = loss_and_grad(params, *batch)
        params, state = update(grads, state, params)
        return params, state, loss

    jstep = jax.jit(step)
    jparams = jax.tree_util.tree_map(jnp.asarray, params)
    args = (jparams, init(jparams)) + tuple(jnp.asarray(b) for b in batch)
    run = lambda: jax.block_until_ready(jstep(*args))[2]
    run.step, run.args = jstep, args   # for tests: iterate the step
    return run


def sgd(jax, lr):
    """Plain SGD as an `(init, update)` pair."""
    tm = jax.tree_util.tree_map

    def update(grads, state, params):
        return tm(lambda p, g: p - lr * g, params, grads), state

    return (lambda params: (), update)


def adamw(jax, lr, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.0):
    """Adam with decoupled weight decay on every leaf (Adam when `weight_decay` is 0), as
    fnad_optim.adamw: `p -= lr * (m_hat / (sqrt(v_hat) + eps) + weight_decay * p)`."""
    jnp, tm = jax.numpy, jax.tree_util.tree_map

    def init(params):
        return (jnp.zeros((), jnp.int32), tm(jnp.zeros_like, params), tm(jnp.zeros_like, params))

    def update(grads, state, params):
        count, mu, nu = state
        count = count + 1
        mu = tm(lambda m, g: b1 * m + (1 - b1) * g, mu, grads)
        nu = tm(lambda v, g: b2 * v + (1 - b2) * g * g, nu, grads)
        t = count.astype(jnp.float32)
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t

        def new(p, m, v):
            direction = (m / c1) / (jnp.sqrt(v / c2) + eps)
            return p - lr * (direction + weight_decay * p if weight_decay else direction)
        return tm(new, params, mu, nu), (count, mu, nu)

    return init, update


def _cross_entropy(jax, logits, labels):
    jnp = jax.numpy
    lse = jax.nn.logsumexp(logits, axis=-1)
    picked = jnp.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
    return jnp.mean(lse - picked)


# --------------------------------------------------------------------------- workloads

def mlp(jax, params, x, labels, lr):
    """ReLU MLP, softmax cross-entropy, SGD."""
    def loss(params, x, labels):
        for i, p in enumerate(params):
            x = x @ p["w"] + p["b"]
            if i < len(params) - 1:
                x = jax.nn.relu(x)
        return _cross_entropy(jax, x, labels)

    return _runner(jax, loss, sgd(jax, lr), params, (x, labels.astype(np.int32)))


def _layer_norm(jax, x, p, eps):
    jnp = jax.numpy
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * p["scale"] + p["bias"]


def _attention(jax, a, x):
    """Causal multi-head self-attention; weights laid out as fnad's: q/k/v `(d, H, Dh)` with
    biases `(H, Dh)`, output `(H, Dh, d)`."""
    jnp = jax.numpy
    q, k, v = (jnp.einsum("btd,dhk->bhtk", x, a[n]["w"]) + a[n]["b"][:, None, :]
               for n in "qkv")
    t, dh = x.shape[1], q.shape[-1]
    scores = q @ jnp.swapaxes(k, -1, -2) / float(np.sqrt(dh))
    causal = jnp.tril(jnp.ones((t, t), bool))
    scores = jnp.where(causal, scores, -jnp.inf)
    o = jax.nn.softmax(scores, axis=-1) @ v
    return jnp.einsum("bhtk,hkd->btd", o, a["o"]["w"]) + a["o"]["b"]


def gpt(jax, params, config, ids, targets, hp):
    """Pre-norm GPT (learned positions, tied head, exact erf GELU), AdamW on every leaf."""
    eps = config.norm_eps

    def loss(p, ids, targets):
        t = ids.shape[1]
        x = p["tok"]["w"][ids] + p["pos"]["w"][:t]
        for blk in p["blocks"]:
            x = x + _attention(jax, blk["attn"], _layer_norm(jax, x, blk["norm1"], eps))
            f = blk["ff"]
            h = _layer_norm(jax, x, blk["norm2"], eps) @ f["fc1"]["w"] + f["fc1"]["b"]
            x = x + jax.nn.gelu(h, approximate=False) @ f["fc2"]["w"] + f["fc2"]["b"]
        logits = _layer_norm(jax, x, p["norm"], eps) @ p["tok"]["w"].T
        return _cross_entropy(jax, logits, targets)

    opt = adamw(jax, hp["lr"], hp["b1"], hp["b2"], weight_decay=hp["weight_decay"])
    return _runner(jax, loss, opt, params, (ids.astype(np.int32), targets.astype(np.int32)))


def rnn(jax, params, xs, target, lr, loop=False):
    """tanh RNN over `jax.lax.scan` (`loop`: a Python loop over time, which jax.jit unrolls),
    MSE of a linear readout of the last hidden state, Adam."""
    jnp = jax.numpy

    def loss(p, xs, target):
        cell = p["rnn"][0]

        def body(h, x_t):
            h = jnp.tanh(x_t @ cell["w_ih"] + cell["b_ih"] + h @ cell["w_hh"] + cell["b_hh"])
            return h, None

        h = jnp.zeros((xs.shape[0], cell["w_hh"].shape[0]), xs.dtype)
        if loop:
            for t in range(xs.shape[1]):
                h, _ = body(h, xs[:, t])
        else:
            h, _ = jax.lax.scan(body, h, jnp.swapaxes(xs, 0, 1))
        return jnp.mean(jnp.square(h @ p["out"]["w"] + p["out"]["b"] - target))

    return _runner(jax, loss, adamw(jax, lr), params, (xs, target))
