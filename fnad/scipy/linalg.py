"""fnad.scipy.linalg: differentiable linear algebra with `scipy.linalg`'s names.

Batched over leading axes where the underlying operation allows. Everything is a
composition of fnad.numpy (solves, Pade, Kronecker systems) except the LU factors and
sqrtm, which are primitives with their own rules; see the module docstrings for the methods.
"""

from ._linalg import (
    block_diag as block_diag,
    cho_factor as cho_factor,
    cho_solve as cho_solve,
    cholesky as cholesky,
    det as det,
    expm as expm,
    inv as inv,
    solve as solve,
    solve_banded as solve_banded,
    solve_sylvester as solve_sylvester,
    solve_triangular as solve_triangular,
)
from ._sqrtm import sqrtm as sqrtm
from ._linalg_lu import lu as lu, lu_factor as lu_factor, lu_solve as lu_solve

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "det", "expm", "inv", "lu",
           "lu_factor", "lu_solve", "solve", "solve_banded", "solve_sylvester",
           "solve_triangular", "sqrtm"]
