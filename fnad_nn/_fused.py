"""Fused primitives for the layers' hot paths: fewer NumPy passes and fresh arrays.

Each forward works in place on the one array it allocates (a fresh large array costs page
faults as well as a pass). Every rule is written with `fnp` (or these primitives), so higher
derivatives work as for any composition:

- `affine(x, w, b)`: `x @ w + b` with the bias added in place.
- `attention_softmax(s, drop, scale)`: `softmax(s * scale)` over the last axis with the
  positions where `drop` is True removed (probability exactly 0). A row with every position
  dropped or -inf gives zeros (so do its gradients: p = 0), and a row holding +inf gives NaN,
  in every dtype and path, as PyTorch's scaled_dot_product_attention (`torch._safe_softmax`);
  its VJP is `softmax_vjp(g, p, scale) = scale * p * (g - sum(g * p))`.
- `normalize(x, eps)`: `(x - mean) / sqrt(var + eps)` over the last axis (layer norm without
  the affine part); its VJP is the primitive `normalize_vjp(g, xhat, x, eps) =
  rstd * (g - mean(g) - xhat * mean(g * xhat))`, whose own rules use
  `ln_rstd(x, eps) = 1 / sqrt(var + eps)`, itself a primitive.
- `scale_shift(x, scale, bias)`: `x * scale + bias` (bias optional).
- `sum_leading(g, n_keep)`: `g` summed over all but its last `n_keep` axes (bias and scale
  gradients), as a vector-matrix product.
- `contiguous(x)`: a C-ordered copy of a strided view (identity for derivatives), so that
  batched matmuls run on plain layouts.

The softmax, layer-norm and (in _activations.py) GELU primitives run fnad.kernels.cpu's
fused float32 kernels where they apply, and these NumPy formulations everywhere else.
"""

import numpy as np

import fnad.numpy as fnp
from fnad.extend import (array_module, as_primitive, defabstract_eval, defbatch, defjvp, defvjp,
                         dtype_rule, elementwise_batch, keep_batch, lead_batch, primitive,
                         same_rule, to_front)

from fnad.kernels import cpu as _cpu

from ._util import shape_of

__all__ = ["contiguous", "affine", "attention_softmax", "softmax_vjp", "normalize",
           "normalize_vjp", "ln_rstd", "scale_shift", "sum_leading"]


def _sum_leading_impl(g, n_keep):
    xp = array_module(g)
    lead = g.ndim - n_keep
    if type(g) is np.ndarray and g.dtype in (np.float32, np.float64):
        # a vector-matrix product: ~1.7x faster than NumPy's sum down the rows (bias gradients);
        # for any layout, so that jit and eager code take the same path and get the same bits
        rows = np.ascontiguousarray(g).reshape(-1, int(np.prod(g.shape[lead:], dtype=np.int64)))
        return (np.ones(rows.shape[0], g.dtype) @ rows).reshape(g.shape[lead:])
    return xp.sum(g, axis=tuple(range(lead)))


# the sum over the leading axes (a bias's or a scale's gradient) as one primitive
sum_leading = primitive(_sum_leading_impl, "sum_leading")
defvjp(sum_leading, lambda c, ans, g, n_keep: fnp.broadcast_to(c, shape_of(g)))
defjvp(sum_leading, lambda t, ans, g, n_keep: sum_leading(t, n_keep))


def _batch_sum_leading(args, dims):
    g, n_keep = to_front(args[0], dims[0]), args[1]
    nd = len(fnp.shape(g))
    return fnp.sum(g, axis=tuple(range(1, nd - n_keep))), 0


defbatch(sum_leading, _batch_sum_leading)


def _sum_lead(g, n_keep):
    """Sum `g` over all but its last `n_keep` axes."""
    nd = len(shape_of(g))
    return sum_leading(g, n_keep) if nd > n_keep else g


def _add_into(y, b):
    """`y + b`, in place when that keeps y's dtype (it is a fresh array we own)."""
    if b is None:
        return y
    if np.result_type(y.dtype, b.dtype) == y.dtype:
        y += b
        return y
    return y + b


# ----------------------------------------------------------------------------- layout

def _contiguous_impl(x):
    return array_module(x).asarray(x, order="C")  # ascontiguousarray makes 0-d arrays 1-d


contiguous = primitive(_contiguous_impl, "contiguous")
defvjp(contiguous, lambda g, ans, x: g)
defjvp(contiguous, lambda t, ans, x: t)
defbatch(contiguous, keep_batch(contiguous))


