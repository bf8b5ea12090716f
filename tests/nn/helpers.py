"""Torch-parity harness for fnad_nn tests (float64, copied weights).

`parity(fn, torch_fn, params, *inputs)` runs `fn(params, *inputs)` in fnad and
`torch_fn(tparams, *tinputs)` in PyTorch, where `tparams`/`tinputs` are the same arrays as
torch leaf tensors in fnad's layout (torch_fn maps them onto the torch module, e.g. with
`torch.func.functional_call`). It compares outputs and the gradients of `sum(out * R)` for a
random cotangent R with respect to every float parameter and input. The error measure is
`max|a - b| / max(max|b|, 1e-4)` per array: a normwise relative error, whose floor keeps
gradients that are zero in exact arithmetic (e.g. of a key bias, to which softmax is
invariant) from dividing rounding noise by rounding noise; below the floor it is an absolute
error of at most 1e-14.
"""

import numpy as np
import torch

import fnad
from fnad.extend import getval

TOL = 1e-10


def rel_err(a, b):
    a = np.asarray(getval(a), np.float64)
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else np.asarray(b, np.float64)
    assert a.shape == b.shape, f"shapes differ: {a.shape} vs {b.shape}"
    if not b.size:
        return 0.0
    return np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-4)


def assert_close(a, b, tol=TOL, what="value"):
    e = rel_err(a, b)
    assert e <= tol, f"{what}: relative error {e:.3e} > {tol:.0e}"


def _is_float(a):
    return isinstance(a, np.ndarray) and a.dtype.kind == "f"


def to_torch(tree, grad=True):
    return fnad.tree_map(
        lambda a: torch.tensor(a, requires_grad=grad and _is_float(a))
        if isinstance(a, np.ndarray) else a, tree)


def parity(fn, torch_fn, params, *inputs, tol=TOL, seed=0):
    """Check forward values and all gradients of fn against torch_fn."""
    rng = np.random.default_rng(seed)
    out = fn(params, *inputs)
    out_leaves, _ = fnad.tree_flatten(out)
    cts = [rng.standard_normal(np.shape(o)) for o in out_leaves]
    float_args = [i for i, a in enumerate((params,) + inputs)
                  if any(_is_float(x) for x in fnad.tree_leaves(a))]

    def loss(*args):
        o = fn(*args)
        return sum(fnad.numpy.sum(x * c) for x, c in zip(fnad.tree_leaves(o), cts))

    grads = fnad.grad(loss, argnums=tuple(float_args))(params, *inputs)
    targs = [to_torch(a) for a in (params,) + inputs]
    tout = torch_fn(*targs)
    tout_leaves = fnad.tree_leaves(tout)
    assert len(tout_leaves) == len(out_leaves)
    for k, (a, b) in enumerate(zip(out_leaves, tout_leaves)):
        assert_close(a, b, tol, f"output {k}")
    total = sum((t * torch.tensor(c)).sum() for t, c in zip(tout_leaves, cts))
    total.backward()
    for n, g in zip(float_args, grads):
        for j, (ga, ta) in enumerate(zip(fnad.tree_leaves(g), fnad.tree_leaves(targs[n]))):
            if isinstance(ta, torch.Tensor) and ta.requires_grad:
                tg = ta.grad if ta.grad is not None else torch.zeros_like(ta)
                assert_close(ga, tg, tol, f"gradient of argument {n}, leaf {j}")
    return out


def randn(*shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale
