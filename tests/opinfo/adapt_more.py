"""Argument adapters of the product, linear algebra, FFT, special-function, fnad_nn and
torch.masked OpInfos for tests/opinfo/mapping.py."""

import numpy as np

import fnad.numpy as fnp
import fnad.scipy.linalg as sla
import fnad.scipy.special as sp
import fnad_nn as nn
from tests.opinfo.adapt import Skip, ax, ddof, kw, none


def scipy_ref(name):
    """SciPy's function decides (known.DIFFERENT)."""
    def run(x, **k):
        import scipy.special
        return getattr(scipy.special, name)(x)
    return run


# ----------------------------------------------------------------------------- products

def addmm(x, a, b, beta=1, alpha=1, **k):
    none(k)
    return beta * x + alpha * fnp.matmul(a, b)


def addbmm(x, a, b, beta=1, alpha=1, **k):
    none(k)
    return beta * x + alpha * fnp.sum(fnp.matmul(a, b), axis=0)


def addr(x, a, b, beta=1, alpha=1, **k):
    none(k)
    return beta * x + alpha * fnp.outer(a, b)


def tensordot(a, b, dims=2, **k):
    none(k)
    if isinstance(dims, (list, tuple)):
        dims = tuple(tuple(d) if isinstance(d, (list, tuple)) else d for d in dims)
        pa, pb = ((d,) if isinstance(d, int) else d for d in dims)
        if any(np.shape(a)[i] != np.shape(b)[j] for i, j in zip(pa, pb)):
            raise Skip("contracted axes of different sizes (torch broadcasts 1s; NumPy refuses)")
    return fnp.tensordot(a, b, axes=dims)


def einsum(xs, eq, **k):
    none(k)
    return fnp.einsum(eq, *xs)


def vecdot(x, y, dim=-1, **k):
    none(k)
    return fnp.sum(fnp.multiply(fnp.conj(x), y), axis=dim)


def multi_dot(xs, **k):
    none(k)
    return fnp.linalg.multi_dot(list(xs))


# ----------------------------------------------------------------------------- linalg

def upper(f):
    def run(x, upper=False, **k):
        none(k)
        return f(x, upper=upper)
    return run


def cholesky_ex(x, upper=False, **k):
    none(k)
    return fnp.linalg.cholesky(x, upper=upper), np.zeros(np.shape(x)[:-2], np.int32)


def old_cholesky(x, upper=False, **k):
    none(k)
    return fnp.linalg.cholesky(x, upper=upper)


def inv_ex(x, **k):
    none(k)
    return fnp.linalg.inv(x), np.zeros(np.shape(x)[:-2], np.int32)


def solve(a, b, left=True, **k):
    none(k)
    if not left:
        raise Skip("left=False")
    if np.ndim(b) == 1 or (np.ndim(b) == np.ndim(a) - 1 and np.shape(b) == np.shape(a)[:-1]):
        return fnp.linalg.solve(a, b[..., None])[..., 0]
    return fnp.linalg.solve(a, b)


def solve_ex(a, b, **k):
    return solve(a, b, **k), np.zeros(np.shape(a)[:-2], np.int32)


def eigh(x, UPLO="L", **k):
    none(k)
    w, v = fnp.linalg.eigh(x, UPLO=UPLO)
    return w, fnp.abs(v) ** 2


def eigvalsh(x, UPLO="L", **k):
    none(k)
    return fnp.linalg.eigvalsh(x, UPLO=UPLO)


def svd_free(u, s, vh):
    k = np.shape(s)[-1]
    return s, fnp.abs(u[..., :k]) ** 2, fnp.abs(vh[..., :k, :]) ** 2


def full_svd(case):
    """Does the sample ask for the full SVD of a non-square matrix?"""
    full = case.kwargs.get("full_matrices", not case.kwargs.get("some", True))
    return bool(full) and np.shape(case.xs[0])[-1] != np.shape(case.xs[0])[-2]


def linalg_svd(x, full_matrices=True, **k):
    none(k)
    return svd_free(*fnp.linalg.svd(x, full_matrices=full_matrices))