# ----------------------------------------------------------------------------- affine

def _affine_impl(x, w, b):
    return _add_into(array_module(x).matmul(x, w), b)


def _affine_dx(g, ans, x, w, b):
    return fnp.matmul(g, fnp.swapaxes(w, -1, -2))


def _affine_dw(g, ans, x, w, b):
    return fnp.matmul(fnp.swapaxes(x, -1, -2), g)


def _affine_db(g, ans, x, w, b):
    return _sum_lead(g, len(shape_of(b)))


affine = primitive(_affine_impl, "affine")
defvjp(affine, _affine_dx, _affine_dw, _affine_db)
defjvp(affine,
       lambda t, ans, x, w, b: fnp.matmul(t, w),
       lambda t, ans, x, w, b: fnp.matmul(x, t),
       lambda t, ans, x, w, b: fnp.broadcast_to(t, shape_of(ans)))


def _batch_affine(args, dims):
    """The input alone batched: one affine over the lifted batch; else matmul's and add's
    rules."""
    (x, w, b), (dx, dw, db) = args, dims
    if dw is None and db is None:
        return affine(to_front(x, dx), w, b), 0
    y, dy = as_primitive(fnp.matmul).batch([x, w], [dx, dw])
    if b is None:
        return y, dy
    return as_primitive(fnp.add).batch([y, b], [dy, db])


defbatch(affine, _batch_affine)


# ----------------------------------------------------------------------------- softmax

def _last_sum(xp, a):
    """`a.sum(-1, keepdims=True)` by einsum: 3-4x faster on short rows (64 scores)."""
    if a.dtype.itemsize < 4:  # NumPy's sum accumulates float16 in float32, einsum does not
        return xp.sum(a, axis=-1, keepdims=True, dtype=np.float32).astype(a.dtype)
    return xp.einsum("...i->...", a)[..., None]


def _last_dot(xp, a, b):
    """`(a * b).sum(-1, keepdims=True)` without the product's temporary array."""
    if a.dtype.itemsize < 4 or b.dtype.itemsize < 4:
        return _last_sum(xp, a * b)
    # einsum's order of summation follows the layout: C order, so that a transposed view (eager)
    # and its copy (jit) give the same bits (program fuzzer seed 1054)
    a, b = xp.ascontiguousarray(a), xp.ascontiguousarray(b)
    return xp.einsum("...i,...i->...", a, b)[..., None]


def _row_max(xp, p):
    """Max over the last axis, keepdims, as elementwise maxima of (overlapping) halves: a
    last-axis max reduction of short rows is several times slower in NumPy. Always a new
    array (a copy for rows of one), which the caller may write."""
    m = p
    while m.shape[-1] > 1:
        n, h = m.shape[-1], (m.shape[-1] + 1) // 2
        m = xp.maximum(m[..., :h], m[..., n - h:])
    return p.copy() if m is p else m


def _attention_softmax_impl(s, drop, scale):
    p = _cpu.attention_softmax(s, drop, scale)  # one pass on every core, where it applies
    if p is not None:
        return p
    xp = array_module(s)
    p = xp.multiply(s, scale)
    if drop is not None:
        xp.copyto(p, -np.inf, where=drop)
    m = _row_max(xp, p)
    xp.copyto(m, 0, where=m == -np.inf)  # a row of -inf: exp gives zeros, the sum 0 ...
    with np.errstate(invalid="ignore"):  # a row holding +inf: NaN, as the kernel, quietly
        p -= m
    xp.exp(p, out=p)
    d = _last_sum(xp, p)
    xp.copyto(d, 1, where=d == 0)  # ... and the row stays zeros, as the float32 kernel's
    p /= d
    return p


def _softmax_vjp_impl(g, p, scale):
    u = _cpu.softmax_vjp(g, p, scale)
    if u is not None:
        return u
    xp = array_module(g)
    r = _last_dot(xp, g, p) if g.shape == p.shape else xp.sum(g * p, axis=-1, keepdims=True)
    u = xp.subtract(g, r)
    u *= p
    if scale != 1:
        u *= scale
    return u


attention_softmax = primitive(_attention_softmax_impl, "attention_softmax")
softmax_vjp = primitive(_softmax_vjp_impl, "softmax_vjp")
defvjp(attention_softmax, lambda g, ans, s, drop, scale: softmax_vjp(g, ans, scale))
defjvp(attention_softmax, lambda t, ans, s, drop, scale: softmax_vjp(t, ans, scale))


