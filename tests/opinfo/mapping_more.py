"""The second half of tests/opinfo/mapping.py's table: products, linear algebra, FFT, special
functions, fnad_nn and torch.masked. Merged into `mapping.MAPPING`."""

import numpy as np

import fnad.numpy as fnp
import fnad.scipy.linalg as sla
import fnad.scipy.special as sp
import fnad_nn as nn
from tests.opinfo.adapt import Entry, Skip, ax, bi, ddof, kw, none, un

E = Entry
NOGRAD = "no gradient (integer or boolean result)"
H = (0,)          # the first input is read as a Hermitian matrix (one triangle)
TRI_FWD = ("torch's forward mode of triangular_solve uses the whole tangent of A, not its "
           "triangle (wrong by finite differences); its VJP is right")
EXPM = "expm needs values to choose its squarings: jit refuses it (ConcretizationError)"
QR = "qr of complex input has no derivatives in fnad (NotImplementedError; docs/api.md)"


def scipy_ref(name):
    """SciPy's function decides (known.DIFFERENT)."""
    def run(x, **k):
        import scipy.special
        return getattr(scipy.special, name)(x)
    return run


# ----------------------------------------------------------------------------- products

def _addmm(x, a, b, beta=1, alpha=1, **k):
    none(k)
    return beta * x + alpha * fnp.matmul(a, b)


def _addbmm(x, a, b, beta=1, alpha=1, **k):
    none(k)
    return beta * x + alpha * fnp.sum(fnp.matmul(a, b), axis=0)


def _addr(x, a, b, beta=1, alpha=1, **k):
    none(k)
    return beta * x + alpha * fnp.outer(a, b)


def _tensordot(a, b, dims=2, **k):
    none(k)
    if isinstance(dims, (list, tuple)):
        dims = tuple(tuple(d) if isinstance(d, (list, tuple)) else d for d in dims)
    return fnp.tensordot(a, b, axes=dims)


def _einsum(xs, eq, **k):
    none(k)
    return fnp.einsum(eq, *xs)


def _vecdot(x, y, dim=-1, **k):
    none(k)
    return fnp.sum(fnp.conj(x) * y, axis=dim)


def _multi_dot(xs, **k):
    none(k)
    return fnp.linalg.multi_dot(list(xs))


# ----------------------------------------------------------------------------- linalg

def _upper(f):
    def run(x, upper=False, **k):
        none(k)
        return f(x, upper=upper)
    return run


def _cholesky_ex(x, upper=False, **k):
    none(k)
    return fnp.linalg.cholesky(x, upper=upper), np.zeros(np.shape(x)[:-2], np.int32)


def _old_cholesky(x, upper=False, **k):
    none(k)
    return fnp.linalg.cholesky(x, upper=upper)


def _inv_ex(x, **k):
    none(k)
    return fnp.linalg.inv(x), np.zeros(np.shape(x)[:-2], np.int32)


def _solve(a, b, left=True, **k):
    none(k)
    if not left:
        raise Skip("left=False")
    if np.ndim(b) == 1 or (np.ndim(b) == np.ndim(a) - 1 and np.shape(b) == np.shape(a)[:-1]):
        return fnp.linalg.solve(a, b[..., None])[..., 0]
    return fnp.linalg.solve(a, b)


def _solve_ex(a, b, **k):
    return _solve(a, b, **k), np.zeros(np.shape(a)[:-2], np.int32)


def _eigh(x, UPLO="L", **k):
    none(k)
    w, v = fnp.linalg.eigh(x, UPLO=UPLO)
    return w, fnp.abs(v) ** 2


def _eigvalsh(x, UPLO="L", **k):
    none(k)
    return fnp.linalg.eigvalsh(x, UPLO=UPLO)


def _svd_free(u, s, vh):
    k = np.shape(s)[-1]
    return s, fnp.abs(u[..., :k]) ** 2, fnp.abs(vh[..., :k, :]) ** 2


