"""Deliberate differences from torch (with the reference that decides) and the fnad defects
still open, for tests/opinfo.

`XFAIL[(name, check)]` (check "*" for every check; a third element "complex128"/"float64" for
one dtype) names a defect of issue 31 that another branch fixes: the test is
xfail(strict=False), so it passes before and after the fix lands. A value may be a
`(reason, which)` pair: `which(case)` picks the samples the defect touches.

`DIFFERENT` lists each deliberate difference: what torch does, what the reference does, and
which one fnad follows. The mapping (tests/opinfo/mapping*.py) carries it out: a `numpy_ref`
that decides the value, a skipped sample, or a projection of the gradient."""

import numpy as np


def _zero_d(case):
    return np.ndim(case.xs[0]) == 0


def _complex(case):
    return any(np.iscomplexobj(x) for x in case.xs)


def _upper(case):
    return bool(case.kwargs.get("upper"))


def _ord(case):
    args = case.sample.args
    return case.kwargs.get("ord", args[0] if args else None)


def _complex_ord0(case):
    return _complex(case) and _ord(case) == 0


def _zero_d_or_complex_ord0(case):
    return _zero_d(case) or _complex_ord0(case)


def _diff_n0(case):
    return (case.sample.args or [1])[0] == 0


def _gathers_fewer(case):
    """take_along_dim whose index does not match the input outside the axis."""
    x, idx = np.shape(case.xs[0]), np.shape(to_np(case.sample.args[0]))
    dim = case.sample.args[1] if len(case.sample.args) > 1 else None
    return dim is not None and any(a != b for i, (a, b) in enumerate(zip(x, idx))
                                   if i != dim % len(x))


def _tensorsolve_dims(case):
    return case.kwargs.get("dims") is not None


def _full_svd(case):
    from tests.opinfo.adapt_more import full_svd
    return full_svd(case)


def _negative_dims(case):
    dims = case.sample.args
    dims = dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    return any(d < 0 for d in dims)


def _repeated_index(case):
    idx = np.ravel(to_np(case.sample.args[1]))
    return len(np.unique(idx)) != len(idx)


def to_np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


# ----------------------------------------------------------------------------- open defects
# (issue 31, each fixed with its own test on another branch)
_ZERO_D = "issue 31: reductions of 0-d arrays with axis=0"
_SVD = ("issue 31: jit/vmap of svd(full_matrices=True) of a non-square matrix fail with a "
        "message about differentiation")
_AT_SET = "issue 31: at[].set with a repeated index counts the set value's gradient twice"
_CHO = "issue 31: cho_solve with a complex factor is not a solution"
_NORM0 = "issue 31: complex vector_norm/norm with ord=0 are complex under jit/vjp"
_JIT_BITS = ("issue 31: jit is not bit-identical to eager for lstsq, multi_dot, "
             "cholesky(upper) and norms (complex, or over a tuple of axes)")
XFAIL = {
    ("allclose", "jit"): "issue 31: fnad.jit of allclose/array_equal (AttributeError)",
    ("equal", "jit"): "issue 31: fnad.jit of allclose/array_equal (AttributeError)",
    ("linalg.lstsq", "jit"): _JIT_BITS,
    ("linalg.lstsq.grad_oriented", "jit"): _JIT_BITS,
    ("linalg.multi_dot", "jit"): _JIT_BITS,
    ("linalg.vector_norm", "jit"): _JIT_BITS, ("linalg.norm", "jit"): _JIT_BITS,
    ("norm", "*"): (_ZERO_D + "; " + _NORM0, _zero_d_or_complex_ord0),
    ("cholesky", "jit"): (_JIT_BITS, _upper),
    ("linalg.cholesky", "jit"): (_JIT_BITS, _upper),
    ("linalg.cholesky_ex", "jit"): (_JIT_BITS, _upper),
    ("nextafter", "vjp"): "issue 31: nextafter has a silent zero gradient",
    ("nextafter", "jvp"): "issue 31: nextafter has a silent zero gradient",
    ("matrix_exp", "vmap"): "issue 31: vmap(expm) on (3, 5, 5) returns (3, 3, 5, 5)",
    ("logsumexp", "*"): (_ZERO_D, _zero_d),
    ("masked.logsumexp", "*", "complex128"):
        "issue 31: logsumexp of complex input leaves the imaginary part unreduced",
    ("masked.var", "*", "complex128"): "issue 31: var/std with where= on complex input",
    ("logsumexp", "*", "complex128"):
        "issue 31: logsumexp of complex input leaves the imaginary part unreduced",
    ("diff", "*"): ("issue 31: diff(x, 0, prepend=, append=) gives the wrong shape", _diff_n0),
    ("take_along_dim", "*"): ("issue 31: take_along_axis does not broadcast", _gathers_fewer),
    ("linalg.tensorsolve", "*"): ("issue 31: tensorsolve(a, b, axes=...) refuses a system "
                                  "NumPy solves", _tensorsolve_dims),
    ("linalg.svd", "jit"): (_SVD, _full_svd), ("linalg.svd", "vmap"): (_SVD, _full_svd),
    ("svd", "jit"): (_SVD, _full_svd), ("svd", "vmap"): (_SVD, _full_svd),
    ("permute", "vjp"): ("issue 31: the VJP of transpose with negative axes", _negative_dims),
    ("permute_copy", "vjp"): ("issue 31: the VJP of transpose with negative axes",
                              _negative_dims),
    ("index_fill", "vjp"): (_AT_SET, _repeated_index),
    ("index_fill", "jvp"): (_AT_SET, _repeated_index),
    ("cholesky_solve", "*", "complex128"): _CHO, ("cholesky_inverse", "*", "complex128"): _CHO,
    ("linalg.norm", "*"): (_NORM0, _complex_ord0),
    ("linalg.norm.subgradients_at_zero", "*"): (_NORM0, _complex_ord0),
    ("linalg.vector_norm", "*"): (_ZERO_D + "; " + _NORM0, _zero_d_or_complex_ord0),
    **{(name, "*"): (_ZERO_D, _zero_d) for name in (
        "mean", "prod", "amax", "amin", "aminmax", "max.reduction_with_dim",
        "min.reduction_with_dim", "masked.prod", "masked.mean", "masked.amax", "masked.amin",
        "masked.logsumexp", "nn.functional.cosine_similarity", "nn.functional.normalize")},
    **{(name, "*"): ("issue 31: softmax of a 0-d array", _zero_d) for name in (
        "softmax", "softmax.with_dtype", "log_softmax", "log_softmax.with_dtype",
        "nn.functional.softmin", "nn.functional.softmin.with_dtype")},
    ("masked.std", "*", "complex128"): "issue 31: var/std with where= on complex input",
}

