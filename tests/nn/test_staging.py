"""Layers and losses read no concrete value of traced inputs (masks, labels, ids), so a
model can be staged (jit); a traced float attention mask gets its gradient."""

import numpy as np

import fnad
import fnad.numpy as fnp
import fnad_nn as nn
from fnad._ad.reverse import RevTrace
from fnad._core.tracer import getval
from fnad.test_util import check_grads
from tests.core.avalcheck import no_concrete_reads

R = np.random.default_rng(0)


def _traced(*xs):
    trace = RevTrace()
    return [trace.new_input(x) for x in xs]


def test_losses_and_masks_on_traced_inputs_match_plain_ones():
    logits = R.standard_normal((2, 5, 4))
    labels = np.array([[1, 0, 3, -100, 1], [0, 2, 1, 2, 3]])
    mask = np.array([[1, 1, 0, 1, 1], [1, 1, 1, 1, 0]], bool)
    ids = np.array([[3, 4, 0, 0], [5, 0, 0, 0]])
    x = R.standard_normal((2, 4, 8))
    params = nn.init_multi_head_attention(fnad.random.PRNGKey(0), 8, 2, dtype=np.float64)

    def run(logits, labels, mask, ids, x):
        return [
            nn.sparse_softmax_cross_entropy(logits, labels, ignore_index=-100, mask=mask),
            nn.sparse_softmax_cross_entropy(logits, fnp.where(labels < 0, 0, labels),
                                            label_smoothing=0.1),
            nn.nll_loss(nn.log_softmax(logits), fnp.where(labels < 0, 0, labels), mask=mask),
            nn.cross_entropy(nn.softmax(logits), fnp.where(labels < 0, 0, labels)),
            nn.one_hot(fnp.where(labels < 0, 0, labels), 4, dtype=np.float64),
            nn.multi_head_attention(params, x, mask=nn.padding_mask(ids, pad_id=0)),
        ]

    plain = run(logits, labels, mask, ids, x)
    with no_concrete_reads():
        traced = run(*_traced(logits, labels, mask, ids, x))
    for a, b in zip(plain, traced):
        b = getval(b)
        assert np.shape(a) == np.shape(b) and np.result_type(a) == np.result_type(b)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_float_attention_mask_gets_its_gradient():
    q, k, v = (R.standard_normal((2, 3, 4)) for _ in range(3))
    bias = R.standard_normal((3, 3))
    check_grads(lambda b: nn.scaled_dot_product_attention(q, k, v, mask=b), (bias,), order=1)
    g = fnad.grad(lambda b: fnp.sum(nn.scaled_dot_product_attention(q, k, v, mask=b) ** 2))(bias)
    assert np.abs(g).max() > 0
