"""The project's main job, examples/quickstart.py, trains to >= 97% held-out accuracy."""

import importlib.util
import pathlib

PATH = pathlib.Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"


def test_quickstart_runs(capsys):
    spec = importlib.util.spec_from_file_location("quickstart", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    acc = module.main()
    out = capsys.readouterr().out
    assert acc >= 0.97
    assert "held-out accuracy" in out and "checkpoint reloaded: params identical True" in out