# ----------------------------------------------------------------------------- by design
DIFFERENT = {
    "hermitian inputs": (
        "torch.linalg.cholesky/eigh/eigvalsh/pinv(hermitian=True) return a gradient "
        "symmetrized over the whole matrix; LAPACK (NumPy, SciPy) reads one triangle, and fnad "
        "gives the gradient of the function NumPy computes. The two agree on Hermitian "
        "directions, which is what the VJP and JVP checks compare (Entry.herm)."),
    "special.bessel_j0/j1/y0/y1": (
        "torch's Cephes-style approximations are off by up to 1e-5 relative near zeros; "
        "SciPy's values are accurate, and fnad follows SciPy (numpy_ref)."),
    "sgn (complex)": (
        "torch differentiates z/|z|; JAX gives sign no derivative; fnad follows JAX "
        "(docs/api.md): complex samples skip the gradient checks."),
    "qr (complex)": (
        "torch differentiates complex QR; fnad refuses with NotImplementedError "
        "(docs/api.md): complex samples skip the gradient checks."),
    "sigmoid, logaddexp (complex)": (
        "torch takes complex input; SciPy's expit and NumPy's logaddexp refuse it, and so does "
        "fnad with a clear TypeError: complex samples are skipped."),
    "triangular_solve forward mode": (
        "torch's forward-mode derivative uses the whole tangent of A although only one "
        "triangle is read (finite differences disagree with it); its VJP is right, so the JVP "
        "is checked through <ct, J t> = <J^T ct, t> with torch's VJP."),
    "cholesky_inverse forward mode": (
        "torch's forward-mode derivative disagrees with finite differences (by 1e-2 on a "
        "5x5 factor); its VJP is right, so the JVP is checked through torch's VJP."),
    "causal mask": (
        "torch's is_causal aligns the mask at the first key; fnad_nn's causal=True aligns it "
        "at the last key (for appending to a KV cache). The mapping passes torch's mask "
        "explicitly."),
    "matrix_exp under jit": (
        "torch stages matrix_exp; fnad's expm chooses its squarings from the values and "
        "refuses under jit with ConcretizationError, naming the way out."),
    "value-dependent shapes": (
        "nonzero/argwhere/masked_select: jit refuses with AbstractEvalError, as JAX does."),
    "sort/argsort ties": (
        "torch's unstable and descending sorts order ties differently from NumPy's stable "
        "sort; only ascending stable samples are compared."),
    "median": (
        "torch.median returns the lower of the two middle values; NumPy averages them. Not "
        "mapped."),
    "softmax over an empty axis": (
        "torch returns an empty array; SciPy's softmax/log_softmax raise ValueError, and so "
        "do fnad_nn's (NumPy's 'zero-size array' message): not compared."),
    "conv2d padding='same' with an even kernel": (
        "torch pads asymmetrically; fnad_nn.conv2d refuses with a clear ValueError asking "
        "for explicit padding: not compared."),
    "svd(full_matrices=True) gradients": (
        "torch differentiates when the loss ignores the extra columns; fnad refuses to "
        "differentiate the full SVD of a non-square matrix (ValueError): not compared."),
    "0-d inputs with an axis": (
        "torch's cumsum/cumprod/sort/transpose/nonzero take 0-d input with dim=0; NumPy gives "
        "cumsum shape (1,) and refuses the others, and fnad follows NumPy: not compared. "
        "(Reductions with axis=0 on 0-d input are an open defect, XFAIL above.)"),
    "tensordot over axes of different sizes": (
        "torch broadcasts contracted axes of size 1; NumPy refuses: not compared."),
    "cholesky_solve/cholesky_inverse factor": (
        "torch's gradient for the factor fills both triangles; the factor is read as one "
        "triangle, and fnad's gradient is that of the function read (the other triangle 0). "
        "Compared on the triangle read (Entry.tri)."),
    "hardsigmoid gradient": (
        "torch's backward multiplies by a float32 1/6; compared to 1e-7."),
}
