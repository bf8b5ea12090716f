"""Pictures of a Graph: Graphviz DOT text, written without the Python graphviz package.

One box per equation (the primitive and its parameters, each result's name and shape/dtype),
one node per input, array constant and output, and an edge for each value an equation
reads. With `values`, each node also shows a summary of its value at the inputs the graph
was made with; with `grads`, a summary of the gradient that flowed back through it (the
graph is run again with a zero "probe" added to every value, and the gradient of its scalar
output with respect to the probes is exactly the gradient through each value).

`fnad.named_scope` blocks become clusters. `fold` draws a run of consecutive scopes with
the same structure (the same primitives and result shapes in the same order) once,
labelled xN; `scope` draws one scope alone; past `max_nodes` equations the rest are one
summary node. Labels are DOT quoted strings (not HTML), so only backslashes, double
quotes and line breaks need escaping; `<`, `>`, `{` and `|` are plain characters there.
"""

import shutil
import subprocess

from .._ad.transforms import grad
from .._core.backend import array_module
from .._core.tracer import bind_traced
from .._core.tree import tree_unflatten
from .ir import Var, any_tracer, is_array_const, map_atoms, np_summary
from .text import Namer, param_text

__all__ = ["graph_dot", "render", "quote", "gradients"]


def quote(text):
    """`text` as a DOT quoted string (backslash, quote and line breaks escaped)."""
    text = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\r", "")
    return '"' + text.replace("\n", "\\n") + '"'


# ------------------------------------------------------------------------ gradients
def _inexact(v):
    return v.aval.dtype.kind in "fc"


def gradients(graph):
    """{Var: gradient of the graph's scalar output with respect to that value}."""
    outs = graph.outvars
    if (len(outs) != 1 or type(outs[0]) is not Var or outs[0].aval.shape != ()
            or not _inexact(outs[0])):
        got = ", ".join(str(v.aval) if type(v) is Var else repr(v) for v in outs)
        raise ValueError(f"to_dot(grads=True): the gradient through each node needs a graph "
                         f"with one scalar float output; {graph.name} returns ({got}). Draw "
                         "the scalar loss itself, e.g. fnad.make_graph(loss)(params, batch).")
    flat = _inputs(graph, "grads")
    env = graph.values()
    probed = [v for v in graph.invars if _inexact(v)]
    probed += [v for e in graph.eqns for v in e.outvars if _inexact(v)]
    zeros = [array_module(env[v]).zeros_like(env[v]) for v in probed]

    def probed_run(probes):
        add = dict(zip(probed, probes))
        env = {v: add[v] + x if v in add else x for v, x in zip(graph.invars, flat)}
        env.update(graph.captured)
        for e in graph.eqns:
            args = map_atoms(e.args, env.__getitem__)
            out = (bind_traced(e.prim, args, e.kwargs) if any_tracer(args)
                   else e.prim.impl(*args, **e.kwargs))
            single = len(e.outvars) == 1 and not e.prim.multiple_results
            for v, o in zip(e.outvars, [out] if single else out):
                env[v] = add[v] + o if v in add else o
        return env[outs[0]]

    return dict(zip(probed, grad(probed_run)(zeros)))


def _inputs(graph, what):
    if graph.example_inputs is None:
        raise ValueError(f"to_dot({what}=True): graph {graph.name} has no example inputs; "
                         "make it with fnad.make_graph(f)(*args) or jitted.graph(*args), "
                         "which keep the arguments they were traced with.")
    return graph.example_inputs


# ------------------------------------------------------------------------ selection
def _matches(scope, parts):
    names = [str(s) for s in scope]
    n = len(parts)
    return any(names[i:i + n] == parts for i in range(len(names) - n + 1))


