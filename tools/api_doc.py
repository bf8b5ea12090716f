"""Regenerate the reference lists in docs/api.md from the code, so that they cannot drift.

Each list is a block in docs/api.md between `<!-- api: NAME -->` and `<!-- /api -->`; this
script replaces the text between them with one line per public name: its signature (as
`inspect.signature` gives it, defaults written as code) and the first paragraph of its
docstring. The names are every public name of fnad_nn, fnad_nn.init, fnad_nn.initializers,
fnad_nn.models, fnad_nn.data, fnad_optim and fnad_optim.contrib, and the graph API: fnad.make_graph,
fnad.named_scope, the Graph they give and what a function made by fnad.jit carries.

    python tools/api_doc.py            # rewrite docs/api.md
    python tools/api_doc.py --check    # exit 1 if docs/api.md is stale
"""

import argparse
import inspect
import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import fnad  # noqa: E402
import fnad_nn  # noqa: E402
import fnad_optim  # noqa: E402

DOC = ROOT / "docs" / "api.md"
BLOCK = re.compile(r"(<!-- api: (\w+) -->\n)(.*?)(<!-- /api -->)", re.S)

# Public values that are not functions or classes have no docstring of their own.
VALUES = {
    "fnad_nn.data.FASHION_MNIST_CLASSES": "the ten Fashion-MNIST class names, by label",
    "fnad_nn.data.MNIST_CLASSES": "the ten MNIST class names ('0' to '9'), by label",
    "fnad_nn.data.SOURCES": "data set -> file -> (download addresses, SHA-256 of the file)",
    # optax's type names, for annotations
    "fnad_optim.OptState": "type name: an optimizer state (a pytree)",
    "fnad_optim.Params": "type name: a params pytree",
    "fnad_optim.Updates": "type name: an updates (gradients) pytree",
    "fnad_optim.Schedule": "type name: a function `count -> value`",
    "fnad_optim.ScalarOrSchedule": "type name: a number or a Schedule",
    "fnad_optim.MaskOrFn": "type name: None, a pytree of bools, or a function of the params "
                           "returning one",
    "fnad_optim.ShouldSkipUpdateFunction": "type name: `(updates, gradient_step, params) -> "
                                           "(should_skip, info)`",
    "fnad_optim.TransformInitFn": "type name: `init(params) -> state`",
    "fnad_optim.TransformUpdateFn": "type name: `update(updates, state, params=None) -> "
                                    "(updates, state)`",
}
# What a function made by fnad.jit carries (set as attributes there, some without docstrings).
JITTED = {
    "graph": None,  # its own docstring
    "cache_size": "The number of traces made so far (one per input signature and static "
                  "value).",
    "clear_cache": "Forget every trace, so the next call traces again.",
}
# Graph members without a docstring of their own.
GRAPH_MEMBERS = {"pretty": "The program as text, one equation a line (what `print(graph)` "
                           "shows)."}
GRAPH_FIELDS = ("`graph.eqns` (the equations, in order; each has `prim`, `args`, `kwargs`, "
                "`outvars` and `scope`), `graph.invars` and `graph.outvars` (its inputs and "
                "outputs), `graph.in_avals` and `graph.out_avals` (their shapes and dtypes), "
                "`graph.name`, and `graph.jaxpr` (itself, for code written against make_jaxpr)")


class _Code:
    """A default value written as code in a signature (`np.float32`, `relu`)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _as_code(v):
    if isinstance(v, types.ModuleType):
        return _Code(v.__name__)
    if isinstance(v, type) and v.__module__ == "numpy":
        return _Code(f"np.{v.__name__}")
    if callable(v) and hasattr(v, "__name__"):
        return _Code(v.__name__)
    return v


def signature(obj, drop_self=False):
    sig = inspect.signature(obj)
    params = list(sig.parameters.values())[1 if drop_self else 0:]
    params = [p.replace(default=_as_code(p.default)) if p.default is not p.empty else p
              for p in params]
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


def summary(obj):
    """The first paragraph of `obj`'s docstring, on one line."""
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split("\n\n")[0].split())


def _entry(name, text):
    if not text:
        raise SystemExit(f"api_doc: {name} has no docstring to summarise; give it one (or a "
                         "description in tools/api_doc.py).")
    return f"- `{name}`: {text}"


