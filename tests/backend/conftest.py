"""GPU tests: marked `gpu` and skipped cleanly where CuPy or a CUDA device is missing."""

import pytest

from fnad._core.backend import cupy_or_none, gpu_unavailable_reason


@pytest.fixture
def cp():
    """The cupy module; skips the test without a usable GPU."""
    mod = cupy_or_none()
    if mod is None:
        pytest.skip(f"no GPU: {gpu_unavailable_reason()}")
    return mod


def to_gpu(cp, tree):
    import fnad
    return fnad.device_put(tree, "gpu")