def _select(graph, scope):
    if scope is None:
        return list(range(len(graph.eqns)))
    parts = scope.split("/") if isinstance(scope, str) else None
    if not parts or not all(parts):
        raise TypeError(f"to_dot: scope must be a scope name such as 'block_2' (or a path "
                        f"'outer/inner'), got {scope!r}.")
    chosen = [j for j, e in enumerate(graph.eqns) if _matches(e.scope, parts)]
    if not chosen:
        known = sorted({str(s) for e in graph.eqns for s in e.scope})
        raise ValueError(f"to_dot: no equation of {graph.name} is inside scope {scope!r}; its "
                         f"scopes are {known[:20] or 'none'} (open them with "
                         "fnad.named_scope(name) in the traced function).")
    return chosen


def _signature(eqns, level):
    return tuple((e.prim.name, tuple(str(v.aval) for v in e.outvars),
                  tuple(str(s) for s in e.scope[level + 1:])) for e in eqns)


def _segments(graph, idx, level):
    """Maximal runs of consecutive equations inside one scope entry at `level`."""
    segs = []
    for j in idx:
        sc = graph.eqns[j].scope
        key = tuple(map(id, sc[:level + 1])) if len(sc) > level else None
        if segs and segs[-1][0] == key:
            segs[-1][1].append(j)
        else:
            segs.append((key, [j]))
    return segs


def _fold(graph, idx):
    """(rep: hidden index -> drawn index, run: index -> (run id, segment id), labels)."""
    rep, run, labels = {}, {}, {}
    depth = max((len(graph.eqns[j].scope) for j in idx), default=0)
    for level in range(depth):
        visible = [j for j in idx if j not in rep]
        segs = _segments(graph, visible, level)
        k = 0
        while k < len(segs):
            key, first = segs[k]
            sig = _signature([graph.eqns[j] for j in first], level) if key else None
            m = k + 1
            while (key and m < len(segs) and segs[m][0] and segs[m][0][:-1] == key[:-1]
                   and _signature([graph.eqns[j] for j in segs[m][1]], level) == sig):
                m += 1
            if m - k > 1:
                for s in range(k, m):
                    for p, j in enumerate(segs[s][1]):
                        run[j] = ((level, k), s)
                        if s > k:
                            rep[j] = first[p]
                names = [str(graph.eqns[segs[s][1][0]].scope[level]) for s in (k, m - 1)]
                span = names[0] if names[0] == names[1] else f"{names[0]} .. {names[1]}"
                labels[key] = f"{span} x{m - k}"
            k = m
    return rep, run, labels


# ------------------------------------------------------------------------ drawing
class _Dot:
    def __init__(self, graph, namer, env, grads):
        self.graph, self.namer, self.env, self.grads = graph, namer, env, grads
        self.lines, self.edges = [], {}
        self.paths = _input_paths(graph)

    def notes(self, v):
        out = []
        if self.env is not None and v in self.env:
            out.append("value " + np_summary(self.env[v]))
        if self.grads is not None and v in self.grads:
            out.append("grad " + np_summary(self.grads[v]))
        return out

    def node(self, nid, lines, **attrs):
        extra = "".join(f", {k}={quote(a)}" for k, a in attrs.items())
        return f"{nid} [label={quote(chr(10).join(lines))}{extra}];"

    def eqn_lines(self, e):
        params = " ".join(f"{k}={param_text(a)}" for k, a in e.kwargs.items())
        consts = [param_text(a) for a in e.args
                  if type(a) is not Var and not (is_array_const(a) and a.ndim > 0)
                  and not (type(a) in (list, tuple) and any(type(x) is Var for x in a))]
        head = " ".join([e.prim.name] + consts + ([f"[{params}]"] if params else []))
        outs = [f"{self.namer(v)}: {v.aval}" for v in e.outvars[:3]]
        if len(e.outvars) > 3:
            outs.append(f"... {len(e.outvars)} results")
        return [head] + outs + (self.notes(e.outvars[0]) if e.outvars else [])


def _atoms(args):
    for a in args:
        if type(a) in (list, tuple):
            yield from (x for x in a if type(x) is Var or is_array_const(x))
        elif type(a) is Var or (is_array_const(a) and a.ndim > 0):
            yield a


