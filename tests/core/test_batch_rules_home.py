"""Every primitive that fnad, fnad_nn and fnad_optim define batches under fnad.vmap by a rule
registered with `defbatch` where the primitive is defined, or is listed in LOOPS with the
reason vmap runs it once per example. Rules are bound to the primitive objects, never looked
up by name (issue 29): a renamed primitive keeps its rule, and the source checks below keep
name tables from coming back."""

import ast
import importlib
import pathlib
import pkgutil
import subprocess
import sys

import fnad
import fnad_nn
import fnad_optim
from fnad._core.tracer import PRIMITIVE_OF
from fnad.extend import Primitive

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = (fnad, fnad_nn, fnad_optim)

# The primitives with no batching rule on purpose: vmap runs them per example
# (batch_fallback, with its warning). One line each: why.
LOOPS = {
    "nonzero": "the result's size depends on the values, so examples cannot share one call",
    "argwhere": "the result's size depends on the values, so examples cannot share one call",
    "flatnonzero": "the result's size depends on the values, so examples cannot share one call",
    "searchsorted": "NumPy's searchsorted takes one 1-d sorted array: one call per example",
    "allclose": "one bool for the whole arrays; rare under vmap, the loop answers per example",
    "array_equal": "one bool for the whole arrays; rare under vmap, the loop answers per example",
    "matrix_rank": "no rule written yet: rare under vmap, the loop gives each example's rank",
    "convolve_full": "np.convolve takes 1-d inputs only: one call per example",
    "conv_s1_dw": "per-example weight gradients: each example has its own dW",
    "fused_elementwise": "made by jit's fusion inside compiled programs, which vmap never "
                         "traces (vmap of a jitted function traces the Python function)",
    "fused_rows": "made by jit's row fusion inside compiled programs, which vmap never traces",
    "attention_tiles": "made by fast math's attention pass inside compiled programs only",
    "attention_tiles_vjp": "made by fast math's attention pass inside compiled programs only",
}

# Where `Primitive.batch` may be set other than through `defbatch`: defbatch itself, the
# slot's default, and the primitives jit makes per trace (custom_vjp, checkpoint).
BATCH_SLOT_WRITERS = {"fnad/_core/rules.py", "fnad/_core/tracer.py", "fnad/_jit/staging.py"}


def _modules():
    for pkg in PACKAGES:
        yield pkg
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            yield importlib.import_module(info.name)


def _primitive_of(value):
    if isinstance(value, Primitive):
        return value
    try:
        prim = getattr(value, "primitive", None)
    except Exception:  # an object whose attributes cannot be read
        prim = None
    if isinstance(prim, Primitive):
        return prim
    try:
        return PRIMITIVE_OF.get(value)  # ufuncs
    except TypeError:  # unhashable
        return None


def _defined():
    """{primitive: "module.name"} for every primitive a module of the packages holds (test
    primitives are held by no such module, so none is counted)."""
    found = {}
    for mod in _modules():
        for name, value in vars(mod).items():
            prim = _primitive_of(value)
            if prim is not None:
                found.setdefault(prim, f"{mod.__name__}.{name}")
    return found


DEFINED = _defined()


def test_every_primitive_has_a_batching_rule_or_loops_on_purpose():
    missing = sorted(f"{p.name} ({where})" for p, where in DEFINED.items()
                     if p.batch is None and p.name not in LOOPS)
    assert not missing, ("register a batching rule with fnad.extend.defbatch right under "
                         "these primitives' other rules, or add them to LOOPS with why: "
                         f"{missing}")


def test_loops_lists_only_primitives_without_a_rule():
    names = {p.name: p for p in DEFINED}
    stale = sorted(n for n in LOOPS if n not in names or names[n].batch is not None)
    assert not stale, f"LOOPS entries that name no primitive or one with a rule: {stale}"


def test_every_primitive_made_on_import_is_held_by_a_module():
    """A fresh interpreter, importing every module of the packages, makes no primitive that
    the walk above misses (so the tests above see them all)."""
    code = ("import importlib, pkgutil, fnad, fnad_nn, fnad_optim\n"
            "for pkg in (fnad, fnad_nn, fnad_optim):\n"
            "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
            "        importlib.import_module(m.name)\n"
            "from fnad.extend import PRIMITIVES\n"
            "print('\\n'.join(sorted(p.name for p in PRIMITIVES)))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    held = {p.name for p in DEFINED}
    assert set(out) <= held, sorted(set(out) - held)


def test_family_rules_are_built_for_their_own_primitive():
    """A family rule (elementwise_batch(prim), ...) registered on another primitive would
    call the wrong operation: each rule that closes over a primitive closes over its own."""
    wrong = []
    for p in DEFINED:
        cells = [c.cell_contents for c in getattr(p.batch, "__closure__", None) or ()]
        held = [c for c in cells if isinstance(c, Primitive)]
        if held and p not in held:
            wrong.append((p.name, [q.name for q in held]))
    assert not wrong, wrong


def _sources():
    for pkg in ("fnad", "fnad_nn", "fnad_optim"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path


def test_no_batching_rule_tables_by_name():
    """Rules are registered with defbatch against the primitive (or its function) where it is
    defined: no `_batch_rules` modules, no `prim.batch = ...` elsewhere, and defbatch's first
    argument is never looked up (`_P["sum"]`) nor a string."""
    bad = []
    for rel, path in _sources():
        if "_batch_rules" in path.name:
            bad.append(f"{rel}: a batching-rule table module")
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            if isinstance(node, ast.Assign) and rel not in BATCH_SLOT_WRITERS:
                for t in node.targets:
                    for el in (t.elts if isinstance(t, ast.Tuple) else [t]):
                        if isinstance(el, ast.Attribute) and el.attr == "batch":
                            bad.append(f"{rel}:{node.lineno}: sets .batch; use defbatch")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "defbatch" and node.args
                    and isinstance(node.args[0], (ast.Subscript, ast.Constant))):
                bad.append(f"{rel}:{node.lineno}: defbatch of a primitive looked up by name")
    assert not bad, bad
