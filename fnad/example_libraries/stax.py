"""`jax.example_libraries.stax`: a layer is a pair `init_fun(rng, input_shape) ->
(output_shape, params)` and `apply_fun(params, inputs, **kwargs)`; `serial` and `parallel`
combine layers. Dense's default initializers are JAX's (glorot normal weights, N(0, 1e-4)
biases), so the same key gives JAX's parameters.

Example:
  init, predict = stax.serial(stax.Dense(128), stax.Relu, stax.Dense(10), stax.LogSoftmax)
  out_shape, params = init(key, (-1, 784))
"""

import math

import numpy as np

from .. import numpy as fnp
from .. import random

__all__ = ["Dense", "serial", "parallel", "FanOut", "FanInSum", "FanInConcat", "Identity",
           "Flatten", "elementwise", "Relu", "LogSoftmax", "Softmax", "Softplus", "Sigmoid",
           "Tanh", "Elu", "Gelu", "glorot_normal", "normal"]

_TRUNC_STD = 0.87962566103423978  # std of a standard normal truncated to (-2, 2)


def glorot_normal(in_axis=-2, out_axis=-1):
    """JAX's glorot_normal(): truncated normal of variance 2 / (fan_in + fan_out)."""
    def init(key, shape, dtype=np.float32):
        fan_in, fan_out = shape[in_axis], shape[out_axis]
        receptive = math.prod(shape) / fan_in / fan_out
        std = math.sqrt(2.0 / ((fan_in + fan_out) * receptive)) / _TRUNC_STD
        return random.truncated_normal(key, -2.0, 2.0, shape, dtype) * np.asarray(std, dtype)
    return init


def normal(stddev=1e-2):
    """JAX's normal(): stddev * N(0, 1)."""
    def init(key, shape, dtype=np.float32):
        return random.normal(key, shape, dtype) * np.asarray(stddev, dtype)
    return init


def Dense(out_dim, W_init=None, b_init=None):
    """A fully connected layer `inputs @ W + b`."""
    W_init = glorot_normal() if W_init is None else W_init
    b_init = normal() if b_init is None else b_init

    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return fnp.matmul(inputs, W) + b

    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying `fun` to its input."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


def _log_softmax(x, axis=-1):
    return x - fnp.logsumexp(x, axis=axis, keepdims=True)


def _softmax(x, axis=-1):
    return fnp.exp(_log_softmax(x, axis))


Relu = elementwise(lambda x: fnp.maximum(x, 0))
LogSoftmax = elementwise(_log_softmax, axis=-1)
Softmax = elementwise(_softmax, axis=-1)
Softplus = elementwise(lambda x: fnp.logaddexp(x, 0))
Sigmoid = elementwise(lambda x: 0.5 * (fnp.tanh(0.5 * x) + 1))
Tanh = elementwise(fnp.tanh)
Elu = elementwise(lambda x: fnp.where(x > 0, x, fnp.expm1(fnp.where(x > 0, 0.0, x))))
Gelu = elementwise(lambda x: 0.5 * x * (1 + fnp.tanh(math.sqrt(2 / math.pi)
                                                     * (x + 0.044715 * x ** 3))))
Identity = elementwise(lambda x: x)
Flatten = (lambda rng, input_shape: ((input_shape[0], math.prod(input_shape[1:])), ()),
           lambda params, inputs, **kwargs: fnp.reshape(inputs, (inputs.shape[0], -1)))


def FanOut(num):
    """A layer copying its input into a list of `num` outputs."""
    return (lambda rng, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [inputs] * num)


FanInSum = (lambda rng, input_shape: (input_shape[0], ()),
            lambda params, inputs, **kwargs: sum(inputs[1:], inputs[0]))


def FanInConcat(axis=-1):
    """A layer concatenating its list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(s[ax] for s in input_shape)
        return tuple(input_shape[0][:ax]) + (size,) + tuple(input_shape[0][ax + 1:]), ()

    def apply_fun(params, inputs, **kwargs):
        return fnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def serial(*layers):
    """Layers in sequence; params is the list of theirs. A `rng=` keyword to apply_fun is
    split among the layers, as JAX's."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, p = init(layer_rng, input_shape)
            params.append(p)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(apply_funs)) if rng is not None else (None,) * len(
            apply_funs)
        for fun, p, r in zip(apply_funs, params, rngs):
            inputs = fun(p, inputs, rng=r, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """Layers applied to the matching entries of a list input; params is the tuple of theirs."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(init_funs))
        shapes, params = zip(*[init(r, s) for init, r, s in zip(init_funs, rngs, input_shape)])
        return shapes, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(apply_funs)) if rng is not None else (None,) * len(
            apply_funs)
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun
