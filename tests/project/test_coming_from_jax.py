"""docs/coming-from-jax.md: its examples run as written, in order, and the names it promises
exist."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "coming-from-jax.md"


def _blocks():
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_examples_run_in_order():
    blocks = _blocks()
    assert len(blocks) >= 7
    namespace = {"__name__": "coming_from_jax"}
    for i, code in enumerate(blocks):
        try:
            exec(compile(code, f"{DOC.name} block {i}", "exec"), namespace)
        except Exception as e:  # pragma: no cover - the message names the block
            pytest.fail(f"{DOC.name}: block {i} raised {type(e).__name__}: {e}\n{code}")


def test_the_import_table_names_modules_that_exist():
    import importlib
    text = DOC.read_text()
    for mod in sorted(set(re.findall(r"`import (fnad[\w.]*)", text))):
        importlib.import_module(mod)
    import fnad
    import fnad_nn
    for name in ("grad", "jit", "vmap", "random", "lax", "tree", "tree_util"):
        assert hasattr(fnad, name), name
    for name in ("elu", "selu", "celu", "glu", "swish", "relu6", "hard_tanh", "log_sigmoid",
                 "standardize", "logsumexp", "one_hot", "initializers"):
        assert hasattr(fnad_nn, name), name
