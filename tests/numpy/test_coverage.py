"""Every name docs/api.md lists under fnad.numpy exists, and every differentiable one has a row
in the op table."""

import pathlib
import re

import pytest

import fnad.numpy as fnp
from tests.numpy.cases import CASES

# The project's own API reference (a copy of the API contract kept in the repository, so the
# suite needs nothing outside the checkout).
API = pathlib.Path(__file__).resolve().parents[2] / "docs" / "api.md"

# Functions docs/api.md lists that have no derivative (or whose derivative is tested elsewhere).
NO_GRAD_ROW = {"array", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "eye",
               "arange", "linspace", "tri", "sign", "floor", "ceil", "round", "argsort",
               "argmax", "argmin", "nonzero", "at", "logsumexp", "norm"}


def api_names():
    """{category: [names]} from the bullet list under '## fnad.numpy' in docs/api.md."""
    text = API.read_text()
    section = text.split("## fnad.numpy", 1)[1].split("\n## ", 1)[0]
    section = re.sub(r"x\[\.\.\.\] with [^;]*;", "", section)  # indexing syntax, not names
    cats, current = {}, None
    for line in section.splitlines():
        m = re.match(r"- ([a-z ]+?): (.*)", line)
        if m:
            current = m.group(1)
            cats[current] = []
            line = m.group(2)
        elif not line.startswith("  ") or current is None:
            current = None if not line.startswith("  ") else current
            continue
        for item in line.split(","):
            item = item.strip().rstrip(".;")
            for part in item.split(";"):
                m2 = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)(\s*\(.*)?$", part.strip())
                if m2 and m2.group(1) not in {"and", "with"}:
                    cats[current].append(m2.group(1))
    return cats


def test_api_list_parsed():
    cats = api_names()
    assert {"creation", "elementwise", "reductions", "shape", "products", "indexing",
            "linalg"} <= set(cats)
    assert sum(len(v) for v in cats.values()) > 130


@pytest.mark.parametrize("category", ["creation", "elementwise", "reductions", "shape",
                                      "products", "indexing"])
def test_names_present(category):
    names = api_names()[category]
    missing = [n for n in names if n != "norm" and not hasattr(fnp, n)]
    assert not missing, f"fnad.numpy lacks {missing} listed under '{category}' in docs/api.md"
    if category == "reductions":
        assert hasattr(fnp.linalg, "norm"), "fnad.numpy.linalg.norm is missing"
    if category == "indexing":
        assert callable(fnp.at)


def test_linalg_names_present():
    missing = [n for n in api_names()["linalg"] if not hasattr(fnp.linalg, n)]
    assert not missing, f"fnad.numpy.linalg lacks {missing}"


def test_differentiable_names_have_rows():
    rows = {c.name for c in CASES}
    cats = api_names()
    listed = [n for c in ("creation", "elementwise", "reductions", "shape", "products",
                          "indexing") for n in cats[c]]
    missing = [n for n in listed if n not in rows and n not in NO_GRAD_ROW]
    assert not missing, f"no op-table rows for {missing}; add cases to tests/numpy/cases.py"