def namespace_lines(module):
    """One line per public name of `module` (its modules excepted), in definition order;
    a name bound to an object listed before is written as another name for it."""
    lines, seen, last_home = [], {}, None
    for name, obj in vars(module).items():
        if name.startswith("_") or isinstance(obj, types.ModuleType):
            continue
        full = f"{module.__name__}.{name}"
        home = getattr(obj, "__module__", None)
        if lines and home != last_home:
            lines.append("")
        last_home = home
        if id(obj) in seen:
            lines.append(_entry(full, f"another name for `{seen[id(obj)]}`."))
        elif callable(obj) and full not in VALUES:  # typing names are callable too
            seen[id(obj)] = full
            lines.append(_entry(f"{full}{signature(obj)}", summary(obj)))
        else:
            if full not in VALUES:
                raise SystemExit(f"api_doc: {full} is a public value without a description; "
                                 "add it to VALUES in tools/api_doc.py.")
            lines.append(_entry(full, f"{VALUES[full]} ({type(obj).__name__})."))
    return lines


def graph_lines():
    graph = fnad.make_graph(lambda x: x)(np.zeros(()))
    Graph = type(graph)
    plan = graph.memory_plan()
    jitted = fnad.jit(lambda x: x)
    lines = [_entry(f"fnad.make_graph{signature(fnad.make_graph)}", summary(fnad.make_graph)),
             _entry(f"fnad.make_jaxpr{signature(fnad.make_jaxpr)}", summary(fnad.make_jaxpr)),
             _entry(f"fnad.eval_shape{signature(fnad.eval_shape)}", summary(fnad.eval_shape)),
             _entry(f"fnad.named_scope{signature(fnad.named_scope)}",
                    summary(fnad.named_scope)),
             _entry("fnad.ConcretizationError", summary(fnad.ConcretizationError)), "",
             "`fnad.make_graph(fun)(*args)` and `fnad.jit(fun).graph(*args)` return a `Graph`. "
             f"{summary(Graph)} It has {GRAPH_FIELDS}; `print(graph)` shows it as a program.",
             ""]
    lines.append(_entry(f"graph{signature(Graph.__call__, drop_self=True)}",
                        "Run the graph on arrays of the shapes and dtypes it was traced for."))
    members = {}  # a Graph's own methods and those of the Program it extends, base first
    for cls in reversed(Graph.__mro__[:-1]):
        members.update(vars(cls))
    for name, member in members.items():
        if not name.startswith("_") and callable(member):
            lines.append(_entry(f"graph.{name}{signature(member, drop_self=True)}",
                                summary(member) or GRAPH_MEMBERS.get(name)))
    fields = ", ".join(f"`{k}`" for k in vars(plan) if not k.startswith("_") and k != "graph")
    lines += ["", f"`graph.memory_plan()` returns a `MemoryPlan`. {summary(type(plan))} "
                  f"Fields: {fields}; printing it gives a one-line summary.", "",
              "A function made by `jitted = fnad.jit(fun, static_argnums=(), *, "
              "static_argnames=(), donate_argnums=(), ...)` (or `@fnad.jit(...)`) carries "
              "(`fnad.clear_caches()` forgets every jitted function's traces):", ""]
    for name, text in JITTED.items():
        member = getattr(jitted, name)
        lines.append(_entry(f"jitted.{name}{signature(member)}", text or summary(member)))
    return lines


BLOCKS = {
    "fnad_nn": lambda: namespace_lines(fnad_nn),
    "fnad_nn_init": lambda: namespace_lines(fnad_nn.init),
    "fnad_nn_initializers": lambda: namespace_lines(fnad_nn.initializers),
    "fnad_nn_models": lambda: namespace_lines(fnad_nn.models),
    "fnad_nn_data": lambda: namespace_lines(fnad_nn.data),
    "fnad_optim": lambda: namespace_lines(fnad_optim),
    "fnad_optim_contrib": lambda: namespace_lines(fnad_optim.contrib),
    "graph": graph_lines,
}


def render(text):
    """`text` (docs/api.md) with every generated block rewritten from the code."""
    seen = []

    def block(m):
        name = m.group(2)
        if name not in BLOCKS:
            raise SystemExit(f"api_doc: docs/api.md has a block {name!r}; known: "
                             f"{', '.join(BLOCKS)}.")
        seen.append(name)
        return m.group(1) + "\n".join(BLOCKS[name]()) + "\n" + m.group(4)

    out = BLOCK.sub(block, text)
    missing = [n for n in BLOCKS if n not in seen]
    if missing:
        raise SystemExit(f"api_doc: docs/api.md lacks the blocks {missing}; add "
                         "'<!-- api: NAME -->' and '<!-- /api -->' lines where each belongs.")
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="python tools/api_doc.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="only check that docs/api.md is current")
    args = p.parse_args(argv)
    old = DOC.read_text()
    new = render(old)
    if args.check:
        if new != old:
            print(f"{DOC} is stale: run python tools/api_doc.py")
            return 1
        print(f"{DOC} is up to date")
        return 0
    DOC.write_text(new)
    print(f"rewrote the generated lists in {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