def graph_dot(graph, values=False, grads=False, fold=True, max_nodes=400, scope=None):
    """Graphviz DOT text of `graph` (see `Graph.to_dot`)."""
    if max_nodes is not None and (not isinstance(max_nodes, int) or max_nodes < 1):
        raise ValueError(f"to_dot: max_nodes must be a positive int or None, got {max_nodes!r}.")
    if values:
        _inputs(graph, "values")
    env = graph.values() if values else None
    d = _Dot(graph, _namer(graph), env, gradients(graph) if grads else None)
    idx = _select(graph, scope)
    rep, run, labels = _fold(graph, idx) if fold else ({}, {}, {})
    visible = [j for j in idx if j not in rep]
    shown = visible if max_nodes is None else visible[:max_nodes]
    rest = visible[len(shown):]
    where = {j: f"e{rep.get(j, j)}" for j in idx}
    where.update({j: "more" for j in rest})
    made = {v: j for j in idx for v in graph.eqns[j].outvars}
    outside = {}
    for j in idx:
        e = graph.eqns[j]
        for a in _atoms(e.args):
            if type(a) is Var and a in made:
                i = made[a]
                if i in run and j in run and run[i][0] == run[j][0] and run[i][1] != run[j][1]:
                    continue  # block k -> block k+1 of one folded run
                src = where[i]
            else:
                if j in rep:
                    continue  # a folded copy's own inputs: drawn once, for the first copy
                src = _outside_node(d, a, outside)
            if src != where[j]:
                d.edges[(src, where[j])] = None
    _output_nodes(d, graph, idx, made, where, outside, scope)
    return _assemble(d, graph, shown, rest, labels, outside, scope)


def _namer(graph):
    """Names in the order the text form gives them, so picture and print agree."""
    namer = Namer()
    for v in graph.invars:
        namer(v)
    for v, _ in graph.captured:
        namer(v)
    for e in graph.eqns:
        for v in e.outvars:
            namer(v)
    return namer


def _input_paths(graph):
    """{input Var: where it sits in the arguments, e.g. "arg0['blocks'][1]['w']"}."""
    try:
        args, kwargs = tree_unflatten(graph.in_tree, range(len(graph.invars)))
    except (TypeError, ValueError, AttributeError):  # a custom node that wants arrays
        return {}
    paths = {}

    def walk(x, path):
        if type(x) is int:
            paths[graph.invars[x]] = path
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(v, f"{path}[{k!r}]")
        elif isinstance(x, (list, tuple)):
            for k, v in enumerate(x):
                walk(v, f"{path}[{k}]")

    for i, a in enumerate(args):
        walk(a, f"arg{i}")
    for k, v in kwargs.items():
        walk(v, k)
    return paths


def _outside_node(d, a, outside):
    key = a if type(a) is Var else id(a)
    if key in outside:
        return outside[key][0]
    nid = f"x{len(outside)}"
    g = d.graph
    if type(a) is Var:
        kind = ("input" if a in g.invars
                else "captured" if any(a is v for v, _ in g.captured) else "from outside")
        decl = f"{d.namer(a)}: {a.aval}"
        lines = [f"{kind} {d.paths[a]}", decl] if a in d.paths else [f"{kind} {decl}"]
        lines += d.notes(a)
        style = "lightblue"
    else:
        lines = [f"const {a.dtype}[{','.join(map(str, a.shape))}]"]
        if d.env is not None:
            lines.append("value " + np_summary(a))
        style = "lightgrey"
    outside[key] = (nid, d.node(nid, lines, shape="ellipse", style="filled", fillcolor=style))
    return nid


