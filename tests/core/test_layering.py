"""The layering of docs/design.md, checked by path: every module of fnad/ belongs to the wing
its folder names, wings import only wings below them (imports inside functions included),
fnad/ has no import circle, and the packages above (fnad_nn, fnad_optim) use only fnad's
public modules. Also the shape the style guide states: the tracer imports neither NumPy nor
the rest of fnad, each __init__.py re-exports explicitly, no module passes 800 lines, and
importing fnad changes nothing process-wide. A new file is covered without editing this
test; a new folder must be given a rank here."""

import ast
import importlib.util
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("import_graph", ROOT / "tools" / "import_graph.py")
import_graph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(import_graph)

# Each wing imports only wings of a lower rank, or modules of its own folder. Wings of one rank
# never import each other. The faces (fnad/*.py) re-export and sit on top.
# `distributed` sits above `random` (process_key folds the process index into a key) and so
# above `numpy` (its rules) and `_io` (its once-written checkpoints); nothing imports it but
# the faces, and it imports neither `kernels` nor `scipy`.
# `autograd` (autograd's API, issue 32) maps onto the transforms, `numpy` and `scipy`, so it
# sits above them all; the faces do not import it (`import fnad.autograd` loads SciPy).
# `lax` sits above `numpy` (its operations are built from fnad.numpy's primitives) and below
# `random` (whose samplers may loop with lax.while_loop, as JAX's gamma does).
RANK = {"_core": 0, "_ad": 1, "_batching": 1, "_io": 1, "_graph": 2, "_jit": 3, "numpy": 4,
        "lax": 5, "random": 6, "kernels": 7, "scipy": 7, "distributed": 7,
        "export": 7, "example_libraries": 7, "autograd": 8}
FACE_RANK = 9
CORE = ("_core", "_ad", "_batching", "_io", "_graph", "_jit")
ARRAY_PACKAGES = ("numpy", "scipy", "kernels", "random")
OPTIONAL = ("numba", "numexpr", "cupy", "cupyx", "mpi4py",  # may be imported where used
            "safetensors", "tokenizers", "onnx", "ml_dtypes")


def _wing(module):
    """The wing of a dotted fnad module: its folder under fnad/, or None for a face."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in RANK) else None


def _rank(module):
    wing = _wing(module)
    return FACE_RANK if wing is None else RANK[wing]


EDGES = import_graph.import_edges(ROOT / "fnad")


def test_every_folder_of_fnad_is_a_ranked_wing():
    folders = {p.name for p in (ROOT / "fnad").iterdir()
               if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(RANK), f"give each folder of fnad/ a rank: {folders ^ set(RANK)}"


def test_faces_only_re_export():
    for path in (ROOT / "fnad").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            ok = isinstance(node, (ast.Import, ast.ImportFrom)) or (
                isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
            if path.name == "__init__.py":  # plus the two registration calls and __version__
                ok = ok or isinstance(node, (ast.Expr, ast.Assign))
            assert ok, f"{path.name}:{node.lineno}: a face holds re-exports only"


def test_wings_import_only_lower_wings():
    for module, targets in EDGES.items():
        wing = _wing(module)
        if wing is None:
            continue
        for t in targets:
            same = _wing(t) == wing
            assert same or _rank(t) < RANK[wing], (
                f"{module} imports {t}: {_wing(t) or 'a face'} (rank {_rank(t)}) is not below "
                f"{wing} (rank {RANK[wing]})")


def test_core_wings_never_import_the_array_packages():
    for module, targets in EDGES.items():
        if _wing(module) in CORE:
            bad = [t for t in targets if _wing(t) in ARRAY_PACKAGES]
            assert not bad, (module, bad)


def test_fnad_has_no_import_circle():
    assert import_graph.circles(import_graph.grouped(EDGES)) == []


def _needs_optional_dependency(path):
    """A module of ours that imports an optional dependency at its top (e.g. the numba loops
    of fnad/kernels/_cpu_numba.py): importing it late is importing that dependency late."""
    return any(name.split(".")[0] in OPTIONAL and not in_fun
               for name, _, in_fun in import_graph.imported_names("x.y", path))


OPTIONAL_MODULES = {"fnad." + ".".join(p.relative_to(ROOT / "fnad").with_suffix("").parts)
                    for p in (ROOT / "fnad").rglob("*.py") if _needs_optional_dependency(p)}


def test_imports_inside_functions_are_optional_dependencies_only():
    for pkg in ["fnad", "fnad_nn", "fnad_optim"]:
        for path in (ROOT / pkg).rglob("*.py"):
            module = ".".join((pkg,) + path.relative_to(ROOT / pkg).with_suffix("").parts)
            for name, line, in_fun in import_graph.imported_names(module, path):
                if in_fun:
                    assert name.split(".")[0] in OPTIONAL or name in OPTIONAL_MODULES, (
                        f"{path.relative_to(ROOT)}:{line} imports {name} inside a function; "
                        "import it at the top (only optional dependencies are imported late)")


def test_importing_the_core_wings_alone_does_not_load_the_array_packages():
    code = f"""
