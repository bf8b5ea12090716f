"""Fast math's attention tiles (fnad/_jit/attention.py): `exp(s - logsumexp(s)) @ v` over
masked, scaled `q @ k^T` becomes one tile equation, its backward another, within the bound
docs/jit.md states against float64 references; whatever does not fit runs as before."""

import math

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad._jit import attention

pytest.importorskip("numba")
pytest.importorskip("scipy")

EPS = float(np.finfo(np.float32).eps)


def bound(q, k, scale):
    """docs/jit.md, "Fast math": each result within 8 eps (1 + max |scale q k^T|) of the
    float64 reference, normwise (the scores' size: an error in the exponent's argument is a
    relative error of each probability)."""
    s = np.asarray(q, np.float64) @ np.swapaxes(np.asarray(k, np.float64), -1, -2)
    return 8 * EPS * (1 + float(np.max(np.abs(s))) * scale)


pytestmark = pytest.mark.usefixtures("fast_math_kernels")


def attend(q, k, v, mask=None, scale=None, divide=True):
    """Attention as users write it (benchmarks/_plain_gpt.py)."""
    d = q.shape[-1]
    s = q @ fnp.swapaxes(k, -1, -2)
    if scale is not None:
        s = s / math.sqrt(d) if divide else s * scale
    if mask is not None:
        s = fnp.where(mask, s, -np.inf)
    return fnp.exp(s - fnp.logsumexp(s, axis=-1, keepdims=True)) @ v


def reference(q, k, v, g, mask=None, scale=1.0):
    """o and the cotangents of q, k, v for o's cotangent g, in float64."""
    q, k, v, g = (a.astype(np.float64) for a in (q, k, v, g))
    s = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = p @ v
    dp = g @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * scale
    return o, ds @ k, np.swapaxes(ds, -1, -2) @ q, np.swapaxes(p, -1, -2) @ g


def normwise(got, want):
    return float(np.max(np.abs(np.asarray(got, np.float64) - want)) / np.max(np.abs(want)))


def _inputs(shape_q, t_k, d_v, seed=0):
    rng = np.random.default_rng(seed)
    *lead, t_q, d = shape_q
    q = rng.standard_normal(shape_q).astype(np.float32) * 2
    k = rng.standard_normal((*lead, t_k, d)).astype(np.float32)
    v = rng.standard_normal((*lead, t_k, d_v)).astype(np.float32)
    g = rng.standard_normal((*lead, t_q, d_v)).astype(np.float32)
    return q, k, v, g


def _prims(f, *args):
    return [e.prim.name for e in fnad.jit(f, fast_math=True).graph(*args).eqns]


CASES = {  # name: (q shape, T', Dv, mask, scale, divide)
    "causal": ((2, 3, 16, 8), 16, 8, "causal", True, True),
    "gpt": ((4, 4, 64, 32), 64, 32, "causal", True, True),
    "no mask, multiply": ((3, 12, 5), 12, 7, None, 0.3, False),
    "general mask, cross": ((2, 2, 9, 6), 13, 4, "random", True, True),
    "no scale": ((2, 8, 4), 8, 4, "causal", None, True),
}


def _case(name):
    shape, t_k, d_v, mask, scale, divide = CASES[name]
    q, k, v, g = _inputs(shape, t_k, d_v)
    t_q = shape[-2]
    if mask == "causal":
        mask = np.tril(np.ones((t_q, t_k), bool))
    elif mask == "random":
        mask = np.random.default_rng(1).random((t_q, t_k)) < 0.5
        mask[:, 0] = True  # a key in every row
    s = (1 / math.sqrt(shape[-1]) if divide else scale) if scale is not None else None
    return q, k, v, g, mask, s, divide


@pytest.mark.parametrize("size", [1, 5])
@pytest.mark.parametrize("name", list(CASES))
def test_forward_and_backward_within_the_bound_of_float64(name, size):
    q, k, v, g, mask, scale, divide = _case(name)
    q = q * size  # sharper softmax rows
    def f(q, k, v):
        return attend(q, k, v, mask, scale, divide)

    def loss(q, k, v, g):
        return fnp.sum(f(q, k, v) * g)

    o_ref, *grads_ref = reference(q, k, v, g, mask, 1.0 if scale is None else scale)
    tol = bound(q, k, 1.0 if scale is None else scale)
    grad = fnad.grad(loss, argnums=(0, 1, 2))
    assert "attention_tiles" in _prims(f, q, k, v)
    prims = _prims(grad, q, k, v, g)
    assert "attention_tiles_vjp" in prims and "logsumexp" not in prims, prims
    assert normwise(fnad.jit(f, fast_math=True)(q, k, v), o_ref) <= tol
    for got, want in zip(fnad.jit(grad, fast_math=True)(q, k, v, g), grads_ref):
        assert normwise(got, want) <= tol
    exact = fnad.jit(grad)
    assert "attention_tiles_vjp" not in [e.prim.name for e in exact.graph(q, k, v, g).eqns]


