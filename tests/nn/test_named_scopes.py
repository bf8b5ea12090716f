"""Named scopes in the transformer blocks and GPT: staged equations carry them, so a
picture of a model shows (and folds) its blocks."""

import numpy as np

import fnad
import fnad.numpy as fnp
import fnad_nn as nn
from fnad_nn.models import GPTConfig, gpt, init_gpt


def test_gpt_blocks_are_scopes_and_fold():
    c = GPTConfig(vocab=11, d_model=8, n_heads=2, n_layers=3, max_len=4, dtype=np.float64)
    params = init_gpt(fnad.random.PRNGKey(0), c)
    tok = np.array([[1, 2, 3, 4]])

    def loss(p):
        return fnp.mean(gpt(p, c, tok))

    g = fnad.make_graph(loss)(params)
    scopes = [tuple(e.scope) for e in g.eqns]
    assert {s for s in scopes if s} == {("block_0",), ("block_1",), ("block_2",)}
    assert scopes.count(("block_0",)) == scopes.count(("block_2",)) > 0
    dot = g.to_dot()
    assert 'label="block_0 .. block_2 x3"' in dot and 'label="block_1"' not in dot
    assert len(g.to_dot(scope="block_1", fold=False)) < len(g.to_dot(fold=False))
    np.testing.assert_allclose(g(params), loss(params), rtol=1e-12)


def test_transformer_and_decoder_blocks_are_scopes():
    key = fnad.random.PRNGKey(1)
    x = np.random.default_rng(0).standard_normal((1, 3, 8))
    p = nn.init_transformer_block(key, 8, 2, dtype=np.float64)
    g = fnad.make_graph(lambda x: nn.transformer_block(p, x, causal=True))(x)
    assert all(tuple(e.scope) == ("transformer_block",) for e in g.eqns)
    pd = nn.init_decoder_block(key, 8, 2, dtype=np.float64)
    g = fnad.make_graph(lambda x: nn.decoder_block(pd, x, x))(x)
    assert all(tuple(e.scope) == ("decoder_block",) for e in g.eqns)
    np.testing.assert_allclose(g(x), nn.decoder_block(pd, x, x), rtol=1e-12)
