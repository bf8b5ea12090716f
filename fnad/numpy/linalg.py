"""fnad.numpy.linalg: differentiable linear algebra with `numpy.linalg`'s names and shapes.

All functions are batched over leading axes as in NumPy and run NumPy/CuPy directly on
plain arrays. Derivative rules (VJP and JVP) are written with fnad.numpy, so higher
derivatives work. Assumptions: eigh/svd vector derivatives need distinct eigenvalues /
singular values; det/slogdet/inv/solve need invertible matrices; cholesky/eigh give the
symmetric gradient. eig/eigvals of traced inputs are complex (JAX's derivatives; eigenvector
derivatives need distinct eigenvalues); lstsq's solution is differentiable at constant rank;
matrix_rank has no derivative.
"""

from ._linalg import (
    SlogdetResult as SlogdetResult,
    cholesky as cholesky,
    det as det,
    inv as inv,
    matrix_power as matrix_power,
    multi_dot as multi_dot,
    pinv as pinv,
    slogdet as slogdet,
    solve as solve,
    tensorinv as tensorinv,
    tensorsolve as tensorsolve,
)
from ._linalg_decomp import (
    EighResult as EighResult,
    QRResult as QRResult,
    SVDResult as SVDResult,
    eigh as eigh,
    eigvalsh as eigvalsh,
    qr as qr,
    svd as svd,
    svdvals as svdvals,
)
from ._linalg_eig import (
    EigResult as EigResult,
    LstsqResult as LstsqResult,
    eig as eig,
    eigvals as eigvals,
    lstsq as lstsq,
)
from ._linalg_norm import (
    cond as cond,
    matrix_norm as matrix_norm,
    norm as norm,
    vector_norm as vector_norm,
)
from ._linalg import mT as matrix_transpose
from .._core.rules import defabstract_eval as _defabstract_eval
from ._util import linalg_rule as _linalg_rule
from ._util import wrap_nondiff as _wrap_nondiff

import numpy as _np

LinAlgError = _np.linalg.LinAlgError
matrix_rank = _wrap_nondiff(_np.linalg.matrix_rank, "matrix_rank")
_defabstract_eval(matrix_rank, _linalg_rule(_np.linalg.matrix_rank,
                                            lambda a, *args, **kw: a.shape[:-2]))

__all__ = ["cholesky", "cond", "det", "eig", "eigvals", "eigh", "eigvalsh", "inv", "lstsq",
           "matrix_norm", "matrix_power",
           "matrix_rank", "matrix_transpose", "multi_dot", "norm", "pinv", "qr", "slogdet",
           "solve", "svd", "svdvals", "tensorinv", "tensorsolve", "vector_norm", "LinAlgError",
           "EigResult", "EighResult", "LstsqResult", "QRResult", "SVDResult", "SlogdetResult"]
