"""fnad.kernels.cpu: the fused float32 kernels behind fnad_nn's GELU, attention softmax and
layer norm agree with float64 references within the tolerance docs/jit.md states, with the
NumPy formulations they replace (the fallback), on one thread and on several, at NaN, inf
and fully masked rows; and the new primitives (gelu_grad_mul, normalize_vjp) have correct
derivatives of the second order and batching rules."""

import numpy as np
import pytest
from scipy import special

import fnad
import fnad.numpy as fnp
import fnad_nn as nn
from fnad.kernels import _threads, cpu
from fnad.test_util import check_grads
from fnad_nn import _activations, _fused

pytestmark = pytest.mark.skipif(not cpu.available(), reason="numba is not installed")
RTOL = 2e-6  # docs/jit.md: the kernels' float32 results, relative to the largest |value|


def _close(a, ref, rtol=RTOL):
    scale = max(1.0, float(np.max(np.abs(ref)))) if np.size(ref) else 1.0
    assert a.dtype == np.float32
    np.testing.assert_allclose(a.astype(np.float64), ref, rtol=0, atol=rtol * scale)


def _x(shape, seed=0, s=3.0):
    return (np.random.default_rng(seed).standard_normal(shape) * s).astype(np.float32)


@pytest.fixture(params=[1, 2, 3], ids=lambda n: f"{n}threads")
def threads(request, monkeypatch):
    monkeypatch.setenv("FNAD_NUM_THREADS", str(request.param))
    monkeypatch.setattr(_threads, "MIN_WORK", 64)  # split even small arrays
    return request.param


def _numpy_only(monkeypatch):
    monkeypatch.setenv("FNAD_CPU_KERNELS", "numpy")


def test_gelu_and_its_cotangent_match_float64(threads):
    x, g = _x((7, 33, 65)), _x((7, 33, 65), 1)
    x64 = x.astype(np.float64)
    phi = 0.5 * special.erfc(-x64 / np.sqrt(2))
    _close(cpu.gelu(x), x64 * phi)
    d = phi + x64 * np.exp(-x64 ** 2 / 2) / np.sqrt(2 * np.pi)
    _close(cpu.gelu_grad_mul(g, x), g * d)


def test_gelu_tails_and_specials():
    x = np.array([-30, -12, -6, -1e-30, 0, 1e-30, 6, 12, 1e6, np.inf, -np.inf, np.nan],
                 np.float32)
    y = cpu.gelu(x)
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        ref = x64 * 0.5 * special.erfc(-x64 / np.sqrt(2))
    fin = np.isfinite(x64) & (np.abs(x64) < 1e5)
    # the lower tail keeps its relative accuracy (erfc, not 1 + erf): 1e-5 down to -12
    np.testing.assert_allclose(y[fin], ref[fin], rtol=2e-5, atol=1e-37)
    assert y[-4] == 1e6 and y[-3] == np.inf and np.isnan(y[-1])
    assert np.isnan(y[-2])  # -inf * Phi(-inf) = -inf * 0, as in the NumPy formulation


def test_attention_softmax_matches_float64_with_masks(threads):
    s = _x((3, 2, 5, 9), s=4.0)
    drop = np.triu(np.ones((5, 9), bool), 5)
    drop[2] = True  # a row with every position dropped gives zeros
    out = cpu.attention_softmax(s, drop, 0.5)
    z = np.where(drop, -np.inf, s.astype(np.float64) * 0.5)
    with np.errstate(invalid="ignore"):
        e = np.exp(z - np.max(z, -1, keepdims=True))
        ref = np.nan_to_num(e / e.sum(-1, keepdims=True))
    _close(out, ref)
    assert np.all(out[:, :, 2] == 0) and np.all(out[..., drop] == 0)
    _close(cpu.attention_softmax(s, None, 1.0), np.exp(s - s.max(-1, keepdims=True))
           / np.exp(s - s.max(-1, keepdims=True)).sum(-1, keepdims=True))


