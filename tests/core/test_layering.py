"""The layering of STYLE.md: the tracer and the core know nothing of fnad.numpy."""

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORE = ["fnad/_tracer.py", "fnad/_abstract.py", "fnad/_autodiff.py", "fnad/_transforms.py",
        "fnad/_tree.py"]


def _imports(path):
    tree = ast.parse((ROOT / path).read_text())
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append("." * node.level + (node.module or ""))
            names += ["." * node.level + (node.module or "") + ":" + a.name for a in node.names]
    return names


def test_core_modules_do_not_import_fnad_numpy():
    for path in CORE:
        for name in _imports(path):
            assert "numpy:" not in name or not name.startswith("."), (path, name)
            assert not name.startswith(".numpy") and name not in ("fnad.numpy", "..numpy"), \
                (path, name)


def test_importing_the_core_modules_alone_does_not_load_fnad_numpy():
    # load the core files as a stand-alone package so fnad/__init__.py does not run
    code = f"""
import importlib.util, sys, types
pkg = types.ModuleType("fnadcore"); pkg.__path__ = [{str(ROOT / 'fnad')!r}]
sys.modules["fnadcore"] = pkg
for name in ["_tracer", "_backend", "_abstract", "_tree", "_autodiff", "_transforms"]:
    spec = importlib.util.spec_from_file_location(
        "fnadcore." + name, {str(ROOT / 'fnad')!r} + "/" + name + ".py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["fnadcore." + name] = mod
    spec.loader.exec_module(mod)
assert not any(m.startswith("fnad") and m != "fnadcore" and not m.startswith("fnadcore.")
               for m in sys.modules), [m for m in sys.modules if m.startswith("fnad")]
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def test_runtime_packages_never_import_torch_or_pickle():
    for pkg in ["fnad", "fnad_nn", "fnad_optim"]:
        for path in (ROOT / pkg).rglob("*.py"):
            for name in _imports(path.relative_to(ROOT)):
                root = name.split(":")[0].lstrip(".").split(".")[0]
                assert root not in ("torch", "pickle", "cloudpickle", "dill"), (path, name)
