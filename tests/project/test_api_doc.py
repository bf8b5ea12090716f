"""docs/api.md's lists of fnad_nn, fnad_optim and the graph API are what tools/api_doc.py
generates from the code: every public name with its signature, so they cannot drift."""

import importlib.util
import inspect
import pathlib
import re

import fnad
import fnad_nn

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "api.md"


def _tool():
    spec = importlib.util.spec_from_file_location("api_doc", ROOT / "tools" / "api_doc.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def test_api_doc_lists_are_current():
    doc = DOC.read_text()
    assert _tool().render(doc) == doc, "docs/api.md is stale: run python tools/api_doc.py"


def test_every_public_fnad_nn_name_is_listed_with_its_signature():
    doc = DOC.read_text()
    for module in (fnad_nn, fnad_nn.init, fnad_nn.models, fnad_nn.data):
        for name, obj in vars(module).items():
            if name.startswith("_") or inspect.ismodule(obj):
                continue
            assert f"- `{module.__name__}.{name}" in doc, name
    assert "- `fnad_nn.linear(params, x)`: " in doc
    assert "- `fnad_nn.mse_loss(pred, target, *, reduction='mean')`: " in doc
    assert "- `fnad_nn.init_linear(key, d_in, d_out, *, bias=True, dtype=np.float32, " in doc


def test_graph_api_is_listed_by_public_names_only():
    doc = DOC.read_text()
    section = doc[doc.index("<!-- api: graph -->"):]
    section = section[:section.index("<!-- /api -->")]
    for entry in ("fnad.make_graph(fun, static_argnums=())", "fnad.named_scope(name)",
                  "graph.to_dot(values=False, grads=False, fold=True, max_nodes=400, "
                  "scope=None)", "graph.render(path, fmt=None, **kwargs)",
                  "graph.values(*args, **kwargs)", "graph.memory_plan()",
                  "jitted.graph(*args, **kwargs)", "jitted.cache_size()",
                  "jitted.clear_cache()"):
        assert f"- `{entry}`: " in section, entry
    assert not re.search(r"fnad\w*\._|/_\w+\.py", section), "a private module path"
    jitted = fnad.jit(lambda x: x)
    assert callable(jitted.cache_size) and callable(jitted.clear_cache)
