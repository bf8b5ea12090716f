"""Shared by every test: each test starts with no jit traces, as a fresh process would.

Every `fnad.jit` of one function with the same options shares its traces (so `jit(f)(x)`
written inline traces once); tests that monkeypatch the compiler, or check how often a
function is traced, must not find the traces an earlier test made."""

import pytest

import fnad
from fnad._jit import fusion


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


@pytest.fixture
def kernel_cache(monkeypatch, request, tmp_path_factory):
    """numba kernels in pytest's cache (seeded programs make the same kernels on every run,
    so later runs load them instead of compiling), else a temporary directory."""
    cache = getattr(request.config, "cache", None)
    where = cache.mkdir("fnad_kernels") if cache is not None else \
        tmp_path_factory.getbasetemp() / "fnad_kernels"
    monkeypatch.setenv("FNAD_CACHE_DIR", str(where))


@pytest.fixture
def fast_math_kernels(kernel_cache, monkeypatch):
    """Fast math's numba kernels, with FNAD_FAST_MATH unset; skips where numba is not the
    fusion backend."""
    monkeypatch.delenv("FNAD_FAST_MATH", raising=False)
    if fusion.get_backend() != "numba":
        pytest.skip("fast math's kernels are numba's")