def svd(x, some=True, **k):          # torch.svd returns V, not V^H
    none(k)
    return svd_free(*fnp.linalg.svd(x, full_matrices=not some))


def pinv(x, *args, rtol=None, hermitian=False, **k):
    k = kw(k, atol="atol")
    if k or args:
        raise Skip("atol or a tensor tolerance")
    return fnp.linalg.pinv(x, rtol=rtol, hermitian=hermitian)


def matrix_rank(x, atol=None, rtol=None, hermitian=False, **k):
    none(k)
    if atol is not None or np.ndim(rtol):
        raise Skip("atol or a tensor rtol")
    return fnp.linalg.matrix_rank(x, rtol=rtol, hermitian=hermitian)


def slogdet(x, **k):
    none(k)
    sign, logabs = fnp.linalg.slogdet(x)
    return sign, logabs


def logdet(x, **k):
    none(k)
    d = fnp.linalg.det(x)
    return fnp.log(d) if np.iscomplexobj(x) else fnp.log(fnp.where(d < 0, np.nan, d))


def lstsq(a, b, driver=None, **k):
    none(k)
    if np.ndim(a) != 2:
        raise Skip("batched lstsq")
    return fnp.linalg.lstsq(a, b)[0]


def matrix_power(x, n, **k):
    none(k)
    return fnp.linalg.matrix_power(x, n)


def tensorinv(x, ind=2, **k):
    none(k)
    return fnp.linalg.tensorinv(x, ind=ind)


def tensorsolve(a, b, dims=None, **k):
    none(k)
    return fnp.linalg.tensorsolve(a, b, axes=dims)


def cond(x, p=None, **k):
    none(k)
    return fnp.linalg.cond(x, p)


def vector_norm(x, ord=2, dim=None, keepdim=False, **k):
    k = kw(k)
    return fnp.linalg.vector_norm(x, ord=ord, axis=ax(dim), keepdims=keepdim)


def linalg_norm(x, ord=None, dim=None, keepdim=False, **k):
    none(k)
    return fnp.linalg.norm(x, ord=ord, axis=ax(dim), keepdims=keepdim)


def matrix_norm(x, ord="fro", dim=(-2, -1), keepdim=False, **k):
    none(k)
    if tuple(dim) != (-2, -1):
        raise Skip("matrix_norm over other axes")
    return fnp.linalg.matrix_norm(x, ord=ord, keepdims=keepdim)


def norm(x, p="fro", dim=None, keepdim=False, **k):
    none(k)
    dim = ax(dim)
    if p == "fro" or p is None:
        p = None if dim is None or isinstance(dim, int) or len(dim) == 2 else 2
        if dim is None:
            return fnp.linalg.vector_norm(x)
    if p == "nuc":
        return fnp.linalg.norm(x, "nuc", axis=dim, keepdims=keepdim)
    if dim is None or isinstance(dim, int) or len(dim) != 2:
        return fnp.linalg.vector_norm(x, ord=2 if p is None else p, axis=dim, keepdims=keepdim)
    return fnp.linalg.norm(x, ord=p if p is not None else "fro", axis=dim, keepdims=keepdim)


def solve_triangular(a, b, upper, left=True, unitriangular=False, **k):
    none(k)
    if not left:
        raise Skip("left=False")
    return sla.solve_triangular(a, b, lower=not upper, unit_diagonal=unitriangular)


def triangular_solve(b, a, upper=True, transpose=False, unitriangular=False, **k):
    none(k)
    x = sla.solve_triangular(a, b, trans=1 if transpose else 0, lower=not upper,
                             unit_diagonal=unitriangular)
    return x, a + 0


def cholesky_solve(b, c, upper=False, **k):
    none(k)
    return sla.cho_solve((c, not upper), b)


def cholesky_inverse(c, upper=False, **k):
    none(k)
    eye = np.broadcast_to(np.eye(np.shape(c)[-1], dtype=c.dtype), np.shape(c))
    return sla.cho_solve((c, not upper), eye)


def matrix_exp(x, **k):
    none(k)
    return sla.expm(x)


