"""Regenerate the printed examples in docs/jit.md, so that every program, generated source
and error message shown there is real output of this checkout.

Each example is a block in docs/jit.md between `<!-- example: NAME -->` and
`<!-- /example -->`; this script replaces the text between them with a fenced block of
what `EXAMPLES[NAME]()` prints.

    python tools/jit_doc_examples.py            # rewrite docs/jit.md
    python tools/jit_doc_examples.py --check    # exit 1 if docs/jit.md is stale
"""

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import fnad  # noqa: E402
import fnad.numpy as fnp  # noqa: E402
from fnad._graph.ir import Eqn, map_atoms, rebuild  # noqa: E402
from fnad._jit.compile import source_of  # noqa: E402
from fnad._jit.passes import (eliminate_common_subexpressions, eliminate_dead_code,  # noqa: E402
                              fold_constants)

DOC = ROOT / "docs" / "jit.md"
W = np.linspace(-1.0, 1.0, 6).reshape(3, 2)
X = np.linspace(0.0, 1.0, 12).reshape(4, 3)


def layer_loss(w, x):
    return fnp.mean(fnp.tanh(x @ w) ** 2)


def program():
    return str(fnad.make_graph(layer_loss)(W, X))


def program_grad():
    return str(fnad.make_graph(fnad.grad(layer_loss))(W, X))


def cache():
    step = fnad.jit(layer_loss)
    lines = []
    for x in (X, X + 1.0, np.ones((8, 3)), np.ones((8, 3), np.float32)):
        step(W, x)
        lines.append(f"x {x.dtype}{list(x.shape)}: traces so far {step.cache_size()}")
    return "\n".join(lines)


def static():
    def power(x, n):
        for _ in range(n):  # Python control flow on a static value: unrolled at trace time
            x = x * x
        return fnp.sum(x)

    f = fnad.jit(power, static_argnums=1)
    f(X, 2), f(X, 2), f(X, 3)
    return f"traces after n=2, n=2, n=3: {f.cache_size()}\n{f.graph(X, 2)}"


def compose():
    x = X[0]
    f = fnad.jit(lambda x: fnp.sum(fnp.tanh(x) ** 2))
    g_jit = fnad.grad(f)(x)
    g_plain = fnad.grad(lambda x: fnp.sum(fnp.tanh(x) ** 2))(x)
    return (f"max |grad(jit(f)) - grad(f)| = {np.max(np.abs(g_jit - g_plain))}\n"
            f"{fnad.make_graph(fnad.grad(f))(x)}")


def trace_constants():
    def f(x):
        w = W / np.sqrt(np.sum(W * W))  # no staged value involved: computed while tracing
        return fnp.tanh(x @ w)

    return str(fnad.make_graph(f)(X))


def normalised_layer(w, x):
    return fnp.tanh(x @ (w / fnp.sqrt(fnp.sum(w * w))))


def fold():
    g = fnad.make_graph(normalised_layer)(W, X)
    w_var = g.invars[0]
    eqns = [Eqn(e.prim, tuple(map_atoms(e.args, lambda v: W if v is w_var else v)), e.kwargs,
                e.outvars, e.scope) for e in g.eqns]
    known_w = rebuild(g, eqns)  # the graph specialised on a known w: w is now a constant
    return f"w known, before:\n{known_w}\nafter:\n{fold_constants(known_w)}"


def cse_dce():
    def f(x):
        a = fnp.exp(x) * 2.0
        b = fnp.exp(x) * 2.0   # the same computation again
        fnp.log(x)             # a result nobody uses
        return a + b

    g = fnad.make_graph(f)(X)
    g1 = eliminate_common_subexpressions(g)
    return f"before:\n{g}\nafter CSE:\n{g1}\nafter dead code:\n{eliminate_dead_code(g1)}"


def jit_graph():
    return str(fnad.jit(fnad.grad(layer_loss)).graph(W, X))


def inplace():
    def f(x, w):
        h = fnp.tanh(x @ w)
        return fnp.sum((h * h + 1.0) * 0.5)

    x, w = np.ones((256, 64)), np.ones((64, 512)) / 64
    g = fnad.jit(f).graph(x, w)
    plan = g.memory_plan()
    mib = [f"{b / 2**20:.2f}" for b in plan.live_bytes]
    return f"{g}\n\n{source_of(g)[0]}\n{plan}\nMiB live after each equation: {mib}"


def fusion():
    def adam_like(p, g, m, v):
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * (g * g)
        return p - 0.01 * m / (fnp.sqrt(v) + 1e-8), m, v

    args = [np.ones(4096, np.float32) for _ in range(4)]
    before = fnad.jit(adam_like, optimize=False).graph(*args)
    after = fnad.jit(adam_like).graph(*args)
    return f"before:\n{before}\nafter:\n{after}"


def concretization():
    try:
        fnad.jit(lambda x: x if fnp.sum(x) > 0 else -x)(X)
    except fnad.ConcretizationError as e:
        return f"{type(e).__name__}: {e}"
    raise AssertionError("expected a ConcretizationError")


def picture():
    g = fnad.make_graph(lambda x: fnp.sum(fnp.tanh(x) ** 2))(np.array([0.5, -1.0]))
    return g.to_dot(values=True, grads=True).rstrip()


EXAMPLES = {f.__name__: f for f in (program, program_grad, cache, static, compose,
                                    trace_constants, fold, cse_dce, jit_graph, inplace,
                                    fusion, concretization, picture)}
BLOCK = re.compile(r"(<!-- example: (\w+) -->\n).*?(<!-- /example -->)", re.S)


def wrap(text):
    """Long generated lines wrapped at 96 characters, for reading on a page."""
    out = []
    for line in text.splitlines():
        while len(line) > 96:
            cut = line.rfind(" ", 40, 96)
            cut = 96 if cut < 0 else cut
            out.append(line[:cut])
            line = "    " + line[cut:].lstrip()
        out.append(line)
    return "\n".join(out)


def render(doc):
    missing = set(EXAMPLES) - set(m.group(2) for m in BLOCK.finditer(doc))
    if missing:
        raise SystemExit(f"jit_doc_examples: docs/jit.md has no block for {sorted(missing)}")

    def fill(m):
        name = m.group(2)
        if name not in EXAMPLES:
            raise SystemExit(f"jit_doc_examples: unknown example {name!r} in docs/jit.md")
        lang = "dot" if name == "picture" else "text"
        text = EXAMPLES[name]()
        text = text if lang == "dot" else wrap(text)
        return f"{m.group(1)}```{lang}\n{text}\n```\n{m.group(3)}"

    return BLOCK.sub(fill, doc)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="only check that docs/jit.md is current")
    args = p.parse_args(argv)
    doc = DOC.read_text()
    new = render(doc)
    if args.check:
        if new != doc:
            print("docs/jit.md is stale: run python tools/jit_doc_examples.py")
            return 1
        print("docs/jit.md is current")
        return 0
    DOC.write_text(new)
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
