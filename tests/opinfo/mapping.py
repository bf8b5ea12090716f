"""One table: each of PyTorch's OpInfos (by "name" or "name.variant") to its fnad counterpart,
one line per OpInfo where it fits. Where torch's signature differs, an adapter of
tests/opinfo/adapt_np.py (`a.`), adapt_shape.py (`s.`) or adapt_more.py (`b.`) translates the
sample
(dim -> axis, keepdim -> keepdims, unbiased -> ddof, ...). Deliberate differences from torch
and the open defects are in tests/opinfo/known.py; `Entry`'s options are in adapt.py."""

import numpy as np

import fnad.numpy as fnp
import fnad.scipy.special as sp
import fnad_nn as nn
from tests.opinfo import adapt_more as b
from tests.opinfo import adapt_np as a
from tests.opinfo import adapt_shape as s
from tests.opinfo.adapt import Entry, Skip, bi, minmax_dim, moments, real_only, red, un

__all__ = ["MAPPING", "Skip"]
E = Entry
NOGRAD = "no gradient (integer or boolean result)"
BY_VALUE = "result shape depends on the values: jit refuses with AbstractEvalError, as JAX does"
EXPIT = "fnad.scipy.special.expit is real-only, as SciPy's is"
NOCOMPLEX = "NumPy has no complex loop for it; fnad refuses complex input as NumPy does"
SIGN = "sign of a complex number has no derivative in fnad (JAX's choice; docs/api.md)"
H = (0,)          # the first input is read as a Hermitian matrix (one triangle)
TRI_FWD = ("torch's forward mode of triangular_solve uses the whole tangent of A, not its "
           "triangle (wrong by finite differences); its VJP is right")
CHOINV_FWD = ("torch's forward mode of cholesky_inverse disagrees with finite differences; its "
              "VJP is right")
SVD_FULL = ("fnad refuses to differentiate svd(full_matrices=True) of a non-square matrix "
            "(the extra columns are not unique): ValueError, known.DIFFERENT")
EXPM = "expm needs values to choose its squarings: jit refuses it (ConcretizationError)"
QR = "qr of complex input has no derivatives in fnad (NotImplementedError; docs/api.md)"