import importlib, pkgutil, sys, types
pkg = types.ModuleType("fnad"); pkg.__path__ = [{str(ROOT / 'fnad')!r}]
sys.modules["fnad"] = pkg   # fnad/__init__.py does not run
for wing in {CORE!r}:
    sub = importlib.import_module("fnad." + wing)
    for info in pkgutil.iter_modules(sub.__path__):
        importlib.import_module(f"fnad.{{wing}}.{{info.name}}")
loaded = {{m.split(".")[1] for m in sys.modules if m.startswith("fnad.")}}
assert not loaded & set({ARRAY_PACKAGES!r}), loaded
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def _imports(path):
    return [name for name, _, _ in import_graph.imported_names("x.y", path)]


def test_nn_and_optim_use_only_public_fnad_modules():
    for pkg in ["fnad_nn", "fnad_optim"]:
        other = {"fnad_nn": "fnad_optim", "fnad_optim": "fnad_nn"}[pkg]
        for path in (ROOT / pkg).rglob("*.py"):
            for name in _imports(path):
                parts = name.split(".")
                assert parts[0] != other, (path, name)
                if parts[0] == "fnad":
                    assert not any(p.startswith("_") for p in parts), (path, name)


def test_runtime_packages_never_import_torch_or_pickle():
    for pkg in ["fnad", "fnad_nn", "fnad_optim"]:
        for path in (ROOT / pkg).rglob("*.py"):
            for name in _imports(path):
                assert name.split(".")[0] not in ("torch", "pickle", "cloudpickle", "dill"), (
                    path, name)


PACKAGES = ("fnad", "fnad_nn", "fnad_optim")
MAX_LINES = 800  # modules under ~500 lines; one past 800 is split


def test_the_tracer_knows_neither_numpy_nor_derivatives():
    for name, line, _ in import_graph.imported_names("fnad._core.tracer",
                                                     ROOT / "fnad" / "_core" / "tracer.py"):
        top = name.split(".")[0]
        assert top not in ("numpy", "cupy", "cupyx") and not (
            top == "fnad" and _wing(name) != "_core"), (
            f"fnad/_core/tracer.py:{line} imports {name}: the tracer knows boxes, trace "
            "levels and primitive calls only")


def test_init_files_re_export_explicitly():
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("__init__.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    for a in node.names:
                        local = a.asname or a.name
                        explicit = a.asname == a.name.split(".")[-1] and "." not in a.name
                        assert explicit or local.startswith("_"), (
                            f"{path.relative_to(ROOT)}:{node.lineno}: write `from ... import "
                            f"{a.name} as {a.name}` (a re-export) or import it as a private "
                            "name")


def test_no_module_passes_800_lines():
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            n = len(path.read_text().splitlines())
            assert n <= MAX_LINES, f"{path.relative_to(ROOT)} has {n} lines: split it"


def test_importing_fnad_changes_nothing_process_wide():
    code = """
import ctypes, faulthandler, gc, os, signal, sys, threading, warnings
import numpy as np
def mmapped(nbytes=64 << 20):
    # whether malloc serves a 64 MiB array with its own mapping (glibc's default; raised
    # mmap thresholds, as mallopt(M_MMAP_THRESHOLD) sets them, put it on the heap)
    try:
        info = ctypes.CDLL("libc.so.6").mallinfo2
    except (OSError, AttributeError):  # not glibc, or glibc before 2.33
        return None
    class Info(ctypes.Structure):  # struct mallinfo2: ten size_t
        _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks",
                    "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
    info.restype = Info
    base = info().hblkhd  # the bytes in mapped chunks
    a = np.ones(nbytes, np.uint8)
    grew = info().hblkhd - base >= nbytes
    del a
    return grew
def state():
    return {"environ": dict(os.environ), "errstate": np.geterr(),
            "printoptions": np.get_printoptions(), "warnings": list(warnings.filters),
            "recursion": sys.getrecursionlimit(), "switch": sys.getswitchinterval(),
            "threads": threading.active_count(), "gc": (gc.isenabled(), gc.get_threshold()),
            "signals": [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)],
            "faulthandler": faulthandler.is_enabled(), "excepthook": sys.excepthook,
            "malloc": mmapped()}
before = state()
import fnad, fnad.numpy, fnad.lax, fnad.random, fnad.scipy, fnad.kernels, fnad.distributed
import fnad_nn, fnad_optim
after = state()
print(sorted(k for k in before if before[k] != after[k]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip() == "[]", (out.stdout, out.stderr)
