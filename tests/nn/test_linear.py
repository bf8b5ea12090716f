import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.func import functional_call

import fnad
import fnad.numpy as fnp
import fnad_nn as nn
from fnad.test_util import check_grads
from tests.nn.helpers import assert_close, parity, randn


def lin_params(d_in, d_out, seed=0, bias=True):
    return {"w": randn(d_in, d_out, seed=seed),
            "b": randn(d_out, seed=seed + 1) if bias else None}  # None: no bias (bias=False)


@pytest.mark.parametrize("lead", [(), (5,), (2, 3), (2, 1, 3)], ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_linear_torch(lead, bias):
    p = lin_params(4, 3, bias=bias)
    x = randn(*lead, 4, seed=3)
    out = parity(nn.linear, lambda p, x: F.linear(x, p["w"].T, p.get("b")), p, x)
    assert out.shape == lead + (3,)


def test_linear_module_functional_call():
    m = torch.nn.Linear(4, 3, dtype=torch.float64)
    p = lin_params(4, 3)
    parity(nn.linear, lambda p, x: functional_call(m, {"weight": p["w"].T, "bias": p["b"]},
                                                   (x,)), p, randn(6, 4))


def test_linear_check_grads_and_error():
    p = lin_params(3, 2)
    check_grads(nn.linear, (p, randn(2, 3)), order=2)
    with pytest.raises(ValueError, match="linear: the input has shape"):
        nn.linear(p, randn(2, 4))


def test_embedding_torch_repeated_ids():
    w = randn(10, 4)
    ids = np.array([[1, 1, 3], [9, 1, 0]])
    out = parity(lambda p, _: nn.embedding(p, ids),
                 lambda p, _: F.embedding(torch.tensor(ids), p["w"]), {"w": w}, None)
    assert out.shape == (2, 3, 4)
    g = fnad.grad(lambda p: fnp.sum(nn.embedding(p, ids)))({"w": w})["w"]
    assert g[1, 0] == 3  # three lookups of id 1 accumulate


def test_embedding_rejects_floats():
    with pytest.raises(TypeError, match="embedding: ids must be an integer"):
        nn.embedding({"w": randn(3, 2)}, np.array([0.0]))


def test_tied_weights_sum_gradients():
    # one table used for the lookup and (transposed) for the output projection
    w = randn(7, 4, seed=1)
    ids = np.array([[0, 3, 3, 6]])

    def model(params):
        h = nn.embedding({"w": params["tok"]}, ids)
        logits = fnp.matmul(fnp.tanh(h), params["tok"].T)
        return nn.sparse_softmax_cross_entropy(logits, np.array([[3, 3, 6, 0]]))

    params = {"tok": w}
    assert len(fnad.tree_leaves(params)) == 1
    g = fnad.grad(model)(params)["tok"]
    t = torch.tensor(w, requires_grad=True)
    h = t[torch.tensor(ids)]
    F.cross_entropy((torch.tanh(h) @ t.T).reshape(-1, 7), torch.tensor([3, 3, 6, 0])).backward()
    assert_close(g, t.grad)
    # and it equals the sum of the two uses' gradients taken separately
    g_lookup = fnad.grad(lambda a: model_split(a, w))(w)
    g_proj = fnad.grad(lambda b: model_split(w, b))(w)
    assert_close(g, g_lookup + g_proj, tol=1e-12)


def model_split(a, b):
    h = nn.embedding({"w": a}, np.array([[0, 3, 3, 6]]))
    logits = fnp.matmul(fnp.tanh(h), b.T)
    return nn.sparse_softmax_cross_entropy(logits, np.array([[3, 3, 6, 0]]))


def test_mlp_torch():
    sizes = [5, 8, 6, 3]
    params = [lin_params(a, b, seed=i) for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]))]
    seq = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 6),
                              torch.nn.ReLU(), torch.nn.Linear(6, 3)).double()

    def tfn(p, x):
        sd = {}
        for i, layer in zip((0, 2, 4), p):
            sd[f"{i}.weight"], sd[f"{i}.bias"] = layer["w"].T, layer["b"]
        return functional_call(seq, sd, (x,))

    out = parity(nn.mlp, tfn, params, randn(2, 3, 5))
    assert out.shape == (2, 3, 3)
    assert sum(x.size for x in fnad.tree_leaves(params)) == sum(
        p.numel() for p in seq.parameters())


def test_sequential_and_flatten():
    model = nn.sequential([nn.flatten, nn.linear, nn.relu, nn.linear])
    params = [None, lin_params(12, 5), None, lin_params(5, 2, seed=4)]
    x = randn(3, 2, 2, 3)
    parity(model, lambda p, x: F.linear(F.relu(F.linear(torch.flatten(x, 1), p[1]["w"].T,
                                                         p[1]["b"])), p[3]["w"].T, p[3]["b"]),
           params, x)
    assert nn.flatten(np.zeros((2, 3, 4, 5)), 1, 2).shape == (2, 12, 5)
    with pytest.raises(ValueError, match="sequential: 4 layers but 3"):
        model(params[:3], x)