def test_attention_softmax_declines_masks_that_do_not_repeat_by_rows():
    s = _x((3, 5, 4))
    assert cpu.attention_softmax(s, np.zeros((3, 1, 4), bool), 1.0) is None
    assert cpu.attention_softmax(s, np.zeros((5, 4), np.int8), 1.0) is None
    assert cpu.attention_softmax(s.astype(np.float64), None, 1.0) is None



def test_a_strided_input_takes_the_kernel_too():
    """Whether a kernel runs depends on dtype and shape, never on the layout: jit may hand a
    primitive a fresh array where eager code hands it a view (program fuzzer, seed 1125)."""
    s, g = _x((6, 9)), _x((6, 9), 1)
    p = cpu.attention_softmax(s, None, 0.5)
    for view in (np.asfortranarray(s), s[:, ::-1][:, ::-1], np.flip(np.flip(s, 0), 0)):
        assert np.array_equal(cpu.attention_softmax(view, None, 0.5), p)
        assert np.array_equal(cpu.gelu(view), cpu.gelu(s))
        assert np.array_equal(cpu.normalize(view, 1e-5)[0], cpu.normalize(s, 1e-5)[0])
        assert np.array_equal(cpu.softmax_vjp(np.asfortranarray(g), p, 0.5),
                              cpu.softmax_vjp(g, p, 0.5))
    assert np.array_equal(_fused.sum_leading(np.asfortranarray(s), 1), _fused.sum_leading(s, 1))


def test_softmax_nan_propagates_through_its_row():
    s = _x((2, 6))
    s[0, 3] = np.nan
    out = cpu.attention_softmax(s, None, 1.0)
    assert np.all(np.isnan(out[0])) and np.all(np.isfinite(out[1]))


def test_softmax_vjp_matches_float64(threads):
    g, s = _x((4, 6, 17), 1), _x((4, 6, 17), 2)
    p = cpu.attention_softmax(s, None, 1.0)
    p64, g64 = p.astype(np.float64), g.astype(np.float64)
    _close(cpu.softmax_vjp(g, p, 0.25), 0.25 * p64 * (g64 - (g64 * p64).sum(-1, keepdims=True)))


def test_normalize_and_its_vjp_match_float64(threads):
    x, g = _x((5, 7, 48), s=2.0) + 3, _x((5, 7, 48), 1)
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    xc = x64 - x64.mean(-1, keepdims=True)
    rstd = 1 / np.sqrt((xc ** 2).mean(-1, keepdims=True) + 1e-5)
    xhat, r = cpu.normalize(x, 1e-5)
    _close(xhat, xc * rstd)
    _close(r, rstd)
    h = xhat.astype(np.float64)
    ref = rstd * (g64 - g64.mean(-1, keepdims=True) - h * (g64 * h).mean(-1, keepdims=True))
    _close(cpu.normalize_vjp(g, xhat, x, 1e-5), ref)


def test_threads_give_the_same_bits(monkeypatch):
    """Rows (and elements) are computed alike whatever range they fall in."""
    x, g = _x((64, 96)), _x((64, 96), 1)
    drop = np.triu(np.ones((64, 96), bool), 40)
    runs = []
    for n in (1, 2, 5):
        monkeypatch.setenv("FNAD_NUM_THREADS", str(n))
        monkeypatch.setattr(_threads, "MIN_WORK", 1)
        runs.append([cpu.gelu(x), cpu.gelu_grad_mul(g, x), cpu.attention_softmax(x, drop, 0.3),
                     cpu.normalize(x, 1e-5)[0], cpu.normalize_vjp(g, x, x, 1e-5)])
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            assert np.array_equal(a, b)


def test_a_kernel_error_on_a_worker_reaches_the_caller(monkeypatch):
    monkeypatch.setenv("FNAD_NUM_THREADS", "2")

    def kernel(lo, hi):
        if lo > 0:
            raise RuntimeError("worker range failed")

    with pytest.raises(RuntimeError, match="worker range failed"):
        _threads.run_ranges(kernel, 10, (), work=1 << 20)