def _linalg_svd(x, full_matrices=True, **k):
    none(k)
    return _svd_free(*fnp.linalg.svd(x, full_matrices=full_matrices))


def _svd(x, some=True, **k):          # torch.svd returns V, not V^H
    none(k)
    return _svd_free(*fnp.linalg.svd(x, full_matrices=not some))


def _pinv(x, *args, rtol=None, hermitian=False, **k):
    k = kw(k, atol="atol")
    if k or args:
        raise Skip("atol or a tensor tolerance")
    return fnp.linalg.pinv(x, rtol=rtol, hermitian=hermitian)


def _matrix_rank(x, atol=None, rtol=None, hermitian=False, **k):
    none(k)
    if atol is not None or np.ndim(rtol):
        raise Skip("atol or a tensor rtol")
    return fnp.linalg.matrix_rank(x, rtol=rtol, hermitian=hermitian)


def _slogdet(x, **k):
    none(k)
    s, l = fnp.linalg.slogdet(x)
    return s, l


def _logdet(x, **k):
    none(k)
    d = fnp.linalg.det(x)
    return fnp.log(d) if np.iscomplexobj(x) else fnp.log(fnp.where(d < 0, np.nan, d))


def _lstsq(a, b, driver=None, **k):
    none(k)
    if np.ndim(a) != 2:
        raise Skip("batched lstsq")
    return fnp.linalg.lstsq(a, b)[0]


def _matrix_power(x, n, **k):
    none(k)
    return fnp.linalg.matrix_power(x, n)


def _tensorinv(x, ind=2, **k):
    none(k)
    return fnp.linalg.tensorinv(x, ind=ind)


def _tensorsolve(a, b, dims=None, **k):
    none(k)
    return fnp.linalg.tensorsolve(a, b, axes=dims)


def _cond(x, p=None, **k):
    none(k)
    return fnp.linalg.cond(x, p)


def _vector_norm(x, ord=2, dim=None, keepdim=False, **k):
    k = kw(k)
    return fnp.linalg.vector_norm(x, ord=ord, axis=ax(dim), keepdims=keepdim)


def _linalg_norm(x, ord=None, dim=None, keepdim=False, **k):
    none(k)
    return fnp.linalg.norm(x, ord=ord, axis=ax(dim), keepdims=keepdim)


def _matrix_norm(x, ord="fro", dim=(-2, -1), keepdim=False, **k):
    none(k)
    if tuple(dim) != (-2, -1):
        raise Skip("matrix_norm over other axes")
    return fnp.linalg.matrix_norm(x, ord=ord, keepdims=keepdim)


def _norm(x, p="fro", dim=None, keepdim=False, **k):
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


def _solve_triangular(a, b, upper, left=True, unitriangular=False, **k):
    none(k)
    if not left:
        raise Skip("left=False")
    return sla.solve_triangular(a, b, lower=not upper, unit_diagonal=unitriangular)


def _triangular_solve(b, a, upper=True, transpose=False, unitriangular=False, **k):
    none(k)
    x = sla.solve_triangular(a, b, trans=1 if transpose else 0, lower=not upper,
                             unit_diagonal=unitriangular)
    return x, a + 0


def _cholesky_solve(b, c, upper=False, **k):
    none(k)
    return sla.cho_solve((c, not upper), b)


def _cholesky_inverse(c, upper=False, **k):
    none(k)
    eye = np.broadcast_to(np.eye(np.shape(c)[-1], dtype=c.dtype), np.shape(c))
    return sla.cho_solve((c, not upper), eye)


def _matrix_exp(x, **k):
    none(k)
    return sla.expm(x)


def _vander(x, N=None, **k):
    none(k)
    x = fnp.atleast_1d(x)
    n = np.shape(x)[-1] if N is None else N
    return fnp.stack([x ** i for i in range(n)], axis=-1) if n else fnp.zeros(
        np.shape(x) + (0,), x.dtype)