def test_output_and_gradients_together_and_strided_heads():
    # as in the GPT: heads are views of a (B, T, 3, H, D) projection; o is used and
    # differentiated
    rng = np.random.default_rng(4)
    qkv = rng.standard_normal((2, 16, 3 * 4 * 8)).astype(np.float32)
    mask = np.tril(np.ones((16, 16), bool))

    def f(qkv):
        q, k, v = (qkv[..., i * 32:(i + 1) * 32].reshape(2, 16, 4, 8).transpose(0, 2, 1, 3)
                   for i in range(3))
        return attend(q, k, v, mask, True)

    def loss(qkv):
        o = f(qkv)
        return fnp.sum(fnp.tanh(o)) + fnp.sum(o * o)

    want = fnad.grad(loss)(qkv.astype(np.float64))
    jg = fnad.jit(fnad.value_and_grad(loss), fast_math=True)
    prims = [e.prim.name for e in jg.graph(qkv).eqns]
    assert "attention_tiles" in prims and "attention_tiles_vjp" in prims
    value, got = jg(qkv)
    q, k = qkv[..., :32].reshape(2, 16, 4, 8), qkv[..., 32:64].reshape(2, 16, 4, 8)
    tol = bound(q.transpose(0, 2, 1, 3), k.transpose(0, 2, 1, 3), 1 / math.sqrt(8))
    assert normwise(got, np.asarray(want)) <= tol
    assert abs(float(value) - float(loss(qkv.astype(np.float64)))) <= 1e-4 * abs(float(value))


def test_what_does_not_fit_runs_as_before():
    q, k, v, g = _inputs((2, 8, 4), 8, 4)
    mask = np.tril(np.ones((8, 8), bool))

    def weights_too(q, k, v):  # the probabilities are an output: nothing is fused
        s = fnp.where(mask, q @ fnp.swapaxes(k, -1, -2), -np.inf)
        p = fnp.exp(s - fnp.logsumexp(s, axis=-1, keepdims=True))
        return p @ v, p

    assert "attention_tiles" not in _prims(weights_too, q, k, v)
    o64 = attend(q.astype(np.float64), k, v, mask)  # float64: not fused
    assert "attention_tiles" not in _prims(lambda q: attend(q, k, v, mask), q.astype(np.float64))
    got = fnad.jit(lambda q: attend(q, k, v, mask), fast_math=True)(q.astype(np.float64))
    np.testing.assert_allclose(got, o64, rtol=1e-12)
    empty_row = mask.copy()
    empty_row[3] = False  # a row with no key: eager gives NaN there; left to the NumPy path
    assert "attention_tiles" not in _prims(lambda q: attend(q, k, v, empty_row), q)


def test_same_bits_at_any_thread_count():
    from fnad.kernels import _threads
    q, k, v, g = _inputs((8, 4, 64, 32), 64, 32)
    mask = np.tril(np.ones((64, 64), bool))
    grad = fnad.jit(fnad.grad(lambda q, k, v: fnp.sum(attend(q, k, v, mask, True) * g),
                              argnums=(0, 1, 2)), fast_math=True)
    outs = []
    for n in (1, 2, 3):
        _threads.set_threads(n)
        try:
            outs.append(b"".join(np.asarray(a).tobytes() for a in grad(q, k, v)))
        finally:
            _threads.set_threads(None)
    assert outs[0] == outs[1] == outs[2]


def test_tiles_describe_their_mask():
    causal = attention.AttentionTiles(0.5, np.tril(np.ones((4, 4), bool)), 4, 4)
    assert causal.causal and not causal.general and list(causal.count) == [1, 2, 3, 4]
    assert "causal" in repr(causal)
    general = attention.AttentionTiles(1.0, np.eye(3, dtype=bool), 3, 3)
    assert general.general and list(general.count) == [1, 2, 3]
    plain = attention.AttentionTiles(1.0, None, 2, 5)
    assert not plain.general and not plain.causal and list(plain.count) == [5, 5]