SECTIONS = {}
SECTIONS["elementwise"] = {
    "abs": E(un(fnp.abs)), "acos": E(un(fnp.arccos)), "acosh": E(un(fnp.arccosh)),
    "asin": E(un(fnp.arcsin)), "asinh": E(un(fnp.arcsinh)), "atan": E(un(fnp.arctan)),
    "atanh": E(un(fnp.arctanh)), "ceil": E(un(fnp.ceil)), "cos": E(un(fnp.cos)),
    "cosh": E(un(fnp.cosh)), "deg2rad": E(un(fnp.deg2rad)), "rad2deg": E(un(fnp.rad2deg)),
    "exp": E(un(fnp.exp)), "exp2": E(un(fnp.exp2)), "expm1": E(un(fnp.expm1)),
    "floor": E(un(fnp.floor)), "frac": E(a.frac), "log": E(un(fnp.log)),
    "log10": E(un(fnp.log10)), "log1p": E(un(fnp.log1p)), "log2": E(un(fnp.log2)),
    "neg": E(un(fnp.negative)), "positive": E(un(fnp.positive)),
    "reciprocal": E(un(fnp.reciprocal)), "rsqrt": E(un(lambda x: 1 / fnp.sqrt(x))),
    "sqrt": E(un(fnp.sqrt)), "square": E(un(fnp.square)), "sin": E(un(fnp.sin)),
    "sinh": E(un(fnp.sinh)), "tan": E(un(fnp.tan)), "tanh": E(un(fnp.tanh)),
    "trunc": E(un(fnp.trunc)), "sign": E(un(fnp.sign)),
    "sgn": E(un(a.sgn), nograd_complex=SIGN), "sinc": E(un(fnp.sinc)),
    "sigmoid": E(real_only(un(sp.expit), EXPIT)), "angle": E(un(fnp.angle)),
    "conj": E(un(fnp.conj)), "conj_physical": E(un(fnp.conj)),
    "resolve_conj": E(un(fnp.positive)), "resolve_neg": E(un(fnp.positive)),
    "clone": E(un(fnp.copy)), "contiguous": E(un(fnp.positive)),
    "alias_copy": E(un(fnp.copy)), "real": E(un(fnp.real)), "imag": E(un(fnp.imag)),
    "round": E(a.round_), "round.decimals_0": E(a.round_), "round.decimals_3": E(a.round_),
    "round.decimals_neg_3": E(a.round_), "nan_to_num": E(a.nan_to_num),
    "logit": E(a.logit), "digamma": E(un(sp.digamma)), "erf": E(un(sp.erf)),
    "erfc": E(un(sp.erfc)), "erfinv": E(un(sp.erfinv)), "lgamma": E(un(sp.gammaln)),
    "i0": E(un(sp.i0)),
    "isfinite": E(un(fnp.isfinite)), "isinf": E(un(fnp.isinf)), "isnan": E(un(fnp.isnan)),
    "isposinf": E(un(fnp.isposinf)), "isneginf": E(un(fnp.isneginf)),
    "isreal": E(un(fnp.isreal)), "signbit": E(un(fnp.signbit)),
    "logical_not": E(un(fnp.logical_not)),
    "add": E(a.add), "sub": E(a.sub), "mul": E(bi(fnp.multiply)),
    "div.no_rounding_mode": E(a.div(None)), "div.trunc_rounding": E(a.div("trunc")),
    "div.floor_rounding": E(a.div("floor")), "true_divide": E(bi(fnp.true_divide)),
    "floor_divide": E(bi(fnp.floor_divide)), "atan2": E(bi(fnp.arctan2)),
    "fmax": E(bi(fnp.fmax)), "fmin": E(bi(fnp.fmin)), "fmod": E(bi(fnp.fmod)),
    "remainder": E(bi(fnp.remainder)), "maximum": E(bi(fnp.maximum)),
    "minimum": E(bi(fnp.minimum)), "max.binary": E(bi(fnp.maximum)),
    "min.binary": E(bi(fnp.minimum)), "copysign": E(bi(fnp.copysign)),
    "hypot": E(bi(fnp.hypot)), "logaddexp": E(real_only(bi(fnp.logaddexp), NOCOMPLEX)),
    "logaddexp2": E(bi(fnp.logaddexp2)), "xlogy": E(a.xlogy(sp.xlogy)),
    "special.xlog1py": E(a.xlogy(sp.xlog1py)), "pow": E(bi(fnp.power)),
    "float_power": E(a.float_power), "nextafter": E(bi(fnp.nextafter)), "ldexp": E(a.ldexp),
    "heaviside": E(bi(fnp.heaviside)), "eq": E(bi(fnp.equal)), "ne": E(bi(fnp.not_equal)),
    "lt": E(bi(fnp.less)), "le": E(bi(fnp.less_equal)), "gt": E(bi(fnp.greater)),
    "ge": E(bi(fnp.greater_equal)), "logical_and": E(bi(fnp.logical_and)),
    "logical_or": E(bi(fnp.logical_or)), "logical_xor": E(bi(fnp.logical_xor)),
    "isclose": E(a.isclose(fnp.isclose)), "allclose": E(a.isclose(fnp.allclose)),
    "equal": E(bi(fnp.array_equal)), "clamp_max": E(bi(fnp.minimum)),
    "clamp_min": E(bi(fnp.maximum)), "clamp": E(a.clamp), "igamma": E(bi(sp.gammainc)),
    "igammac": E(bi(sp.gammaincc)), "complex": E(a.complex_), "polar": E(a.polar),
    "lerp": E(a.lerp), "addcmul": E(a.addc(fnp.multiply)), "addcdiv": E(a.addc(fnp.divide)),
    "__radd__": E(a.r(fnp.add)), "__rmul__": E(a.r(fnp.multiply)),
    "__rdiv__": E(a.r(fnp.divide)), "__rpow__": E(a.r(fnp.power)),
    "__rmod__": E(a.r(fnp.remainder)), "__rsub__": E(a.r(fnp.subtract)),
    "__rmatmul__": E(a.r(fnp.matmul)), "rsub": E(a.rsub),
    "double": E(a.cast(np.float64)), "cdouble": E(a.cast(np.complex128)),
    "float": E(a.cast(np.float32)), "cfloat": E(a.cast(np.complex64)),
    "half": E(a.cast(np.float16)), "bool": E(a.cast(np.bool_)),
    "zeros_like": E(a.like(fnp.zeros_like)), "ones_like": E(a.like(fnp.ones_like)),
    "full_like": E(a.full_like), "zero_": E(a.zero), "fill": E(a.fill),
    "zeros": E(a.create(fnp.zeros)), "ones": E(a.create(fnp.ones)),
    "full": E(a.create(fnp.full)), "eye": E(a.eye), "arange": E(a.arange),
    "linspace": E(a.linspace), "logspace": E(a.logspace),
}
SECTIONS["reductions"] = {
    "sum": E(a.sum_(fnp.sum)), "mean": E(a.sum_(fnp.mean)), "nansum": E(a.sum_(fnp.nansum)),
    "nanmean": E(a.sum_(fnp.nanmean)), "prod": E(a.prod),
    "amax": E(red(fnp.max)), "amin": E(red(fnp.min)),
    "max.reduction_no_dim": E(minmax_dim(fnp.max, fnp.argmax)),
    "min.reduction_no_dim": E(minmax_dim(fnp.min, fnp.argmin)),
    "max.reduction_with_dim": E(minmax_dim(fnp.max, fnp.argmax)),
    "min.reduction_with_dim": E(minmax_dim(fnp.min, fnp.argmin)),
    "argmax": E(a.argext(fnp.argmax)), "argmin": E(a.argext(fnp.argmin)),
    "all": E(red(fnp.all)), "any": E(red(fnp.any)), "count_nonzero": E(a.count_nonzero),
    "aminmax": E(a.aminmax),
    "var": E(moments(fnp.var)), "var.unbiased": E(moments(fnp.var)),
    "std": E(moments(fnp.std)), "std.unbiased": E(moments(fnp.std)),
    "var_mean": E(moments(fnp.var, True)), "var_mean.unbiased": E(moments(fnp.var, True)),
    "std_mean": E(moments(fnp.std, True)), "std_mean.unbiased": E(moments(fnp.std, True)),
    "logsumexp": E(a.logsumexp), "cumsum": E(a.cum(fnp.cumsum)),
    "cumprod": E(a.cum(fnp.cumprod)),
    "trapz": E(a.trapz(fnp.trapezoid)), "trapezoid": E(a.trapz(fnp.trapezoid)),
    "diff": E(a.diff), "cross": E(a.cross), "linalg.cross": E(a.cross),
}
SECTIONS["shape"] = {
    "broadcast_to": E(s.broadcast_to), "broadcast_tensors": E(s.broadcast_tensors),
    "expand": E(s.expand), "expand_copy": E(s.expand),
    "expand_as": E(lambda x, y, **k: s.expand(x, np.shape(y), **k)),
    "reshape": E(s.reshape), "view": E(s.reshape), "view_copy": E(s.reshape),
    "reshape_as": E(lambda x, y, **k: s.reshape(x, np.shape(y), **k)),
    "view_as": E(lambda x, y, **k: s.reshape(x, np.shape(y), **k)),
    "ravel": E(un(fnp.ravel)), "flatten": E(s.flatten), "unflatten": E(s.unflatten),
    "squeeze": E(s.squeeze), "squeeze.multiple": E(s.squeeze), "squeeze_copy": E(s.squeeze),
    "unsqueeze": E(s.unsqueeze), "unsqueeze_copy": E(s.unsqueeze),
    "permute": E(s.permute), "permute_copy": E(s.permute), "movedim": E(s.movedim),
    "transpose": E(s.transpose), "transpose_copy": E(s.transpose),
    "T": E(un(s.T)), "H": E(un(lambda x: fnp.conj(fnp.transpose(x)))),
    "mT": E(un(s.mT)), "mH": E(un(lambda x: fnp.conj(s.mT(x)))),
    "t": E(un(s.T)), "t_copy": E(un(s.T)),
    "flip": E(s.flip), "fliplr": E(un(fnp.fliplr)), "flipud": E(un(fnp.flipud)),
    "roll": E(s.roll), "rot90": E(s.rot90),
    "cat": E(s.cat(fnp.concatenate)), "stack": E(s.cat(fnp.stack)),
    "hstack": E(s.stack_fn(fnp.hstack)), "vstack": E(s.stack_fn(fnp.vstack)),
    "dstack": E(s.stack_fn(fnp.dstack)), "column_stack": E(s.stack_fn(fnp.column_stack)),
    "split": E(s.split), "split.list_args": E(s.split), "unsafe_split": E(s.split),
    "split_with_sizes": E(s.split), "split_with_sizes_copy": E(s.split),
    "chunk": E(s.chunk), "unsafe_chunk": E(s.chunk), "tensor_split": E(s.tensor_split),
    "hsplit": E(s.nsplit(fnp.hsplit)), "vsplit": E(s.nsplit(fnp.vsplit)),
    "dsplit": E(s.nsplit(fnp.dsplit)), "unbind": E(s.unbind), "unbind_copy": E(s.unbind),
    "tile": E(s.tile), "repeat": E(s.repeat), "repeat_interleave": E(s.repeat_interleave),
    "narrow": E(s.narrow), "narrow_copy": E(s.narrow), "select": E(s.select),
    "atleast_1d": E(s.atleast(fnp.atleast_1d)), "atleast_2d": E(s.atleast(fnp.atleast_2d)),
    "atleast_3d": E(s.atleast(fnp.atleast_3d)), "meshgrid.variadic_tensors": E(s.meshgrid),
    "meshgrid.list_of_tensors": E(s.meshgrid), "block_diag": E(s.block_diag),
    "diag": E(s.diag), "diagflat": E(s.tri(fnp.diagflat)), "diagonal": E(s.diagonal),
    "diagonal_copy": E(s.diagonal), "diag_embed": E(s.diag_embed),
    "linalg.diagonal": E(lambda x, offset=0, dim1=-2, dim2=-1, **k:
                         s.diagonal(x, offset, dim1, dim2, **k)),
    "tril": E(s.tri(fnp.tril)), "triu": E(s.tri(fnp.triu)),
    "trace": E(un(fnp.trace)),
    "constant_pad_nd": E(s.pad("constant")), "nn.functional.pad.constant": E(s.pad("constant")),
    "nn.functional.pad.reflect": E(s.pad("reflect")),
    "nn.functional.pad.replicate": E(s.pad("replicate")),
    "nn.functional.pad.circular": E(s.pad("circular")),
}
SECTIONS["indexing"] = {
    "where": E(s.where), "masked_fill": E(s.masked_fill),
    "masked_select": E(s.masked_select, nojit=BY_VALUE, novmap=BY_VALUE),
    "index_select": E(s.index_select), "gather": E(s.gather),
    "take_along_dim": E(s.take_along_dim), "take": E(s.take), "index_add": E(s.index_add),
    "index_copy": E(s.index_copy), "index_fill": E(s.index_fill),
    "__getitem__": E(s.getitem), "sort": E(s.sort), "argsort": E(s.argsort, nograd=NOGRAD),
    "msort": E(s.msort), "nonzero": E(s.nonzero, nograd=NOGRAD, nojit=BY_VALUE, novmap=BY_VALUE),
    "argwhere": E(s.argwhere, nograd=NOGRAD, nojit=BY_VALUE,
                  novmap=BY_VALUE), "searchsorted": E(s.searchsorted, nograd=NOGRAD),
}
SECTIONS["products"] = {
    "matmul": E(bi(fnp.matmul)), "mm": E(bi(fnp.matmul)), "bmm": E(bi(fnp.matmul)),
    "mv": E(bi(fnp.matmul)), "dot": E(bi(fnp.dot)), "vdot": E(bi(fnp.vdot)),
    "inner": E(bi(fnp.inner)), "outer": E(bi(fnp.outer)), "kron": E(bi(fnp.kron)),
    "tensordot": E(b.tensordot), "addmm": E(b.addmm), "addmm.decomposed": E(b.addmm),
    "addmv": E(b.addmm), "baddbmm": E(b.addmm), "addbmm": E(b.addbmm), "addr": E(b.addr),
    "einsum": E(b.einsum), "linalg.vecdot": E(b.vecdot), "linalg.multi_dot": E(b.multi_dot),
}
SECTIONS["linalg"] = {
    "linalg.det": E(un(fnp.linalg.det)), "linalg.slogdet": E(b.slogdet),
    "logdet": E(b.logdet), "linalg.inv": E(un(fnp.linalg.inv)), "linalg.inv_ex": E(b.inv_ex),
    "linalg.solve": E(b.solve), "linalg.solve_ex": E(b.solve_ex),
    "linalg.cholesky": E(b.upper(fnp.linalg.cholesky), herm=H),
    "linalg.cholesky_ex": E(b.cholesky_ex, herm=H),
    "cholesky": E(b.old_cholesky, herm=H),
    "linalg.eigh": E(b.eigh, ref="eigh", herm=H), "linalg.eigvalsh": E(b.eigvalsh, herm=H),
    "linalg.svd": E(b.linalg_svd, ref="linalg_svd", nograd_if=(b.full_svd, SVD_FULL)),
    "svd": E(b.svd, ref="svd", nograd_if=(b.full_svd, SVD_FULL)),
    "linalg.svdvals": E(un(fnp.linalg.svdvals)),
    "linalg.pinv": E(b.pinv), "linalg.pinv.hermitian": E(b.pinv, herm=H),
    "pinverse": E(b.pinverse),
    "linalg.matrix_rank": E(b.matrix_rank, nograd=NOGRAD),
    "linalg.matrix_rank.hermitian": E(b.matrix_rank, nograd=NOGRAD),
    "linalg.lstsq": E(b.lstsq, ref="lstsq"), "linalg.lstsq.grad_oriented": E(b.lstsq, ref="lstsq"),
    "linalg.matrix_power": E(b.matrix_power), "linalg.tensorinv": E(b.tensorinv),
    "linalg.tensorsolve": E(b.tensorsolve), "linalg.cond": E(b.cond),
    "linalg.vector_norm": E(b.vector_norm), "linalg.norm": E(b.linalg_norm),
    "linalg.norm.subgradients_at_zero": E(b.linalg_norm),
    "linalg.matrix_norm": E(b.matrix_norm), "norm": E(b.norm), "norm.nuc": E(b.norm),
    "norm.fro": E(b.norm), "norm.inf": E(b.norm),
    "linalg.solve_triangular": E(b.solve_triangular),
    "triangular_solve": E(b.triangular_solve, jvp_via_vjp=TRI_FWD),
    "cholesky_solve": E(b.cholesky_solve, tri=(1,)),
    "cholesky_inverse": E(b.cholesky_inverse, tri=(0,), jvp_via_vjp=CHOINV_FWD),
    "matrix_exp": E(b.matrix_exp, nojit=EXPM), "linalg.vander": E(b.vander),
    "linalg.qr": E(b.qr, nograd_complex=QR), "qr": E(b.old_qr, nograd_complex=QR),
}
SECTIONS["fft"] = {
    **{f"fft.{n}": E(b.fft(n)) for n in ("fft", "ifft", "rfft", "irfft")},
    **{f"fft.{n}2": E(b.fft(n + "2", "2")) for n in ("fft", "ifft", "rfft", "irfft")},
    **{f"fft.{n}n": E(b.fft(n + "n", "n")) for n in ("fft", "ifft", "rfft", "irfft")},
    "fft.fftshift": E(b.shift("fftshift")), "fft.ifftshift": E(b.shift("ifftshift")),
}
SECTIONS["special"] = {
    **{f"polygamma.polygamma_n_{n}": E(b.polygamma) for n in range(5)},
    "special.polygamma.special_polygamma_n_0": E(b.polygamma),
    **{f"mvlgamma.mvlgamma_p_{p}": E(b.mvlgamma) for p in (1, 3, 5)},
    "special.i0e": E(un(sp.i0e)), "special.i1": E(un(sp.i1)), "special.i1e": E(un(sp.i1e)),
    "special.ndtr": E(un(sp.ndtr)), "special.ndtri": E(un(sp.ndtri)),
    "special.log_ndtr": E(un(sp.log_ndtr)), "special.erfcx": E(un(sp.erfcx)),
    "special.bessel_j0": E(un(sp.j0), numpy_ref=b.scipy_ref("j0")),
    "special.bessel_j1": E(un(sp.j1), numpy_ref=b.scipy_ref("j1")),
    "special.bessel_y0": E(un(sp.y0), numpy_ref=b.scipy_ref("y0")),
    "special.bessel_y1": E(un(sp.y1), numpy_ref=b.scipy_ref("y1")),
    "special.modified_bessel_i0": E(un(sp.i0)), "special.modified_bessel_i1": E(un(sp.i1)),
}
SECTIONS["nn"] = {
    "nn.functional.relu": E(b.act(nn.relu)), "nn.functional.silu": E(b.act(nn.silu)),
        "nn.functional.gelu": E(b.gelu),
    "nn.functional.leaky_relu": E(b.act(nn.leaky_relu, negative_slope="negative_slope")),
    "nn.functional.softplus": E(b.act(nn.softplus, beta="beta", threshold="threshold")),
    "nn.functional.logsigmoid": E(b.act(lambda x: -nn.softplus(-x))),
    "nn.functional.softsign": E(b.act(lambda x: x / (1 + fnp.abs(x)))),
    "nn.functional.tanhshrink": E(b.act(lambda x: x - fnp.tanh(x))),
    "nn.functional.mish": E(b.act(lambda x: x * fnp.tanh(nn.softplus(x)))),
    "nn.functional.relu6": E(b.act(lambda x: fnp.clip(x, 0.0, 6.0))),
    "nn.functional.hardtanh": E(b.act(lambda x, min_val=-1.0, max_val=1.0:
                                     fnp.clip(x, min_val, max_val),
                                     min_val="min_val", max_val="max_val")),
    "nn.functional.hardsigmoid": E(b.act(lambda x: fnp.clip(x / 6 + 0.5, 0.0, 1.0)),
                                     grad_rtol=1e-7),  # torch's backward: a float32 1/6
    "nn.functional.hardswish": E(b.act(lambda x: x * fnp.clip(x / 6 + 0.5, 0.0, 1.0))),
    "softmax": E(b.softmax(nn.softmax)), "softmax.with_dtype": E(b.softmax(nn.softmax)),
    "log_softmax": E(b.softmax(nn.log_softmax)),
    "log_softmax.with_dtype": E(b.softmax(nn.log_softmax)),
    "nn.functional.softmin": E(b.softmax(nn.softmax, True)),
    "nn.functional.softmin.with_dtype": E(b.softmax(nn.softmax, True)),
    "nn.functional.linear": E(b.linear), "nn.functional.conv2d": E(b.conv2d),
    "nn.functional.layer_norm": E(b.layer_norm), "nn.functional.rms_norm": E(b.rms_norm),
    "nn.functional.mse_loss": E(b.mse),
    "nn.functional.binary_cross_entropy_with_logits": E(b.bce_logits),
    "nn.functional.nll_loss": E(b.nll), "nn.functional.l1_loss": E(b.l1),
    "nn.functional.smooth_l1_loss": E(b.smooth_l1), "nn.functional.normalize": E(b.normalize),
    "nn.functional.cosine_similarity": E(b.cosine_similarity),
    "nn.functional.scaled_dot_product_attention": E(b.sdpa),
    "nn.functional.embedding": E(b.embedding), "nn.functional.max_pool2d": E(b.max_pool2d),
    "nn.functional.avg_pool2d": E(b.avg_pool2d), "nn.functional.glu": E(b.glu),
}
SECTIONS["masked"] = {
    "masked.sum": E(b.masked_red(fnp.sum, 0)), "masked.prod": E(b.masked_red(fnp.prod, 1)),
    "masked.amax": E(b.masked_red(fnp.max, -np.inf)),
    "masked.amin": E(b.masked_red(fnp.min, np.inf)), "masked.mean": E(b.masked_mean),
    "masked.var": E(b.masked_var(fnp.var)), "masked.std": E(b.masked_var(fnp.std)),
    "masked.logsumexp": E(b.masked_red(sp.logsumexp, -np.inf)),
}


def _merge():
    table = {}
    for section in SECTIONS.values():
        dup = set(section) & set(table)
        assert not dup, f"mapped twice: {sorted(dup)}"
        table.update(section)
    return table


MAPPING = _merge()
