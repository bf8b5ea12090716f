"""2-D convolution (NCHW, stride, padding, dilation, groups) and max/avg pooling.

Ungrouped stride-1 convolutions (the common 3x3 "same" layers) run on the chunked
`conv_s1` primitives of `_conv_s1.py`, which never build the whole column matrix. Everything
else (strides, groups, pooling) rests on one pair of linear primitives: `im2col` (a strided
view of the padded input, copied once into `(N, C, kh, kw, H_out, W_out)`) and its transpose
`col2im` (a scatter-add of the kh * kw window offsets). Each is the other's VJP, so any
derivative order works. With the batch first, such a convolution is one batched matmul
`(O, C*kh*kw) @ (N, C*kh*kw, H_out*W_out)` whose result is already NCHW, and so are both
halves of its backward pass.
"""

import math

import numpy as np

import fnad.numpy as fnp
from fnad.extend import (array_module, defabstract_eval, defbatch, defjvp, defvjp, image_batch,
                         primitive)

from . import _init
from ._conv_s1 import conv_s1
from ._util import ParamSpec, check_params, shape_of, split_key

__all__ = ["init_conv2d", "conv2d", "max_pool2d", "avg_pool2d"]


def _pair(v, name, fname):
    if isinstance(v, (int, np.integer)):
        return (int(v), int(v))
    v = tuple(int(a) for a in v)
    if len(v) != 2:
        raise ValueError(f"{fname}: {name}={v} must be an int or a pair of ints.")
    return v