def _softmax_vjp_dp(ct, ans, g, p, scale):
    # d/dp of scale * (p*g - p*sum(g*p)) transposed onto ct
    r = fnp.sum(g * p, axis=-1, keepdims=True)
    c = fnp.sum(ct * p, axis=-1, keepdims=True)
    return (ct * (g - r) - g * c) * scale


def _softmax_vjp_jvp_p(t, ans, g, p, scale):
    r = fnp.sum(g * p, axis=-1, keepdims=True)
    return (t * (g - r) - p * fnp.sum(g * t, axis=-1, keepdims=True)) * scale


defvjp(softmax_vjp, lambda ct, ans, g, p, scale: softmax_vjp(ct, p, scale), _softmax_vjp_dp)
defjvp(softmax_vjp, lambda t, ans, g, p, scale: softmax_vjp(t, p, scale), _softmax_vjp_jvp_p)
defbatch(attention_softmax, lead_batch(attention_softmax, 2))
defbatch(softmax_vjp, lead_batch(softmax_vjp, 2))


# ----------------------------------------------------------------------------- layer norm

def _normalize_impl(x, eps):
    fast = _cpu.normalize(x, eps)
    if fast is not None:
        return fast[0]
    xp = array_module(x)
    xc = x - _last_sum(xp, x) / x.shape[-1]
    var = _last_dot(xp, xc, xc) / x.shape[-1]  # no squared temporary
    xc *= 1 / xp.sqrt(var + eps)
    return xc


def _ln_rstd_impl(x, eps=1e-5):
    fast = _cpu.normalize(x, eps)
    if fast is not None:
        return fast[1]
    xp = array_module(x)
    xc = x - _last_sum(xp, x) / x.shape[-1]
    var = _last_dot(xp, xc, xc) / x.shape[-1]
    return 1 / xp.sqrt(var + eps)


normalize = primitive(_normalize_impl, "normalize")
ln_rstd = primitive(_ln_rstd_impl, "ln_rstd")


def _normalize_rule_np(g, xhat, x, eps):
    """`_normalize_rule` on plain arrays, in four passes and one fresh array."""
    xp = array_module(g)
    d = x.shape[-1]
    m1 = _last_sum(xp, g) / d
    m2 = _last_dot(xp, g, xhat) / d
    out = xhat * m2
    xp.subtract(g, out, out=out)
    out -= m1
    out *= _ln_rstd_impl(x, eps)
    return out


def _normalize_vjp_impl(g, xhat, x, eps):
    out = _cpu.normalize_vjp(g, xhat, x, eps)  # one pass on every core, where it applies
    return out if out is not None else _normalize_rule_np(g, xhat, x, eps)


# The VJP (and JVP: the Jacobian is symmetric) of normalize as one primitive, so a jitted
# backward pass runs one kernel; its own rules make higher derivatives work.
normalize_vjp = primitive(_normalize_vjp_impl, "normalize_vjp")


def _normalize_rule(g, ans, x, eps):
    # the Jacobian rstd * (I - 1 1^T / d - xhat xhat^T / d) is symmetric: VJP = JVP
    return normalize_vjp(g, ans, x, eps)


def _nvjp_centered(x):
    return x - fnp.mean(x, axis=-1, keepdims=True)


def _nvjp_unscaled(g, xhat):
    """normalize_vjp's value before the factor k = ln_rstd(x): g - mean(g) - xhat mean(g xhat)."""
    return g - fnp.mean(g, axis=-1, keepdims=True) - xhat * fnp.mean(g * xhat, axis=-1,
                                                                      keepdims=True)


def _nvjp_dk(x, eps, t):
    """The tangent of k = ln_rstd(x) along t: -k^3 mean((x - mean(x)) t)."""
    k = ln_rstd(x, eps)
    return -k * k * k * fnp.mean(_nvjp_centered(x) * t, axis=-1, keepdims=True)


def _nvjp_dxhat(c, ans, g, xhat, x, eps):
    # out = k (g - mean(g) - xhat mean(g xhat)): d/dxhat transposed onto c
    m2 = fnp.mean(g * xhat, axis=-1, keepdims=True)
    return -ln_rstd(x, eps) * (c * m2 + g * fnp.mean(c * xhat, axis=-1, keepdims=True))


