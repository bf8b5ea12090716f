"""Shared by every test: each test starts with no jit traces, as a fresh process would.

Every `fnad.jit` of one function with the same options shares its traces (so `jit(f)(x)`
written inline traces once); tests that monkeypatch the compiler, or check how often a
function is traced, must not find the traces an earlier test made."""

import pytest

import fnad


@pytest.fixture(autouse=True)
def _no_jit_traces_from_earlier_tests():
    fnad.clear_caches()
    yield


@pytest.fixture
def jax_x32():
    """JAX in its default 32-bit mode for one test (modules that compare in float64 switch
    jax_enable_x64 on when they are imported, which lasts for the session), restored after."""
    try:
        import jax
    except ImportError:
        yield
        return
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)
    yield
    jax.config.update("jax_enable_x64", old)