def _pinverse(x, rcond=1e-15, **k):
    none(k)
    return fnp.linalg.pinv(x, rcond=rcond)


def _qr(x, mode="reduced", **k):
    none(k)
    return tuple(fnp.linalg.qr(x, mode=mode))


def _old_qr(x, some=True, **k):
    none(k)
    return tuple(fnp.linalg.qr(x, mode="reduced" if some else "complete"))


# ----------------------------------------------------------------------------- fft

def _fft(name, kind="1"):
    def run(x, n=None, dim=None, norm=None, s=None, **k):
        none(k)
        f = getattr(fnp.fft, name)
        if kind == "1":
            return f(x, n=n, axis=-1 if dim is None else dim, norm=norm)
        if kind == "2" and dim is None:
            dim = (-2, -1)
        return f(x, s=s, axes=ax(dim), norm=norm)
    return run


def _shift(name):
    def run(x, dim=None, **k):
        none(k)
        return getattr(fnp.fft, name)(x, axes=ax(dim))
    return run


# ----------------------------------------------------------------------------- special

def _polygamma(x, n, **k):
    none(k)
    return sp.polygamma(n, x)


def _mvlgamma(x, p, **k):
    none(k)
    return sp.multigammaln(x, p)


# ----------------------------------------------------------------------------- fnad_nn

def _act(f, **names):
    def run(x, *args, inplace=False, **k):
        k = kw(k, **names)
        if args:
            raise Skip("positional activation arguments")
        return f(x, **k)
    return run


def _gelu(x, approximate="none", **k):
    none(k)
    return nn.gelu(x, approximate=approximate == "tanh")


def _softmax(f, neg=False):
    def run(x, dim, dtype=None, **k):
        none(k)
        if dtype is not None:
            x = fnp.astype(x, dtype)
        return f(-x if neg else x, axis=dim)
    return run


def _linear(x, w, b=None, **k):
    none(k)
    p = {"w": fnp.transpose(w)} if np.ndim(w) == 2 else None
    if p is None:
        raise Skip("1-d weight")
    if b is not None:
        p["b"] = b
    return nn.linear(p, x)


def _conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1, **k):
    none(k)
    if isinstance(padding, str) and padding == "same" and stride != 1:
        raise Skip("same padding with stride")
    p = {"w": w} if b is None else {"w": w, "b": b}
    return nn.conv2d(p, x, stride=stride, padding=padding, dilation=dilation)


def _layer_norm(x, shape, w=None, b=None, eps=1e-5, **k):
    none(k)
    if len(shape) != 1 or w is None:
        raise Skip("layer norm over several axes or without weight")
    p = {"scale": w} if b is None else {"scale": w, "bias": b}
    return nn.layer_norm(p, x, eps=eps)


def _rms_norm(x, shape, w=None, eps=None, **k):
    none(k)
    if len(shape) != 1 or w is None or eps is None:
        raise Skip("rms norm over several axes, without weight or with torch's default eps")
    return nn.rms_norm({"scale": w}, x, eps=eps)


def _mse(x, y, reduction="mean", **k):
    none(k)
    return nn.mse_loss(x, y, reduction=reduction)


def _bce_logits(x, y, weight=None, reduction="mean", pos_weight=None, **k):
    none(k)
    if weight is not None:
        raise Skip("weight")
    return nn.binary_cross_entropy_with_logits(x, y, pos_weight=pos_weight,
                                               reduction=reduction)


def _nll(x, t, weight=None, ignore_index=-100, reduction="mean", **k):
    none(k)
    if weight is not None or np.ndim(x) != 2:
        raise Skip("class weights or spatial nll_loss")
    return nn.nll_loss(x, t, ignore_index=ignore_index, reduction=reduction)


