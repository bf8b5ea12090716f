"""Dense layers: linear, embedding, MLP, sequential containers, flatten."""

import numpy as np

import fnad.numpy as fnp

from . import _init
from ._activations import relu
from ._fused import affine
from ._util import ParamSpec, check_last_dim, check_layers, check_params, shape_of, split_key

__all__ = ["init_linear", "linear", "init_embedding", "embedding", "init_mlp", "mlp",
           "init_sequential", "sequential", "flatten"]


def init_linear(key, d_in, d_out, *, bias=True, dtype=np.float32, w_init=None, b_init=None):
    """Parameters of an affine map `x @ w + b`.

    The default draws both `w` and `b` from `U(-1/sqrt(d_in), 1/sqrt(d_in))`, PyTorch's
    `nn.Linear` initialisation, so a model can start from the same distributions.

    Args:
      key: a `fnad.random.PRNGKey`.
      d_in, d_out: input and output sizes.
      bias: whether to include `b`.
      dtype: parameter dtype.
      w_init, b_init: optional initialisers `init(key, shape, dtype)` (see fnad_nn.init).

    Returns:
      `{"w": (d_in, d_out), "b": (d_out,)}` ("b" is None when bias=False).

    Example:
      params = init_linear(fnad.random.PRNGKey(0), 4, 3)
      y = linear(params, np.ones((2, 4), np.float32))    # (2, 3)
    """
    kw, kb = split_key(key, 2)
    if w_init is None:
        w = _init.torch_default_uniform(kw, (d_in, d_out), dtype, fan_in=d_in)
    else:
        w = w_init(kw, (d_in, d_out), dtype)
    b = None
    if bias:
        b = (_init.torch_default_uniform(kb, (d_out,), dtype, fan_in=d_in)
             if b_init is None else b_init(kb, (d_out,), dtype))
    return {"w": w, "b": b}


_LINEAR = ParamSpec("init_linear", {"w": 2, "b": 1}, nullable=("b",), same=[("b", 0, "w", 1)])
_EMBEDDING = ParamSpec("init_embedding", {"w": 2})


def linear(params, x):
    """Affine map `x @ w + b` over the last axis of `x`.

    Args:
      params: `{"w": (d_in, d_out), "b": (d_out,) or None}`; a missing or unexpected key,
        or an array of the wrong number of axes, raises a ValueError naming it.
      x: array of shape `(..., d_in)`, any leading batch axes.

    Returns:
      An array of shape `(..., d_out)`.

    Example:
      params = init_linear(key, 4, 3)
      linear(params, np.ones((5, 7, 4), np.float32)).shape   # (5, 7, 3)
    """
    check_params("linear", params, x, spec=_LINEAR)
    w, b = params["w"], params["b"]
    d_in, d_out = shape_of(w)
    check_last_dim("linear", x, d_in)
    lead = shape_of(x)[:-1]
    # one (N, d_in) @ (d_in, d_out) product: a single BLAS call forward and backward
    x2 = fnp.reshape(x, (-1, d_in)) if len(lead) != 1 else x
    y = affine(x2, w, b) if b is not None else fnp.matmul(x2, w)
    return fnp.reshape(y, lead + (d_out,)) if len(lead) != 1 else y


def init_embedding(key, num_embeddings, d, *, dtype=np.float32, w_init=None):
    """A lookup table of `num_embeddings` vectors of size `d`.

    The default draws `N(0, 1)`, PyTorch's `nn.Embedding` initialisation.

    Args:
      key: a `fnad.random.PRNGKey`.
      num_embeddings: vocabulary size.
      d: embedding size.
      dtype: parameter dtype.
      w_init: optional initialiser `init(key, shape, dtype)`.

    Returns:
      `{"w": (num_embeddings, d)}`.

    Example:
      params = init_embedding(fnad.random.PRNGKey(0), 100, 16)
      embedding(params, np.array([[1, 2, 3]])).shape   # (1, 3, 16)
    """
    init = w_init or _init.normal
    return {"w": init(key, (num_embeddings, d), dtype)}


