"""benchmarks/layer_kernels.py --quick: both tables print, and every compiler column (the
layer in plain fnad.numpy, eager and jitted, exact and fast) passed the script's check
against float64 before it was timed (issue 30 item 7)."""

import importlib
import sys
from pathlib import Path

import pytest

from fnad.kernels import cpu

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def layer_kernels(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.delenv("FNAD_NUM_THREADS", raising=False)
    yield importlib.import_module("layer_kernels")
    for name in ["layer_kernels", "_timing"]:
        sys.modules.pop(name, None)


@pytest.mark.skipif(not cpu.available(), reason="fnad.kernels.cpu needs numba")
def test_quick_run_prints_both_tables(layer_kernels, capsys):
    rows = layer_kernels.main(["--quick", "--threads", "2"])
    out = capsys.readouterr().out
    assert len(rows) == 8 and "QUICK" in out
    for name, med in rows:
        assert {"k1", "kn", "np", "kernel", "eager", "jit", "fast"} <= set(med), name
        assert all(t > 0 for t in med.values()), name
    assert out.count(" (fwd+vjp) ") == 2   # softmax and layer norm's VJPs run the forward too
    table = out[out.index("# the layer in plain fnad.numpy"):].splitlines()[2:]
    assert len(table) == 8 and all(r.split()[-1] in ("yes", "no") for r in table)


def test_values_are_checked_before_timing(layer_kernels):
    """A column off by more than the bound stops the run, naming the row and the column."""
    import numpy as np

    x = np.linspace(-3, 3, 64, dtype=np.float32)
    cols = {"right": lambda: layer_kernels.plain_gelu(x),
            "wrong": lambda: layer_kernels.plain_gelu(x) * np.float32(1 + 1e-4)}
    with pytest.raises(SystemExit, match="gelu, wrong: largest error"):
        layer_kernels.check_values("gelu", cols, layer_kernels.plain_gelu, (x,), 1)
