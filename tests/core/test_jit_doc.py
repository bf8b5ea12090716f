"""docs/jit.md shows real output: its printed examples are what tools/jit_doc_examples.py
prints from this checkout."""

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_jit_doc_examples_are_current():
    spec = importlib.util.spec_from_file_location("jit_doc_examples",
                                                  ROOT / "tools" / "jit_doc_examples.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    doc = (ROOT / "docs" / "jit.md").read_text()
    assert tool.render(doc) == doc, "docs/jit.md is stale: run python tools/jit_doc_examples.py"
