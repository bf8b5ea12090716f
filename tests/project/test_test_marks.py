"""The reasons given for skips and expected failures in tests/ name files that exist: a reason
that points to a module which is gone is a stale mark (issue 31: an xfail named
fnad/_autodiff.py, and the test had long been passing)."""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
MARKS = {"xfail", "skip", "skipif", "importorskip"}
PATH = re.compile(r"\b(?:fnad|fnad_nn|fnad_optim|tests|examples|benchmarks|tools)/[\w/]+\.\w+")


def _reasons(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name in MARKS:
                for value in [k.value for k in node.keywords if k.arg == "reason"] + node.args:
                    for s in ast.walk(value):
                        if isinstance(s, ast.Constant) and isinstance(s.value, str):
                            yield node.lineno, s.value


def test_mark_reasons_name_files_that_exist():
    stale = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for line, text in _reasons(ast.parse(path.read_text())):
            stale += [f"{path.relative_to(ROOT)}:{line}: {p}" for p in PATH.findall(text)
                      if not (ROOT / p).exists()]
    assert not stale, "skip/xfail reasons naming files that do not exist:\n" + "\n".join(stale)
