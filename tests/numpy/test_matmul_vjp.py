"""The VJP of a stack of matrices times one 2-D weight, `x (..., m, k) @ w (k, n)`: both
cotangents are one GEMM over all rows (as PyTorch computes them), not a GEMM per matrix
followed by a sum over the stack."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp

torch = pytest.importorskip("torch")

SHAPES = [((3, 4, 5), (5, 6)), ((2, 3, 4, 5), (5, 2)), ((1, 1, 5), (5, 3)), ((0, 4, 5), (5, 6)),
          ((3, 4, 0), (0, 6)), ((3, 4, 5), (5, 0)), ((3, 4, 5), (5, 1))]


@pytest.mark.parametrize("sa, sb", SHAPES)
def test_cotangents_match_pytorch(sa, sb):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    g = rng.standard_normal(sa[:-1] + sb[-1:])
    ga, gb = fnad.vjp(fnp.matmul, a, b)[1](g)
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    (ta @ tb).backward(torch.tensor(g))
    assert ga.shape == sa and gb.shape == sb
    np.testing.assert_allclose(ga, ta.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gb, tb.grad.numpy(), rtol=1e-12, atol=1e-12)
    ja, jb = fnad.jit(lambda a, b, g: fnad.vjp(fnp.matmul, a, b)[1](g))(a, b, g)
    assert ja.tobytes() == ga.tobytes() and jb.tobytes() == gb.tobytes()


def test_one_gemm_over_the_rows():
    x, w = np.ones((8, 16, 32), np.float32), np.ones((32, 64), np.float32)
    prog = fnad.make_graph(fnad.grad(lambda x, w: fnp.sum(fnp.tanh(x @ w)),
                                     argnums=(0, 1)))(x, w)
    mms = [e for e in prog.eqns if e.prim.name == "matmul"]
    assert len(mms) == 3  # the forward, and one GEMM for each cotangent
    assert all(v.aval.ndim == 2 for e in mms[1:] for v in e.outvars)
    assert not [e for e in prog.eqns if e.prim.name == "sum" and e.outvars[0].aval.ndim == 2]
