"""The op battery (every fnad.numpy and fnad.scipy case of tests/numpy/cases*.py) on the
simulated device: forward values, VJPs and JVPs equal NumPy's to 1e-8, every result stays a
device array, and nothing crosses between host and device but where an op's device path
reads values back by design (battery.HOST_PATHS). The default run takes every other case
and at least one per name; `-m slow` runs the rest."""

import pytest

from tests.simdevice.battery import ALL_CASES, check_case

pytestmark = pytest.mark.sim_device

_STRIDE = 2
_NAMES = {c.name for c in ALL_CASES[::_STRIDE]}
DEFAULT = ALL_CASES[::_STRIDE] + [
    next(c for c in ALL_CASES if c.name == n) for n in sorted({c.name for c in ALL_CASES}
                                                              - _NAMES)]
REST = [c for c in ALL_CASES if not any(c is d for d in DEFAULT)]


@pytest.mark.parametrize("case", DEFAULT, ids=lambda c: c.id)
def test_op_on_the_simulated_device(case):
    check_case(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", REST, ids=lambda c: c.id)
def test_op_on_the_simulated_device_rest(case):
    check_case(case)


def test_every_name_of_the_battery_is_in_the_default_run():
    assert {c.name for c in DEFAULT} == {c.name for c in ALL_CASES}
    assert len(DEFAULT) + len(REST) == len(ALL_CASES)