def _nvjp_dx(c, ans, g, xhat, x, eps):
    # through k alone, dk/dx = -k^3 (x - mean(x)) / d, onto sum(c * unscaled)
    k = ln_rstd(x, eps)
    s = fnp.sum(c * _nvjp_unscaled(g, xhat), axis=-1, keepdims=True)
    return -s * k * k * k * _nvjp_centered(x) / shape_of(x)[-1]


def _nvjp_jxhat(t, ans, g, xhat, x, eps):
    m2 = fnp.mean(g * xhat, axis=-1, keepdims=True)
    return -ln_rstd(x, eps) * (t * m2 + xhat * fnp.mean(g * t, axis=-1, keepdims=True))


def _nvjp_jx(t, ans, g, xhat, x, eps):
    return _nvjp_unscaled(g, xhat) * _nvjp_dk(x, eps, t)


defvjp(normalize_vjp, lambda c, ans, g, xhat, x, eps: normalize_vjp(c, xhat, x, eps),
       _nvjp_dxhat, _nvjp_dx)
defjvp(normalize_vjp, lambda t, ans, g, xhat, x, eps: normalize_vjp(t, xhat, x, eps),
       _nvjp_jxhat, _nvjp_jx)
defbatch(normalize_vjp, lead_batch(normalize_vjp, 3))


def _ln_rstd_vjp(g, ans, x, eps):
    d = shape_of(x)[-1]
    return (g * ans * ans * (-1.0 / d)) * normalize(x, eps)


def _ln_rstd_jvp(t, ans, x, eps):
    d = shape_of(x)[-1]
    return ans * ans * (-1.0 / d) * fnp.sum(normalize(x, eps) * t, axis=-1, keepdims=True)


defvjp(normalize, _normalize_rule)
defjvp(normalize, _normalize_rule)
defbatch(normalize, lead_batch(normalize, 1))
defvjp(ln_rstd, _ln_rstd_vjp)
defjvp(ln_rstd, _ln_rstd_jvp)
defbatch(ln_rstd, lead_batch(ln_rstd, 1))


def _scale_shift_impl(x, scale, bias):
    return _add_into(x * scale, bias)


scale_shift = primitive(_scale_shift_impl, "scale_shift")
defvjp(scale_shift,
       lambda g, ans, x, scale, bias: g * scale,
       lambda g, ans, x, scale, bias: _sum_lead(g * x, len(shape_of(scale))),
       lambda g, ans, x, scale, bias: _sum_lead(g, len(shape_of(bias))))
defjvp(scale_shift,
       lambda t, ans, x, scale, bias: t * scale,
       lambda t, ans, x, scale, bias: x * t,
       lambda t, ans, x, scale, bias: fnp.broadcast_to(t, shape_of(ans)))
defbatch(scale_shift, elementwise_batch(scale_shift))

# ----------------------------------------------------------------------------- abstract evaluation
# In NumPy's terms: affine is matmul then add, scale_shift multiply then add, the softmax
# kernels multiply elementwise; the row-wise kernels keep shapes (ln_rstd keeps one column).

_matmul_aval = as_primitive(fnp.matmul).abstract_eval
_add_aval = as_primitive(fnp.add).abstract_eval
_mul_aval = as_primitive(fnp.multiply).abstract_eval


def _add_bias(y, b):
    return y if b is None else _add_aval(y, b)


defabstract_eval(contiguous, same_rule)
defabstract_eval(sum_leading, lambda g, n_keep: g.update(shape=g.shape[len(g.shape) - n_keep:]))
defabstract_eval(affine, lambda x, w, b: _add_bias(_matmul_aval(x, w), b))
defabstract_eval(attention_softmax, lambda s, drop, scale: _mul_aval(s, scale))
defabstract_eval(softmax_vjp, lambda g, p, scale: _mul_aval(_mul_aval(g, p), scale))
defabstract_eval(normalize, dtype_rule(_normalize_impl))
defabstract_eval(normalize_vjp, lambda g, xhat, x, eps: _mul_aval(_mul_aval(g, xhat), x))
defabstract_eval(ln_rstd, lambda x, eps=1e-5: dtype_rule(_ln_rstd_impl)(x, eps).update(
    shape=x.shape[:-1] + (1,)))
defabstract_eval(scale_shift, lambda x, scale, bias: _add_bias(_mul_aval(x, scale), bias))
