"""Deliberate differences from torch (with the reference that decides), for tests/opinfo.

`XFAIL[(name, check)]` (check "*" for every check; a third element "complex128"/"float64" for
one dtype) names samples that still disagree with torch: after issue 31's fixes only
differences the reference decides (NumPy, SciPy, or a torch limitation) are left. The test is
xfail(strict=False). A value may be a `(reason, which)` pair: `which(case)` picks the samples.

`DIFFERENT` lists each deliberate difference: what torch does, what the reference does, and
which one fnad follows. The mapping (tests/opinfo/mapping*.py) carries it out: a `numpy_ref`
that decides the value, a skipped sample, or a projection of the gradient."""

import numpy as np


def _zero_d(case):
    return np.ndim(case.xs[0]) == 0


def to_np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


# ----------------------------------------------------------------------------- left as xfail
# Left after issue 31's fixes: not fnad defects but differences the reference decides (the
# xfail keeps them visible in the report; see the closing note of issue 31).
_NUMPY_0D = ("NumPy decides: np.mean and np.linalg.vector_norm of a 0-d array with axis=0 raise "
             "AxisError (np.sum/amax/prod accept it); torch accepts dim=0 on 0-d tensors")
_SCIPY_0D = ("SciPy decides: scipy.special.logsumexp of a 0-d array with keepdims=True has "
             "shape (1,); torch keeps ()")
_TORCH_CVAR = ("torch cannot take the VJP of masked.var/std of complex input (its real result "
               "against a complex output dtype); the value and JVP agree")
XFAIL = {
    **{(name, "*"): (_NUMPY_0D, _zero_d) for name in (
        "mean", "masked.mean", "norm", "linalg.vector_norm", "nn.functional.cosine_similarity",
        "nn.functional.normalize")},
    ("logsumexp", "*"): (_SCIPY_0D, _zero_d), ("masked.logsumexp", "*"): (_SCIPY_0D, _zero_d),
    ("masked.var", "*", "complex128"): _TORCH_CVAR,
    ("masked.std", "*", "complex128"): _TORCH_CVAR,
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
