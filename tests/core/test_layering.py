"""The layering of STYLE.md: the tracer and the core know nothing of fnad.numpy, and the
packages above (fnad_nn, fnad_optim) use only fnad's public modules."""

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Every module directly in fnad/ is core or array layer; a new module must be put in one.
CORE = ["_tracer", "_abstract", "_backend", "_shapes", "_tree", "tree", "_autodiff", "_transforms",
        "_jacobians", "extend", "test_util", "_devices", "_checkpoint", "_checkpoint_format",
        "_checkpoint_load", "_staging", "_graph", "_graph_text", "_graph_passes",
        "_graph_memory", "_graph_compile", "_jit", "_graph_dot", "_lax", "_lax_prims",
        "_lax_graphs", "_lax_batch", "lax", "_batching", "_batch_families", "_graph_fusion",
        "_graph_kernels", "_graph_simplify", "_graph_unroll"]
ARRAY_LAYER = ["__init__", "_random", "random"]  # and the packages numpy, scipy, kernels
ARRAY_PACKAGES = ("numpy", "scipy", "kernels")


def _imports(path):
    tree = ast.parse((ROOT / path).read_text())
    names = []
    for node in ast.walk(tree):  # lazy imports inside functions included
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append("." * node.level + (node.module or ""))
            names += ["." * node.level + (node.module or "") + ":" + a.name for a in node.names]
    return names


def test_every_fnad_module_is_classified():
    found = {p.stem for p in (ROOT / "fnad").glob("*.py")}
    assert found == set(CORE) | set(ARRAY_LAYER), (found ^ (set(CORE) | set(ARRAY_LAYER)))


def _is_array_layer(name):
    mod, _, attr = name.partition(":")
    if mod.startswith("fnad."):
        mod = "." + mod[len("fnad."):]
    if mod in ("fnad", ".") and attr:
        mod = "." + attr
    return mod.lstrip(".").split(".")[0] in ARRAY_PACKAGES and mod.startswith(".")


def test_core_modules_do_not_import_the_array_layer():
    for stem in CORE:
        for name in _imports(f"fnad/{stem}.py"):
            assert not _is_array_layer(name), (stem, name)


def test_importing_the_core_modules_alone_does_not_load_fnad_numpy():
    # load the core files as a stand-alone package so fnad/__init__.py does not run
    code = f"""
import importlib, sys, types
pkg = types.ModuleType("fnadcore"); pkg.__path__ = [{str(ROOT / 'fnad')!r}]
sys.modules["fnadcore"] = pkg
for name in {CORE!r}:
    importlib.import_module("fnadcore." + name)
loaded = [m for m in sys.modules if m.startswith("fnad")]
assert all(m == "fnadcore" or m.startswith("fnadcore.") for m in loaded), loaded
assert not any(m.split(".")[1] in {ARRAY_PACKAGES!r} for m in loaded if "." in m), loaded
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def test_nn_and_optim_use_only_public_fnad_modules():
    for pkg in ["fnad_nn", "fnad_optim"]:
        other = {"fnad_nn": "fnad_optim", "fnad_optim": "fnad_nn"}[pkg]
        for path in (ROOT / pkg).rglob("*.py"):
            for name in _imports(path.relative_to(ROOT)):
                mod, _, attr = name.partition(":")
                assert mod.split(".")[0] != other, (path, name)
                if mod == "fnad" or mod.startswith("fnad."):
                    parts = mod.split(".") + ([attr] if attr and mod == "fnad" else [])
                    assert not any(p.startswith("_") for p in parts), (path, name)


def test_runtime_packages_never_import_torch_or_pickle():
    for pkg in ["fnad", "fnad_nn", "fnad_optim"]:
        for path in (ROOT / pkg).rglob("*.py"):
            for name in _imports(path.relative_to(ROOT)):
                root = name.split(":")[0].lstrip(".").split(".")[0]
                assert root not in ("torch", "pickle", "cloudpickle", "dill"), (path, name)
