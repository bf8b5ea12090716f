"""docs/optim.md's table of optax names against the installed optax and fnad_optim: every
optax name has a row, every counterpart exists, and no name fnad_optim has is listed as
missing."""

import importlib
import re
import types
from pathlib import Path

import pytest

optax = pytest.importorskip("optax")

DOC = Path(__file__).resolve().parents[2] / "docs" / "optim.md"
NAMESPACES = {"optax": "fnad_optim", "optax.losses": "fnad_optim.losses",
              "optax.schedules": "fnad_optim.schedules",
              "optax.tree_utils": "fnad_optim.tree_utils",
              "optax.projections": "fnad_optim.projections",
              "optax.contrib": "fnad_optim.contrib"}
ROW = re.compile(r"^\| `([\w.]+)` \| (.+?) \| (.*?) ?\|$")


def _table():
    """{namespace: {name: (counterpart, note)}} from the doc's `### \\`optax...\\`` sections."""
    rows, section = {}, None
    for line in DOC.read_text().splitlines():
        head = re.match(r"^### `(optax[\w.]*)`", line)
        if head:
            section = head.group(1)
            rows.setdefault(section, {})
        elif line.startswith("## "):
            section = None
        elif section and (m := ROW.match(line)):
            name, counterpart, note = m.groups()
            assert name not in rows[section], f"{section}.{name} has two rows"
            rows[section][name] = (counterpart.strip(), note.strip())
    return rows


def _public(module):
    return {n for n in dir(module) if not n.startswith("_")
            and not isinstance(getattr(module, n), types.ModuleType)}


def _resolve(dotted):
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for p in parts[1:]:
        obj = getattr(obj, p, None) if not isinstance(obj, types.ModuleType) or hasattr(
            obj, p) else importlib.import_module(f"{obj.__name__}.{p}")
        if obj is None:
            return None
    return obj


@pytest.mark.parametrize("namespace", sorted(NAMESPACES))
def test_every_optax_name_has_a_row(namespace):
    rows = _table().get(namespace, {})
    missing = sorted(_public(importlib.import_module(namespace)) - set(rows))
    assert not missing, (f"docs/optim.md has no row for {namespace}: {missing}; add each with "
                         "its fnad_optim counterpart or the reason there is none")


@pytest.mark.parametrize("namespace", sorted(NAMESPACES))
def test_counterparts_exist_and_reasons_are_honest(namespace):
    ours = NAMESPACES[namespace]
    ours_module = importlib.import_module(ours) if ours else None
    for name, (counterpart, note) in _table().get(namespace, {}).items():
        if counterpart == "—":
            assert note, f"{namespace}.{name}: give the reason there is no counterpart"
            assert ours_module is None or not hasattr(ours_module, name), (
                f"{namespace}.{name} is listed as missing but {ours}.{name} exists: write "
                "its counterpart in docs/optim.md")
            continue
        target = re.fullmatch(r"`(fnad_optim[\w.]*)`", counterpart)
        assert target, f"{namespace}.{name}: counterpart {counterpart!r} is not `fnad_optim.x`"
        assert _resolve(target.group(1)) is not None, (
            f"{namespace}.{name}: {target.group(1)} does not exist")


def test_table_counts():
    rows = _table()
    counts = {"matched": 0, "reason": 0}
    for section in rows.values():
        for counterpart, _ in section.values():
            key = "reason" if counterpart == "—" else "matched"
            counts[key] += 1
    assert counts["matched"] > 250, counts
