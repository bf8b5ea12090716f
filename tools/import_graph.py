#!/usr/bin/env python3
"""The import graph of a package: modules, import circles and the longest import chain.

Imports written inside functions count as much as those at the top of a module. Every
module is a node (a package's __init__ included); an edge goes from a module to each module
of the package it imports. fnad.numpy and fnad.scipy each count as one node, as in
../shared/tools/import_circles.py: their op families write rules with their own package
(`from .. import numpy as fnp`), which the package's __init__ imports in turn.
tests/core/test_layering.py uses `import_edges`, `grouped` and `circles`.

Usage: python tools/import_graph.py [PACKAGE_DIR]        (default: fnad)
"""

import ast
import pathlib
import sys

__all__ = ["module_files", "imported_names", "import_edges", "grouped", "circles",
           "longest_chain", "GROUPED"]

GROUPED = ("fnad.numpy", "fnad.scipy")


def module_files(root):
    """{dotted module name: path} for every .py file below the package folder `root`."""
    root = pathlib.Path(root)
    base = root.parent
    mods = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def imported_names(module, path):
    """[(dotted name, lineno, inside a function)] for each import in the file: `from a import b`
    gives `a.b` (the caller decides whether b is a module or a name)."""
    is_pkg = path.name == "__init__.py"
    package = module.split(".") if is_pkg else module.split(".")[:-1]
    out = []

    def visit(node, in_fun):
        for child in ast.iter_child_nodes(node):
            inner = in_fun or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                 ast.Lambda))
            if isinstance(child, ast.Import):
                out.extend((a.name, child.lineno, in_fun) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package[:len(package) - child.level + 1]
                    mod = ".".join(base + ([child.module] if child.module else []))
                else:
                    mod = child.module or ""
                out.extend((f"{mod}.{a.name}", child.lineno, in_fun) for a in child.names)
            visit(child, inner)

    visit(ast.parse(path.read_text()), False)
    return out


def _resolve(name, mods):
    """The module of `mods` that an imported dotted name refers to (None: outside)."""
    while name and name not in mods:
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return name or None


def import_edges(root):
    """{module: {imported module, ...}} within the package at `root`."""
    mods = module_files(root)
    edges = {}
    for m, p in mods.items():
        targets = {_resolve(n, mods) for n, _, _ in imported_names(m, p)}
        edges[m] = {t for t in targets if t is not None and t != m}
    return edges


def grouped(edges, groups=GROUPED):
    """`edges` with the modules of each package in `groups` merged into one node."""
    def node(m):
        return next((g for g in groups if m == g or m.startswith(g + ".")), m)
    out = {}
    for m, targets in edges.items():
        out.setdefault(node(m), set()).update(node(t) for t in targets)
    for m, targets in out.items():
        targets.discard(m)
    return out


def _components(edges):
    """Strongly connected components (Tarjan, iterative), each a sorted list."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = [0]
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    comps.append(sorted(comp))
    return comps


def circles(edges):
    """The import circles: components of more than one module."""
    return [c for c in _components(edges) if len(c) > 1]


def longest_chain(edges):
    """The longest chain of imports `a imports b imports c ...` with no module twice, through
    the graph with each circle collapsed into one node (its modules listed together)."""
    comps = _components(edges)
    comp_of = {m: i for i, c in enumerate(comps) for m in c}
    best = {}

    def chain(i):  # components come out of Tarjan in reverse topological order
        if i not in best:
            nxt = {comp_of[t] for m in comps[i] for t in edges[m]} - {i}
            tails = [chain(j) for j in sorted(nxt)]
            best[i] = [i] + max(tails, key=len, default=[])
        return best[i]

    sys.setrecursionlimit(10000)
    longest = max((chain(i) for i in range(len(comps))), key=len, default=[])
    return ["+".join(comps[i]) for i in longest]


def main(argv):
    root = argv[1] if len(argv) > 1 else "fnad"
    edges = import_edges(root)
    print(f"modules: {len(edges)}, imports between them: {sum(map(len, edges.values()))}")
    edges = grouped(edges)
    circ = circles(edges)
    chain = longest_chain(edges)
    print(f"nodes with {', '.join(GROUPED)} grouped: {len(edges)}")
    print(f"circles: {len(circ)}" + "".join(f"\n  {len(c)} modules: {', '.join(c)}"
                                            for c in circ))
    print(f"longest import chain: {len(chain)} modules\n  " + "\n  -> ".join(chain))
    return 1 if circ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
