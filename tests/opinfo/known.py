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


# ----------------------------------------------------------------------------- open defects
# (issue 31, each fixed with its own test on another branch)
_JIT_BITS = "issue 31: jit is not bit-identical to eager for lstsq, multi_dot, cholesky(upper)"
XFAIL = {
    ("allclose", "jit"): "issue 31: fnad.jit of allclose/array_equal (AttributeError)",
    ("equal", "jit"): "issue 31: fnad.jit of allclose/array_equal (AttributeError)",
    ("linalg.lstsq", "jit"): _JIT_BITS,
    ("linalg.lstsq.grad_oriented", "jit"): _JIT_BITS,
    ("linalg.multi_dot", "jit"): _JIT_BITS,
    ("cholesky", "jit"): (_JIT_BITS, _upper),
    ("linalg.cholesky", "jit"): (_JIT_BITS, _upper),
    ("linalg.cholesky_ex", "jit"): (_JIT_BITS, _upper),
    ("nextafter", "vjp"): "issue 31: nextafter has a silent zero gradient",
    ("nextafter", "jvp"): "issue 31: nextafter has a silent zero gradient",
    ("matrix_exp", "vmap"): "issue 31: vmap(expm) on (3, 5, 5) returns (3, 3, 5, 5)",
    ("logsumexp", "*"): ("issue 31: reductions of 0-d arrays with axis=0", _zero_d),
    ("masked.logsumexp", "*", "complex128"):
        "issue 31: logsumexp of complex input leaves the imaginary part unreduced",
    ("masked.var", "*", "complex128"): "issue 31: var/std with where= on complex input",
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
    "logcumsumexp forward mode (complex)": (
        "torch's forward-mode derivative is NaN for complex input; its VJP is right, so the "
        "JVP is checked through torch's VJP."),
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
    "hardsigmoid gradient": (
        "torch's backward multiplies by a float32 1/6; compared to 1e-7."),
}
