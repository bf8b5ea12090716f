"""The fixture of the optax parity tests: jax computes in float64 while a module runs."""

import pytest


@pytest.fixture(autouse=True, scope="module")
def x64():
    """jax_enable_x64 on for the module, restored after it."""
    import jax
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)
