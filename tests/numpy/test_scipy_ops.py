"""The fnad.scipy op table (tests/numpy/cases_scipy.py) through check_grads, five-point
differences and PyTorch float64 parity."""

import pytest

from fnad.test_util import check_grads
from tests.numpy.battery import fd_error, torch_error
from tests.numpy.cases_scipy import CASES

TORCH_TOL = 1e-10
FD_TOL = 1e-6


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_check_grads(case):
    check_grads(case.fun, case.args, order=case.order, modes=case.modes, atol=case.atol,
                rtol=case.rtol, eps=case.eps)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_five_point_differences(case):
    assert fd_error(case, eps=case.eps or 1e-3) <= (case.rtol or FD_TOL)


@pytest.mark.parametrize("case", [c for c in CASES if c.torch_fun is not None],
                         ids=lambda c: c.id)
def test_torch_parity(case):
    pytest.importorskip("torch")
    assert torch_error(case) <= TORCH_TOL


def test_every_new_name_has_rows():
    import fnad.scipy.linalg as fla
    import fnad.scipy.signal as fsig
    import fnad.scipy.stats as fst
    rows = {c.name for c in CASES}
    new_special = ["beta", "betainc", "betaincinv", "betaln", "erfcinv", "erfcx", "gamma",
                   "gammainc", "gammaincc", "gammaincinv", "log_ndtr", "multigammaln", "ndtr",
                   "ndtri", "rgamma", "i0", "i0e", "i1", "i1e", "iv", "ive", "j0", "j1", "jn",
                   "y0", "y1", "yn"]
    wanted = ([f"special.{n}" for n in new_special]
              + [f"scipy.linalg.{n}" for n in fla.__all__ if n != "cho_factor"]
              + [f"scipy.signal.{n}" for n in fsig.__all__]
              + [f"stats.{n}.{'logpmf' if n in ('poisson', 'bernoulli', 'binom') else 'logpdf'}"
                 for n in fst.__all__])
    missing = [n for n in wanted if n not in rows]
    assert not missing, f"no rows in tests/numpy/cases_scipy.py for {missing}"
