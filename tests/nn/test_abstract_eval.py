"""`abstract_eval` of fnad_nn's primitives agrees with their real outputs (shape and dtype)
in small models run forward, backward (VJP) and forward-mode (JVP), in float32 and float64."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad_nn as nn
from fnad._core.abstract import abstract_eval
from fnad._core.tracer import PRIMITIVES
from tests.core.avalcheck import checking_abstract_eval

KEY = fnad.random.PRNGKey(0)


def _models(dt):
    k = fnad.random.split(KEY, 8)
    r = np.random.default_rng(0)
    x = r.standard_normal((2, 5, 8)).astype(dt)
    img = r.standard_normal((2, 3, 6, 6)).astype(dt)
    labels = np.array([[1, 0, 3, 2, 1], [0, 0, 1, 2, 3]])
    tb = nn.init_transformer_block(k[0], 8, 2, 16, activation="gelu", dtype=dt)
    conv3 = nn.init_conv2d(k[1], 3, 4, 3, dtype=dt)
    conv_s2 = nn.init_conv2d(k[2], 3, 4, 3, groups=1, dtype=dt)
    lstm = nn.init_lstm(k[3], 8, 6, dtype=dt)
    gru = nn.init_gru(k[4], 8, 6, dtype=dt)
    lin = nn.init_linear(k[5], 8, 4, dtype=dt)
    ln = nn.init_layer_norm(8, dtype=dt)
    return [
        ("transformer", lambda p, x: fnp.sum(nn.transformer_block(p, x, causal=True)), tb, x),
        ("conv_s1", lambda p, x: fnp.sum(nn.conv2d(p, x, padding=1) ** 2), conv3, img),
        ("conv_strided", lambda p, x: fnp.sum(nn.max_pool2d(nn.conv2d(p, x, stride=2), 2)),
         conv_s2, img),
        ("avg_pool", lambda p, x: fnp.sum(nn.avg_pool2d(x * p["w"][0, 0, 0, 0], 2)), conv3,
         img),
        ("lstm", lambda p, x: fnp.sum(nn.lstm(p, x)[0]), lstm, x),
        ("gru", lambda p, x: fnp.sum(nn.gru(p, x)[0]), gru, x),
        ("activations", lambda p, x: fnp.sum(nn.gelu(x) + nn.sigmoid(x) + nn.softplus(x)
                                             + nn.relu(x) + nn.softmax(x) + nn.log_softmax(x)
                                             + nn.gelu(x, approximate=True)
                                             + nn.silu(x)) * p["w"][0, 0], lin, x),
        ("losses", lambda p, x: nn.sparse_softmax_cross_entropy(nn.linear(p, x), labels)
         + fnp.mean(nn.softmax_cross_entropy(nn.linear(p, x), nn.softmax(nn.linear(p, x))))
         + nn.sparse_softmax_cross_entropy(nn.linear(p, x), labels, label_smoothing=0.1),
         lin, x),
        ("layer_norm", lambda p, x: fnp.sum(nn.layer_norm(p, x) ** 3), ln, x),
    ]


def _run(fun, params, x):
    """Forward under vjp, and the backward pass itself traced by an outer jvp, so that the
    primitives used only in VJP rules are checked too."""
    ones = (fnad.tree_map(np.ones_like, params), np.ones_like(x))
    fnad.jvp(fnad.grad(fun, argnums=(0, 1)), (params, x), ones)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_nn_primitives_abstract_eval_matches_real_outputs(dt):
    with checking_abstract_eval() as report:
        for name, fun, params, x in _models(dt):
            try:
                _run(fun, params, x)
            except Exception as e:
                raise AssertionError(f"model {name} failed") from e
    assert not report.missing, sorted(report.missing)
    assert not report.errors, "\n".join(report.failures())
    unseen = [p for p in PRIMITIVES if p.name not in report.seen
              and getattr(p.impl, "__module__", "").startswith("fnad_nn")]
    for p in unseen:  # not used by any layer (e.g. helpers kept for users): a unary call
        x = np.linspace(-2, 2, 6, dtype=dt).reshape(2, 3)
        aval = abstract_eval(p, x)
        out = p.impl(x)
        assert (aval.shape, aval.dtype) == (out.shape, out.dtype), p.name