def embedding(params, ids):
    """Rows of `params["w"]` at integer `ids`; the backward pass scatter-adds, so repeated
    ids accumulate their gradients.

    Args:
      params: `{"w": (num_embeddings, d)}`.
      ids: integer array of any shape.

    Returns:
      An array of shape `ids.shape + (d,)`.

    Example:
      embedding(params, np.array([0, 0, 5])).shape   # (3, d)
    """
    check_params("embedding", params, ids, call="embedding(params, ids)", spec=_EMBEDDING)
    ids = np.asarray(ids) if isinstance(ids, (list, tuple, int)) else ids
    if getattr(ids, "dtype", None) is None or ids.dtype.kind not in "iu":
        raise TypeError(f"embedding: ids must be an integer array, got dtype "
                        f"{getattr(ids, 'dtype', type(ids).__name__)}; cast with .astype(int).")
    return fnp.take(params["w"], ids, axis=0)


def init_mlp(key, sizes, *, bias=True, dtype=np.float32):
    """Parameters of a multi-layer perceptron with layer sizes `sizes`.

    Args:
      key: a `fnad.random.PRNGKey`.
      sizes: e.g. `[784, 128, 64, 10]` (input size first).
      bias: whether the linear layers have biases.
      dtype: parameter dtype.

    Returns:
      A list of `init_linear` dicts, one per layer.

    Example:
      params = init_mlp(fnad.random.PRNGKey(0), [4, 8, 2])
      mlp(params, np.ones((3, 4), np.float32)).shape   # (3, 2)
    """
    sizes = list(sizes)
    if len(sizes) < 2:
        raise ValueError(f"init_mlp: sizes={sizes} needs at least an input and an output size.")
    keys = split_key(key, len(sizes) - 1)
    return [init_linear(k, a, b, bias=bias, dtype=dtype)
            for k, a, b in zip(keys, sizes[:-1], sizes[1:])]


def mlp(params, x, *, activation=relu, final_activation=None):
    """Linear layers with `activation` between them (none after the last by default).

    Args:
      params: a list of linear params (from `init_mlp`).
      x: array of shape `(..., sizes[0])`.
      activation: elementwise function between layers.
      final_activation: optional function applied to the output.

    Returns:
      An array of shape `(..., sizes[-1])`.

    Example:
      params = init_mlp(key, [4, 8, 2])
      y = mlp(params, x, activation=fnad_nn.gelu)
    """
    check_layers("mlp", params, x, single="linear")
    for i, p in enumerate(params):
        x = linear(p, x)
        if i < len(params) - 1:
            x = activation(x)
    return x if final_activation is None else final_activation(x)


def init_sequential(key, inits):
    """Parameters of a sequence of layers.

    Args:
      key: a `fnad.random.PRNGKey`, split once per layer.
      inits: a list of `init(key) -> params` callables, or None for layers without
        parameters.

    Returns:
      A list with one params entry (None for parameter-free layers) per layer.

    Example:
      params = init_sequential(key, [lambda k: init_linear(k, 4, 8), None,
                                     lambda k: init_linear(k, 8, 2)])
    """
    keys = split_key(key, max(len(inits), 1))
    return [None if f is None else f(k) for f, k in zip(inits, keys)]


def sequential(layers):
    """Compose layers into one function `apply(params, x)`.

    Args:
      layers: a list of functions; entry i is called as `f(params[i], x)`, or as `f(x)` when
        `params[i]` is None (so activations and flatten fit in directly).

    Returns:
      `apply(params, x)` running the layers in order; params is the list from
      `init_sequential`, so every leaf is visible to an optimizer.

    Example:
      model = sequential([linear, relu, linear])
      y = model(params, x)
    """
    layers = list(layers)

    def apply(params, x):
        if len(params) != len(layers):
            raise ValueError(f"sequential: {len(layers)} layers but {len(params)} params entries; "
                             "build params with init_sequential over the same layers.")
        for f, p in zip(layers, params):
            x = f(x) if p is None else f(p, x)
        return x

    return apply


def flatten(x, start_axis=1, end_axis=-1):
    """Merge axes `start_axis..end_axis` into one (PyTorch's `flatten`, default from axis 1).

    Args:
      x: array.
      start_axis, end_axis: inclusive axis range to merge.

    Returns:
      The reshaped array.

    Example:
      flatten(np.zeros((8, 3, 4, 4))).shape   # (8, 48)
    """
    s = shape_of(x)
    nd = len(s)
    a, b = start_axis % nd, end_axis % nd
    if a > b:
        raise ValueError(f"flatten: start_axis={start_axis} comes after end_axis={end_axis} for "
                         f"shape {s}.")
    merged = int(np.prod(s[a:b + 1]))
    return fnp.reshape(x, s[:a] + (merged,) + s[b + 1:])