def test_layers_agree_with_the_numpy_fallback(monkeypatch):
    """GELU, attention and layer norm (values and gradients) through the kernels and
    through the NumPy formulations (FNAD_CPU_KERNELS=numpy) agree to float32 rounding."""
    k = fnad.random.split(fnad.random.PRNGKey(0), 2)
    blk = nn.init_transformer_block(k[0], 32, 4, 64, activation="gelu")
    x = _x((3, 16, 32), s=1.0)

    def loss(p, x):
        return fnp.sum(nn.transformer_block(p, x, causal=True) ** 2)

    fast = fnad.value_and_grad(loss, argnums=(0, 1))(blk, x)
    _numpy_only(monkeypatch)
    assert not cpu.available()
    slow = fnad.value_and_grad(loss, argnums=(0, 1))(blk, x)
    for a, b in zip(fnad.tree_leaves(fast), fnad.tree_leaves(slow)):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        np.testing.assert_allclose(a, b, rtol=0, atol=2e-5 * max(1.0, np.abs(b).max()))


def test_jit_of_a_layer_step_is_bit_identical_to_eager():
    blk = nn.init_transformer_block(fnad.random.PRNGKey(1), 32, 4, 64, activation="gelu")
    x = _x((2, 8, 32), s=1.0)

    def loss(p, x):
        return fnp.sum(nn.layer_norm(p["ln1"], nn.transformer_block(p, x, causal=True)))

    g = fnad.grad(loss)
    for a, b in zip(fnad.tree_leaves(g(blk, x)), fnad.tree_leaves(fnad.jit(g)(blk, x))):
        assert np.array_equal(a, b)


def test_second_derivatives_of_the_new_primitives():
    r = np.random.default_rng(3)
    x = r.standard_normal((2, 5))
    gg = r.standard_normal((2, 5))
    check_grads(_activations._gelu_grad_mul, (gg, x), order=2)
    params = nn.init_layer_norm(5, dtype=np.float64)
    params = {"scale": r.standard_normal(5), "bias": r.standard_normal(5)}
    check_grads(lambda x: nn.layer_norm(params, x), (x,), order=2)
    xhat = _fused.normalize(x, 1e-5)
    check_grads(lambda g, h, x: _fused.normalize_vjp(g, h, x, 1e-5), (gg, xhat, x), order=2)


def test_the_new_primitives_batch_under_vmap():
    r = np.random.default_rng(4)
    x, g = r.standard_normal((3, 4, 6)), r.standard_normal((3, 4, 6))
    h = _fused.normalize(x, 1e-5)
    got = fnad.vmap(lambda g, h, x: _fused.normalize_vjp(g, h, x, 1e-5))(g, h, x)
    np.testing.assert_allclose(got, _fused.normalize_vjp(g, h, x, 1e-5), rtol=1e-12)
    got = fnad.vmap(_activations._gelu_grad_mul, in_axes=(0, None))(g, x[0])
    np.testing.assert_allclose(got, _activations._gelu_grad_mul(g, x[0][None]), rtol=1e-12)


def test_sum_leading_matches_numpy_and_batches():
    r = np.random.default_rng(5)
    for dt in (np.float32, np.float64):
        g = r.standard_normal((6, 7, 5)).astype(dt)
        for n_keep in (0, 1, 2):
            got = _fused.sum_leading(g, n_keep)
            want = g.astype(np.float64).sum(axis=tuple(range(3 - n_keep)))
            assert got.dtype == dt and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5 if dt == np.float32 else 1e-12)
    g = r.standard_normal((4, 6, 5))
    np.testing.assert_allclose(fnad.vmap(lambda a: _fused.sum_leading(a, 1), in_axes=1)(g),
                               g.sum(axis=0), rtol=1e-12)
    check_grads(lambda a: _fused.sum_leading(a, 1), (g,), order=2)
    assert np.array_equal(fnad.jit(lambda a: _fused.sum_leading(a, 1))(g),
                          _fused.sum_leading(g, 1))