def vander(x, N=None, **k):
    none(k)
    x = fnp.atleast_1d(x)
    n = np.shape(x)[-1] if N is None else N
    return fnp.stack([fnp.power(x, i) for i in range(n)], axis=-1) if n else fnp.zeros(
        np.shape(x) + (0,), x.dtype)


def pinverse(x, rcond=1e-15, **k):
    none(k)
    return fnp.linalg.pinv(x, rcond=rcond)


def qr(x, mode="reduced", **k):
    none(k)
    return tuple(fnp.linalg.qr(x, mode=mode))


def old_qr(x, some=True, **k):
    none(k)
    return tuple(fnp.linalg.qr(x, mode="reduced" if some else "complete"))


# ----------------------------------------------------------------------------- fft

def fft(name, kind="1"):
    def run(x, n=None, dim=None, norm=None, s=None, **k):
        none(k)
        f = getattr(fnp.fft, name)
        if kind == "1":
            return f(x, n=n, axis=-1 if dim is None else dim, norm=norm)
        if kind == "2" and dim is None:
            dim = (-2, -1)
        dim, s = ((d,) if isinstance(d, int) else d for d in (ax(dim), s))
        if dim is None and s is not None:       # torch: s sizes the last len(s) axes
            dim = tuple(range(-len(s), 0))
        return f(x, s=s, axes=dim, norm=norm)
    return run


def shift(name):
    def run(x, dim=None, **k):
        none(k)
        return getattr(fnp.fft, name)(x, axes=ax(dim))
    return run


# ----------------------------------------------------------------------------- special

def polygamma(x, n, **k):
    none(k)
    return sp.polygamma(n, x)


def mvlgamma(x, p, **k):
    none(k)
    return sp.multigammaln(x, p)


# ----------------------------------------------------------------------------- fnad_nn

def act(f, **names):
    def run(x, *args, inplace=False, **k):
        k = kw(k, **names)
        if args:
            raise Skip("positional activation arguments")
        return f(x, **k)
    return run


def gelu(x, approximate="none", **k):
    none(k)
    return nn.gelu(x, approximate=approximate == "tanh")


def softmax(f, neg=False):
    def run(x, dim, dtype=None, **k):
        none(k)
        if np.ndim(x) and np.shape(x)[dim] == 0:
            raise Skip("an empty softmax axis: SciPy refuses it (known.DIFFERENT)")
        if dtype is not None:
            if np.iscomplexobj(x) and not np.issubdtype(dtype, np.complexfloating):
                raise Skip("complex input cast to a real dtype (torch drops the imaginary part)")
            x = fnp.astype(x, dtype)
        return f(-x if neg else x, axis=dim)
    return run


def linear(x, w, b=None, **k):
    none(k)
    if np.ndim(w) != 2:
        raise Skip("1-d weight")
    return nn.linear({"w": fnp.transpose(w), "b": b}, x)  # "b": None is a layer without bias


def conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1, **k):
    none(k)
    if isinstance(padding, str) and padding == "same" and (stride != 1 or any(
            (d * (s - 1)) % 2 for d, s in zip(np.broadcast_to(dilation, 2), np.shape(w)[-2:]))):
        raise Skip("padding='same' with a stride or an even kernel (known.DIFFERENT)")
    return nn.conv2d({"w": w, "b": b}, x, stride=stride, padding=padding, dilation=dilation)


def layer_norm(x, shape, w=None, b=None, eps=1e-5, **k):
    none(k)
    if len(shape) != 1 or w is None:
        raise Skip("layer norm over several axes or without weight")
    p = {"scale": w} if b is None else {"scale": w, "bias": b}
    return nn.layer_norm(p, x, eps=eps)


def rms_norm(x, shape, w=None, eps=None, **k):
    none(k)
    if len(shape) != 1 or w is None or eps is None:
        raise Skip("rms norm over several axes, without weight or with torch's default eps")
    return nn.rms_norm({"scale": w}, x, eps=eps)


def mse(x, y, reduction="mean", **k):
    none(k)
    return nn.mse_loss(x, y, reduction=reduction)


def bce_logits(x, y, weight=None, reduction="mean", pos_weight=None, **k):
    none(k)
    if weight is not None:
        raise Skip("weight")
    return nn.binary_cross_entropy_with_logits(x, y, pos_weight=pos_weight,
                                               reduction=reduction)