def _out_size(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


# ----------------------------------------------------------------------------- primitives

def _pad(xp, x, ph, pw, pad_value):
    n, c, h, w = x.shape
    out = xp.full((n, c, h + 2 * ph, w + 2 * pw), pad_value, x.dtype)
    out[:, :, ph:ph + h, pw:pw + w] = x
    return out


def _im2col_impl(x, kernel, stride, padding, dilation, pad_value=0.0):
    xp = array_module(x)
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    n, c, h, w = x.shape
    ho, wo = _out_size(h, kh, sh, ph, dh), _out_size(w, kw, sw, pw, dw)
    if ph or pw:
        x = _pad(xp, x, ph, pw, pad_value)
    s0, s1, s2, s3 = x.strides
    view = xp.lib.stride_tricks.as_strided(
        x, (n, c, kh, kw, ho, wo), (s0, s1, s2 * dh, s3 * dw, s2 * sh, s3 * sw))
    return xp.ascontiguousarray(view)


def _col2im_impl(cols, x_shape, kernel, stride, padding, dilation):
    xp = array_module(cols)
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    n, c, h, w = x_shape
    ho, wo = cols.shape[-2:]
    out = xp.zeros((n, c, h + 2 * ph, w + 2 * pw), cols.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * dh:i * dh + sh * (ho - 1) + 1:sh,
                j * dw:j * dw + sw * (wo - 1) + 1:sw] += cols[:, :, i, j]
    return out[:, :, ph:ph + h, pw:pw + w]


im2col = primitive(_im2col_impl, "im2col")
col2im = primitive(_col2im_impl, "col2im")
defvjp(im2col, lambda g, ans, x, k, s, p, d, pad_value=0.0: col2im(g, shape_of(x), k, s, p, d))
defjvp(im2col, lambda t, ans, x, k, s, p, d, pad_value=0.0: im2col(t, k, s, p, d))
defvjp(col2im, lambda g, ans, cols, xs, k, s, p, d: im2col(g, k, s, p, d))
defjvp(col2im, lambda t, ans, cols, xs, k, s, p, d: col2im(t, xs, k, s, p, d))
defbatch(im2col, image_batch(im2col))
defbatch(col2im, image_batch(col2im, shape_arg=1))  # x_shape's N grows with the batch



def _as_nchw(fname, x):
    s = shape_of(x)
    if len(s) < 3:
        raise ValueError(f"{fname}: input of shape {s} must be (..., C, H, W) (NCHW).")
    lead = s[:-3]
    return (fnp.reshape(x, (-1,) + s[-3:]) if len(lead) != 1 else x), lead


def _restore(y, lead):
    return y if len(lead) == 1 else fnp.reshape(y, lead + shape_of(y)[1:])


# ----------------------------------------------------------------------------- convolution

def init_conv2d(key, c_in, c_out, kernel_size, *, groups=1, bias=True, dtype=np.float32,
                w_init=None):
    """Parameters of a 2-D convolution in PyTorch's layout.

    The default draws weights and bias from `U(-1/sqrt(fan_in), 1/sqrt(fan_in))` with
    `fan_in = c_in / groups * kh * kw`, PyTorch's `nn.Conv2d` initialisation.

    Args:
      key: a `fnad.random.PRNGKey`.
      c_in, c_out: channel counts (both divisible by `groups`).
      kernel_size: int or `(kh, kw)`.
      groups: channel groups.
      bias: whether to include `b`.
      dtype: parameter dtype.
      w_init: optional initialiser `init(key, shape, dtype)` (use in_axis=1, out_axis=0 for
        fans).

    Returns:
      `{"w": (c_out, c_in // groups, kh, kw), "b": (c_out,)}` ("b" is None when bias=False).

    Example:
      params = init_conv2d(fnad.random.PRNGKey(0), 1, 32, 3)
      y = conv2d(params, x, padding=1)
    """
    kh, kw = _pair(kernel_size, "kernel_size", "init_conv2d")
    if c_in % groups or c_out % groups:
        raise ValueError(f"init_conv2d: c_in={c_in} and c_out={c_out} must be divisible by "
                         f"groups={groups}.")
    k1, k2 = split_key(key, 2)
    shape = (c_out, c_in // groups, kh, kw)
    fan_in = c_in // groups * kh * kw
    w = (w_init(k1, shape, dtype) if w_init is not None else
         _init.torch_default_uniform(k1, shape, dtype, fan_in=fan_in))
    b = _init.torch_default_uniform(k2, (c_out,), dtype, fan_in=fan_in) if bias else None
    return {"w": w, "b": b}


_CONV2D = ParamSpec("init_conv2d", {"w": 4, "b": 1}, nullable=("b",), same=[("b", 0, "w", 0)])


def conv2d(params, x, *, stride=1, padding=0, dilation=1):
    """2-D cross-correlation (PyTorch's `conv2d`) on NCHW input: the chunked stride-1
    primitive for ungrouped stride-1 layers, else im2col and one batched matmul. The group
    count is `C_in / w.shape[1]`.

    Args:
      params: `{"w": (C_out, C_in // groups, kh, kw), "b": (C_out,) or None}`.
      x: input `(..., C_in, H, W)`.
      stride, padding, dilation: ints or pairs; padding may be "same" (stride 1) or "valid".

    Returns:
      `(..., C_out, H_out, W_out)`.

    Example:
      params = init_conv2d(key, 3, 16, 3)
      conv2d(params, np.zeros((8, 3, 32, 32), np.float32), padding=1).shape  # (8, 16, 32, 32)
    """
    check_params("conv2d", params, x, spec=_CONV2D)
    w, b = params["w"], params["b"]
    c_out, c_g, kh, kw = shape_of(w)
    x, lead = _as_nchw("conv2d", x)
    n, c, h, wd = shape_of(x)
    if c % c_g:
        raise ValueError(f"conv2d: input has {c} channels but the weight {shape_of(w)} expects "
                         f"a multiple of {c_g} (C_in // groups).")
    groups = c // c_g
    if c_out % groups:
        raise ValueError(f"conv2d: {c_out} output channels do not split into {groups} groups.")
    stride = _pair(stride, "stride", "conv2d")
    dilation = _pair(dilation, "dilation", "conv2d")
    if padding == "valid":
        padding = 0
    if padding == "same":
        if stride != (1, 1):
            raise ValueError("conv2d: padding='same' needs stride=1; pass explicit padding.")
        padding = (dilation[0] * (kh - 1) // 2, dilation[1] * (kw - 1) // 2)
        if (dilation[0] * (kh - 1)) % 2 or (dilation[1] * (kw - 1)) % 2:
            raise ValueError("conv2d: padding='same' with an even effective kernel size is "
                             "asymmetric; pass explicit padding.")
    padding = _pair(padding, "padding", "conv2d")
    k = c_g * kh * kw
    if stride == (1, 1) and groups == 1:
        y = conv_s1(x, fnp.reshape(w, (c_out, k)), b, ((kh, kw), padding, dilation))
        return _restore(y, lead)
    cols = im2col(x, (kh, kw), stride, padding, dilation)
    ho, wo = shape_of(cols)[-2:]
    if groups == 1:
        y = fnp.matmul(fnp.reshape(w, (c_out, k)), fnp.reshape(cols, (n, k, ho * wo)))
    else:
        y = fnp.matmul(fnp.reshape(w, (groups, c_out // groups, k)),
                       fnp.reshape(cols, (n, groups, k, ho * wo)))
    y = fnp.reshape(y, (n, c_out, ho, wo))
    if b is not None:
        y = y + fnp.reshape(b, (c_out, 1, 1))
    return _restore(y, lead)


# ----------------------------------------------------------------------------- pooling

def _pool_args(fname, kernel_size, stride, padding, dilation):
    kernel = _pair(kernel_size, "kernel_size", fname)
    stride = kernel if stride is None else _pair(stride, "stride", fname)
    padding = _pair(padding, "padding", fname)
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise ValueError(f"{fname}: padding {padding} must be at most half the kernel {kernel}.")
    return kernel, stride, padding, _pair(dilation, "dilation", fname)


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1):
    """Max pooling over `(H, W)` windows (padding counts as -inf, as PyTorch).

    Args:
      x: input `(..., C, H, W)`.
      kernel_size: int or pair.
      stride: int or pair (default: kernel_size).
      padding, dilation: ints or pairs.

    Returns:
      `(..., C, H_out, W_out)`. Tied maxima share the gradient equally.

    Example:
      max_pool2d(np.zeros((8, 16, 28, 28), np.float32), 2).shape   # (8, 16, 14, 14)
    """
    k, s, p, d = _pool_args("max_pool2d", kernel_size, stride, padding, dilation)
    x, lead = _as_nchw("max_pool2d", x)
    cols = im2col(x, k, s, p, d, -math.inf)
    return _restore(fnp.max(cols, axis=(2, 3)), lead)


def avg_pool2d(x, kernel_size, stride=None, padding=0):
    """Average pooling over `(H, W)` windows; padded zeros count in the average (PyTorch's
    default `count_include_pad=True`).

    Args:
      x: input `(..., C, H, W)`.
      kernel_size: int or pair.
      stride: int or pair (default: kernel_size).
      padding: int or pair.

    Returns:
      `(..., C, H_out, W_out)`.

    Example:
      avg_pool2d(np.zeros((8, 16, 28, 28), np.float32), 2).shape   # (8, 16, 14, 14)
    """
    k, s, p, d = _pool_args("avg_pool2d", kernel_size, stride, padding, 1)
    x, lead = _as_nchw("avg_pool2d", x)
    cols = im2col(x, k, s, p, d)
    return _restore(fnp.mean(cols, axis=(2, 3)), lead)


# ----------------------------------------------------------------------------- abstract evaluation


def _im2col_aval(x, kernel, stride, padding, dilation, pad_value=0.0):
    n, c, h, w = x.shape
    ho, wo = (_out_size(*a) for a in zip((h, w), kernel, stride, padding, dilation))
    return x.update(shape=(n, c) + tuple(kernel) + (ho, wo))


defabstract_eval(im2col, _im2col_aval)
defabstract_eval(col2im, lambda cols, x_shape, *geometry: cols.update(shape=x_shape))
