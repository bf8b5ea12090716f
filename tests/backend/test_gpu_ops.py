"""The op battery (every fnad.numpy and fnad.scipy case of tests/numpy/cases*.py) on CuPy
against NumPy: forward values, VJPs and JVPs to 1e-8 and every result on the GPU, by the check
the simulated device runs (tests/simdevice/battery.py; on CuPy its transfer log sees nothing,
the check of values and residency is the same). The default `-m gpu` run takes the sample of
tests/simdevice/test_ops.py; `-m "gpu and slow"` the rest."""

import pytest

from tests.simdevice.battery import check_case
from tests.simdevice.test_ops import DEFAULT, REST

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("case", DEFAULT, ids=lambda c: c.id)
def test_op_on_gpu_matches_numpy(cp, case):
    check_case(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", REST, ids=lambda c: c.id)
def test_op_on_gpu_matches_numpy_rest(cp, case):
    check_case(case)