def _output_nodes(d, graph, idx, made, where, outside, scope):
    """Edges to the graph's outputs, or (for one scope) to the values used outside it."""
    if scope is None:
        targets = [(f"output {k}", v) for k, v in enumerate(graph.outvars)]
    else:
        inside = set(idx)
        used = {v for j, e in enumerate(graph.eqns) if j not in inside for v in e.invars()}
        used.update(v for v in graph.outvars if type(v) is Var)
        targets = [("to outside", v) for j in idx for v in graph.eqns[j].outvars if v in used]
    for k, (kind, v) in enumerate(targets):
        nid = f"o{k}"
        if type(v) is Var:
            lines = [f"{kind} {d.namer(v)}: {v.aval}"] + d.notes(v)
            src = where[made[v]] if v in made else _outside_node(d, v, outside)
        else:
            lines = [f"{kind}: {param_text(v)}"]
            src = _outside_node(d, v, outside) if is_array_const(v) and v.ndim > 0 else None
        d.lines.append(d.node(nid, lines, shape="ellipse", style="filled",
                              fillcolor="palegreen"))
        if src is not None:
            d.edges[(src, nid)] = None


def _assemble(d, graph, shown, rest, labels, outside, scope):
    g = graph
    title = g.name if scope is None else f"{g.name} / {scope}"
    out = [f"digraph {quote(g.name)} {{",
           f"  graph [label={quote(title)}, labelloc=t, fontname=Helvetica, rankdir=TB];",
           '  node [fontname=Helvetica, fontsize=10, shape=box, style=rounded];',
           '  edge [arrowsize=0.6];']
    used = {s for s, _ in d.edges} | {t for _, t in d.edges}
    out += [f"  {line}" for nid, line in outside.values() if nid in used]
    tree = {}
    for j in shown:
        node = tree
        for s in g.eqns[j].scope:
            node = node.setdefault(id(s), ({}, [], s))[0]
        node.setdefault(None, []).append(j)
    counter = [0]

    def emit(node, prefix, indent):
        for j in node.get(None, []):
            out.append(indent + d.node(f"e{j}", d.eqn_lines(g.eqns[j])))
        for key, (child, _, s) in ((k, v) for k, v in node.items() if k is not None):
            path = prefix + (key,)
            counter[0] += 1
            label = labels.get(path, str(s))
            out.append(f"{indent}subgraph cluster_{counter[0]} {{")
            out.append(f"{indent}  label={quote(label)}; style=rounded; color=grey50;")
            emit(child, path, indent + "  ")
            out.append(indent + "}")

    emit(tree, (), "  ")
    if rest:
        counts = {}
        for j in rest:
            counts[g.eqns[j].prim.name] = counts.get(g.eqns[j].prim.name, 0) + 1
        top = sorted(counts.items(), key=lambda kv: -kv[1])[:6]
        lines = [f"... {len(rest)} more equations (max_nodes)"]
        lines += [", ".join(f"{n} x{c}" for n, c in top)]
        out.append("  " + d.node("more", lines, style="dashed"))
    out += [f"  {line}" for line in d.lines]
    out += [f"  {s} -> {t};" for s, t in d.edges]
    out.append("}")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------ rendering
def render(dot_text, path, fmt=None):
    """Write `dot_text` drawn by Graphviz's `dot` program to `path` (format from the
    extension unless `fmt`; ".dot" writes the text itself). Returns `path`."""
    path = str(path)
    if fmt is None:
        fmt = path.rsplit(".", 1)[-1].lower() if "." in path else "svg"
    if fmt in ("dot", "gv"):
        with open(path, "w") as f:
            f.write(dot_text)
        return path
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError(f"render: the Graphviz program `dot` is not on PATH, so {path!r} "
                           "cannot be drawn. Install Graphviz (apt-get install graphviz, brew "
                           "install graphviz or conda install graphviz), or write the text "
                           "with graph.render('picture.dot') / graph.to_dot() and draw it "
                           "elsewhere.")
    done = subprocess.run([exe, f"-T{fmt}", "-o", path], input=dot_text.encode(),
                          capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"render: `dot -T{fmt}` failed for {path!r}: "
                           f"{done.stderr.decode(errors='replace').strip()}")
    return path
