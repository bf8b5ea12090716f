"""Every test in this folder runs with the simulated device installed as fnad's "gpu"."""

import pytest

from tests.simdevice import installed, simcupy


@pytest.fixture(autouse=True)
def sim():
    """The simulated device's array module (CuPy's stand-in), installed for the test."""
    with installed():
        yield simcupy