def _l1(x, y, reduction="mean", **k):
    none(k)
    d = fnp.abs(x - y)
    return {"mean": fnp.mean, "sum": fnp.sum, "none": lambda a: a}[reduction](d)


def _smooth_l1(x, y, reduction="mean", beta=1.0, **k):
    none(k)
    d = fnp.abs(x - y)
    loss = d - 0.5 * beta if beta == 0 else fnp.where(d < beta, 0.5 * d ** 2 / beta,
                                                      d - 0.5 * beta)
    return {"mean": fnp.mean, "sum": fnp.sum, "none": lambda a: a}[reduction](loss)


def _normalize(x, p=2.0, dim=1, eps=1e-12, **k):
    none(k)
    n = fnp.linalg.vector_norm(x, ord=p, axis=dim, keepdims=True)
    return x / fnp.maximum(n, eps)


def _cosine_similarity(x, y, dim=1, eps=1e-8, **k):
    none(k)
    nx = fnp.linalg.vector_norm(x, axis=dim)
    ny = fnp.linalg.vector_norm(y, axis=dim)
    return fnp.sum(x * y, axis=dim) / fnp.maximum(nx * ny, eps)


def _sdpa(q, kk, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **k):
    none(k)
    if dropout_p or attn_mask is not None:
        raise Skip("dropout or an attention mask")
    # torch's is_causal aligns the mask at the start (known.DIFFERENT["causal mask"])
    mask = np.tril(np.ones((np.shape(q)[-2], np.shape(kk)[-2]), bool)) if is_causal else None
    return nn.scaled_dot_product_attention(q, kk, v, mask=mask, scale=scale)


def _embedding(w, idx, **k):
    none(k)
    return nn.embedding({"w": w}, idx)


def _max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False, **k):
    none(k)
    if ceil_mode or return_indices:
        raise Skip("ceil_mode or return_indices")
    return nn.max_pool2d(x, kernel_size, stride=stride or None, padding=padding,
                         dilation=dilation)


def _avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None, **k):
    none(k)
    if ceil_mode or not count_include_pad or divisor_override:
        raise Skip("ceil_mode, count_include_pad=False or divisor_override")
    return nn.avg_pool2d(x, kernel_size, stride=stride or None, padding=padding)


def _glu(x, dim=-1, **k):
    none(k)
    a, b = fnp.split(x, 2, axis=dim)
    return a * sp.expit(b)


def _masked_red(f, fill):
    def run(x, dim=None, keepdim=False, mask=None, **k):
        none(k)
        if mask is None:
            raise Skip("no mask")
        mask = np.broadcast_to(mask, np.shape(x))
        return f(fnp.where(mask, x, fill), axis=ax(dim), keepdims=keepdim)
    return run


def _masked_mean(x, dim=None, keepdim=False, mask=None, **k):
    none(k)
    if mask is None:
        raise Skip("no mask")
    mask = np.broadcast_to(mask, np.shape(x))
    if not np.all(np.any(mask, axis=ax(dim))):
        raise Skip("a fully masked slice (torch gives nan)")
    return fnp.mean(x, axis=ax(dim), keepdims=keepdim, where=mask)


def _masked_var(f):
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


