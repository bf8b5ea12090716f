import importlib
import os
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DATA = Path(os.environ.get("FNAD_DATA_DIR") or EXAMPLES.parent / ".." / "shared" / "data")


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """No example test downloads anything (fnad_nn.data reads FNAD_OFFLINE)."""
    monkeypatch.setenv("FNAD_OFFLINE", "1")


@pytest.fixture
def example(monkeypatch):
    """Import an example script as a module (examples/ goes on sys.path, as when it runs)."""
    monkeypatch.syspath_prepend(str(EXAMPLES))

    def load(name):
        return importlib.import_module(name)

    yield load
    for name in [m for m, mod in sys.modules.items()
                 if getattr(mod, "__file__", None) and Path(mod.__file__).parent == EXAMPLES]:
        del sys.modules[name]


needs_fashion = pytest.mark.skipif(
    not (DATA / "fashion-mnist").is_dir(),
    reason=f"no Fashion-MNIST under {DATA}: set FNAD_DATA_DIR to a directory holding "
           f"fashion-mnist/*-ubyte.gz to run the MNIST example smoke tests")