def nll(x, t, weight=None, ignore_index=-100, reduction="mean", **k):
    none(k)
    if weight is not None or np.ndim(x) != 2:
        raise Skip("class weights or spatial nll_loss")
    return nn.nll_loss(x, t, ignore_index=ignore_index, reduction=reduction)


def l1(x, y, reduction="mean", **k):
    none(k)
    d = fnp.abs(x - y)
    return {"mean": fnp.mean, "sum": fnp.sum, "none": lambda a: a}[reduction](d)


def smooth_l1(x, y, reduction="mean", beta=1.0, **k):
    none(k)
    d = fnp.abs(x - y)
    loss = d - 0.5 * beta if beta == 0 else fnp.where(d < beta, 0.5 * d ** 2 / beta,
                                                      d - 0.5 * beta)
    return {"mean": fnp.mean, "sum": fnp.sum, "none": lambda a: a}[reduction](loss)


def normalize(x, p=2.0, dim=1, eps=1e-12, **k):
    none(k)
    n = fnp.linalg.vector_norm(x, ord=p, axis=dim, keepdims=True)
    return x / fnp.maximum(n, eps)


def cosine_similarity(x, y, dim=1, eps=1e-8, **k):
    none(k)
    x, y = fnp.broadcast_arrays(x, y)
    nx = fnp.linalg.vector_norm(x, axis=dim)
    ny = fnp.linalg.vector_norm(y, axis=dim)
    return fnp.sum(x * y, axis=dim) / fnp.maximum(nx * ny, eps)


def sdpa(q, kk, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **k):
    none(k)
    if dropout_p or attn_mask is not None:
        raise Skip("dropout or an attention mask")
    # torch's is_causal aligns the mask at the start (known.DIFFERENT["causal mask"])
    mask = np.tril(np.ones((np.shape(q)[-2], np.shape(kk)[-2]), bool)) if is_causal else None
    return nn.scaled_dot_product_attention(q, kk, v, mask=mask, scale=scale)


def embedding(w, idx, **k):
    none(k)
    return nn.embedding({"w": w}, idx)


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False, **k):
    none(k)
    if ceil_mode or return_indices:
        raise Skip("ceil_mode or return_indices")
    return nn.max_pool2d(x, kernel_size, stride=stride or None, padding=padding,
                         dilation=dilation)


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None, **k):
    none(k)
    if ceil_mode or not count_include_pad or divisor_override:
        raise Skip("ceil_mode, count_include_pad=False or divisor_override")
    return nn.avg_pool2d(x, kernel_size, stride=stride or None, padding=padding)


def glu(x, dim=-1, **k):
    none(k)
    a, b = fnp.split(x, 2, axis=dim)
    return a * sp.expit(b)


def masked_red(f, fill):
    def run(x, dim=None, keepdim=False, mask=None, **k):
        none(k)
        if mask is None:
            raise Skip("no mask")
        mask = np.broadcast_to(mask, np.shape(x))
        if fill == -np.inf and not np.all(np.any(mask, axis=ax(dim))):
            raise Skip("a fully masked slice (torch's masked semantics)")
        return f(fnp.where(mask, x, fill), axis=ax(dim), keepdims=keepdim)
    return run


def masked_mean(x, dim=None, keepdim=False, mask=None, **k):
    none(k)
    if mask is None:
        raise Skip("no mask")
    mask = np.broadcast_to(mask, np.shape(x))
    if not np.all(np.any(mask, axis=ax(dim))):
        raise Skip("a fully masked slice (torch gives nan)")
    return fnp.mean(x, axis=ax(dim), keepdims=keepdim, where=mask)


def masked_var(f):
    def run(x, dim=None, keepdim=False, mask=None, **k):
        k = dict(k)
        d = ddof(k)
        none(k)
        if mask is None:
            raise Skip("no mask")
        mask = np.broadcast_to(mask, np.shape(x))
        if not np.all(np.sum(mask, axis=ax(dim)) > d):
            raise Skip("too few unmasked elements")
        return f(x, axis=ax(dim), keepdims=keepdim, ddof=d, where=mask)
    return run
