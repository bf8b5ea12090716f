"""The CUDA matmul kernel's source, compiled for the CPU by kernel_emulator.py and run with
one OS thread per CUDA thread: every tile configuration, layout and load path must give
numpy.matmul's result, and all configurations the same bits. Runs without a GPU."""

import numpy as np
import pytest

from fnad.kernels._matmul_cuda import CONFIGS
from tests.backend.kernel_emulator import Emulator, compiler

pytestmark = pytest.mark.skipif(compiler() is None, reason="needs a C++20 compiler")

LAYOUTS = [(False, False), (False, True), (True, False), (True, True)]


def _specs(full):
    specs = []
    for dt in (np.float32, np.float64):
        cfgs = CONFIGS[np.dtype(dt)]
        for cfg in (cfgs if full else cfgs[:1] + cfgs[-1:]):
            for ta, tb in LAYOUTS:
                for vec in (True, False):
                    specs.append((np.dtype(dt), cfg, ta, tb, vec))
    return specs


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    return Emulator(_specs(full=False), str(tmp_path_factory.mktemp("emu")))


def _check(emu, i, shapes, rng):
    dt, cfg, ta, tb, vec = emu.specs[i]
    for (ba, bb, m, k, n) in shapes:
        a = rng.standard_normal((ba, m, k))
        b = rng.standard_normal((bb, k, n))
        c = emu.matmul(i, a, b, ta, tb)
        ref = np.matmul(a.astype(dt).astype(np.float64), b.astype(dt).astype(np.float64))
        tol = 1e-5 if dt == np.float32 else 1e-12
        assert not np.isnan(c).any(), f"{emu.specs[i]} left outputs unwritten for {m,k,n}"
        np.testing.assert_allclose(c, ref, rtol=tol, atol=tol * max(1, k),
                                   err_msg=f"{emu.specs[i]} shape {(ba, bb, m, k, n)}")


# (batch of a, batch of b, M, K, N); vector paths need M, K, N multiples of 4
VEC_SHAPES = [(2, 1, 36, 40, 20), (1, 3, 8, 16, 4), (1, 1, 4, 4, 4), (3, 3, 132, 8, 68)]
SCALAR_SHAPES = [(2, 1, 37, 41, 23), (1, 1, 5, 3, 9), (1, 2, 1, 1, 1), (1, 1, 33, 0, 7),
                 (2, 2, 130, 17, 129)]


def test_every_spec_matches_numpy(emu):
    rng = np.random.default_rng(0)
    for i, spec in enumerate(emu.specs):
        _check(emu, i, VEC_SHAPES if spec[4] else SCALAR_SHAPES, rng)


def test_scalar_path_handles_vector_friendly_shapes_too(emu):
    rng = np.random.default_rng(1)
    for i, spec in enumerate(emu.specs):
        if not spec[4]:
            _check(emu, i, VEC_SHAPES[:2], rng)


def test_all_configurations_give_the_same_bits(tmp_path):
    specs = [(np.dtype(np.float32), cfg, False, False, True)
             for cfg in CONFIGS[np.dtype(np.float32)]]
    emu = Emulator(specs, str(tmp_path))
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((1, 40, 44)), rng.standard_normal((1, 44, 36))
    outs = [emu.matmul(i, a, b) for i in range(len(specs))]
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])


@pytest.mark.slow
def test_full_matrix_of_specs(tmp_path):
    emu = Emulator(_specs(full=True), str(tmp_path))
    rng = np.random.default_rng(3)
    for i, spec in enumerate(emu.specs):
        _check(emu, i, VEC_SHAPES if spec[4] else SCALAR_SHAPES, rng)
