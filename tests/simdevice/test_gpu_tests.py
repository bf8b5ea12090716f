"""tests/backend/test_gpu_core.py (transforms staying on the GPU, moves, mismatch errors,
checkpoints onto the GPU, PRNG bits), the `-m gpu` tests of dispatch, run here on the
simulated device: its `cp` is the simulated CuPy."""

import pytest

from tests.backend.test_gpu_core import *  # noqa: F403 - the GPU tests, collected here

pytestmark = pytest.mark.sim_device


@pytest.fixture
def cp(sim):
    return sim