SECTIONS = {}
SECTIONS["products"] = {
    "matmul": E(bi(fnp.matmul)), "mm": E(bi(fnp.matmul)), "bmm": E(bi(fnp.matmul)),
    "mv": E(bi(fnp.matmul)), "dot": E(bi(fnp.dot)), "vdot": E(bi(fnp.vdot)),
    "inner": E(bi(fnp.inner)), "outer": E(bi(fnp.outer)), "kron": E(bi(fnp.kron)),
    "tensordot": E(_tensordot), "addmm": E(_addmm), "addmm.decomposed": E(_addmm),
    "addmv": E(_addmm), "baddbmm": E(_addmm), "addbmm": E(_addbmm), "addr": E(_addr),
    "einsum": E(_einsum), "linalg.vecdot": E(_vecdot), "linalg.multi_dot": E(_multi_dot),
}
SECTIONS["linalg"] = {
    "linalg.det": E(un(fnp.linalg.det)), "linalg.slogdet": E(_slogdet),
    "logdet": E(_logdet), "linalg.inv": E(un(fnp.linalg.inv)), "linalg.inv_ex": E(_inv_ex),
    "linalg.solve": E(_solve), "linalg.solve_ex": E(_solve_ex),
    "linalg.cholesky": E(_upper(fnp.linalg.cholesky), herm=H),
    "linalg.cholesky_ex": E(_cholesky_ex, herm=H),
    "cholesky": E(_old_cholesky, herm=H),
    "linalg.eigh": E(_eigh, ref="eigh", herm=H), "linalg.eigvalsh": E(_eigvalsh, herm=H), "linalg.svd": E(_linalg_svd, ref="linalg_svd"),
    "svd": E(_svd, ref="svd"), "linalg.svdvals": E(un(fnp.linalg.svdvals)),
    "linalg.pinv": E(_pinv), "linalg.pinv.hermitian": E(_pinv, herm=H), "pinverse": E(_pinverse),
    "linalg.matrix_rank": E(_matrix_rank, nograd=NOGRAD),
    "linalg.matrix_rank.hermitian": E(_matrix_rank, nograd=NOGRAD),
    "linalg.lstsq": E(_lstsq, ref="lstsq"), "linalg.lstsq.grad_oriented": E(_lstsq, ref="lstsq"),
    "linalg.matrix_power": E(_matrix_power), "linalg.tensorinv": E(_tensorinv),
    "linalg.tensorsolve": E(_tensorsolve), "linalg.cond": E(_cond),
    "linalg.vector_norm": E(_vector_norm), "linalg.norm": E(_linalg_norm),
    "linalg.norm.subgradients_at_zero": E(_linalg_norm),
    "linalg.matrix_norm": E(_matrix_norm), "norm": E(_norm), "norm.nuc": E(_norm),
    "norm.fro": E(_norm), "norm.inf": E(_norm),
    "linalg.solve_triangular": E(_solve_triangular), "triangular_solve": E(_triangular_solve, jvp_via_vjp=TRI_FWD),
    "cholesky_solve": E(_cholesky_solve), "cholesky_inverse": E(_cholesky_inverse),
    "matrix_exp": E(_matrix_exp, nojit=EXPM), "linalg.vander": E(_vander),
    "linalg.qr": E(_qr, nograd_complex=QR), "qr": E(_old_qr, nograd_complex=QR),
}
SECTIONS["fft"] = {
    **{f"fft.{n}": E(_fft(n)) for n in ("fft", "ifft", "rfft", "irfft")},
    **{f"fft.{n}2": E(_fft(n + "2", "2")) for n in ("fft", "ifft", "rfft", "irfft")},
    **{f"fft.{n}n": E(_fft(n + "n", "n")) for n in ("fft", "ifft", "rfft", "irfft")},
    "fft.fftshift": E(_shift("fftshift")), "fft.ifftshift": E(_shift("ifftshift")),
}
SECTIONS["special"] = {
    **{f"polygamma.polygamma_n_{n}": E(_polygamma) for n in range(5)},
    "special.polygamma.special_polygamma_n_0": E(_polygamma),
    **{f"mvlgamma.mvlgamma_p_{p}": E(_mvlgamma) for p in (1, 3, 5)},
    "special.i0e": E(un(sp.i0e)), "special.i1": E(un(sp.i1)), "special.i1e": E(un(sp.i1e)),
    "special.ndtr": E(un(sp.ndtr)), "special.ndtri": E(un(sp.ndtri)),
    "special.log_ndtr": E(un(sp.log_ndtr)), "special.erfcx": E(un(sp.erfcx)),
    "special.bessel_j0": E(un(sp.j0), numpy_ref=scipy_ref("j0")),
    "special.bessel_j1": E(un(sp.j1), numpy_ref=scipy_ref("j1")),
    "special.bessel_y0": E(un(sp.y0), numpy_ref=scipy_ref("y0")),
    "special.bessel_y1": E(un(sp.y1), numpy_ref=scipy_ref("y1")),
    "special.modified_bessel_i0": E(un(sp.i0)), "special.modified_bessel_i1": E(un(sp.i1)),
}
SECTIONS["nn"] = {
    "nn.functional.relu": E(_act(nn.relu)), "nn.functional.silu": E(_act(nn.silu)),
        "nn.functional.gelu": E(_gelu),
    "nn.functional.leaky_relu": E(_act(nn.leaky_relu, negative_slope="negative_slope")),
    "nn.functional.softplus": E(_act(nn.softplus, beta="beta", threshold="threshold")),
    "nn.functional.logsigmoid": E(_act(lambda x: -nn.softplus(-x))),
    "nn.functional.softsign": E(_act(lambda x: x / (1 + fnp.abs(x)))),
    "nn.functional.tanhshrink": E(_act(lambda x: x - fnp.tanh(x))),
    "nn.functional.mish": E(_act(lambda x: x * fnp.tanh(nn.softplus(x)))),
    "nn.functional.relu6": E(_act(lambda x: fnp.clip(x, 0.0, 6.0))),
    "nn.functional.hardtanh": E(_act(lambda x, min_val=-1.0, max_val=1.0:
                                     fnp.clip(x, min_val, max_val),
                                     min_val="min_val", max_val="max_val")),
    "nn.functional.hardsigmoid": E(_act(lambda x: fnp.clip(x / 6 + 0.5, 0.0, 1.0)),
                                     grad_rtol=1e-7),  # torch's backward: a float32 1/6
    "nn.functional.hardswish": E(_act(lambda x: x * fnp.clip(x / 6 + 0.5, 0.0, 1.0))),
    "softmax": E(_softmax(nn.softmax)), "softmax.with_dtype": E(_softmax(nn.softmax)),
    "log_softmax": E(_softmax(nn.log_softmax)),
    "log_softmax.with_dtype": E(_softmax(nn.log_softmax)),
    "nn.functional.softmin": E(_softmax(nn.softmax, True)),
    "nn.functional.softmin.with_dtype": E(_softmax(nn.softmax, True)),
    "nn.functional.linear": E(_linear), "nn.functional.conv2d": E(_conv2d),
    "nn.functional.layer_norm": E(_layer_norm), "nn.functional.rms_norm": E(_rms_norm),
    "nn.functional.mse_loss": E(_mse),
    "nn.functional.binary_cross_entropy_with_logits": E(_bce_logits),
    "nn.functional.nll_loss": E(_nll), "nn.functional.l1_loss": E(_l1),
    "nn.functional.smooth_l1_loss": E(_smooth_l1), "nn.functional.normalize": E(_normalize),
    "nn.functional.cosine_similarity": E(_cosine_similarity),
    "nn.functional.scaled_dot_product_attention": E(_sdpa),
    "nn.functional.embedding": E(_embedding), "nn.functional.max_pool2d": E(_max_pool2d),
    "nn.functional.avg_pool2d": E(_avg_pool2d), "nn.functional.glu": E(_glu),
}
SECTIONS["masked"] = {
    "masked.sum": E(_masked_red(fnp.sum, 0)), "masked.prod": E(_masked_red(fnp.prod, 1)),
    "masked.amax": E(_masked_red(fnp.max, -np.inf)),
    "masked.amin": E(_masked_red(fnp.min, np.inf)), "masked.mean": E(_masked_mean),
    "masked.var": E(_masked_var(fnp.var)), "masked.std": E(_masked_var(fnp.std)),
    "masked.logsumexp": E(_masked_red(sp.logsumexp, -np.inf)),
}
