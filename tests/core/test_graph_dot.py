"""Pictures of graphs (Graph.to_dot / render) and fnad.named_scope."""

import re
import shutil
import subprocess

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad._graph.ir import np_summary
from fnad._graph.dot import gradients, quote

X = np.array([0.5, -1.0])
QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


def tanh_sq(x):
    return fnp.sum(fnp.tanh(x) ** 2)


def _eqn_nodes(dot):
    return re.findall(r"^\s*(e\d+) \[label=", dot, flags=re.M)


def _label(dot, nid):
    return re.search(rf"^\s*{nid} \[label=(\"(?:[^\"\\]|\\.)*\")", dot, flags=re.M).group(1)


def _well_formed(dot):
    """Every quote closes on its line; braces balance outside quoted strings."""
    for line in dot.splitlines():
        rest = QUOTED.sub("", line)
        assert '"' not in rest, line
    bare = QUOTED.sub("", dot)
    assert bare.count("{") == bare.count("}")


def test_structure_nodes_and_edges():
    g = fnad.make_graph(tanh_sq)(X)
    dot = g.to_dot()
    _well_formed(dot)
    assert dot.startswith('digraph "tanh_sq" {')
    assert len(_eqn_nodes(dot)) == len(g.eqns) == 3
    heads = [_label(dot, n).strip('"').split("\\n")[0] for n in _eqn_nodes(dot)]
    assert heads[0] == "tanh" and heads[1].startswith("power 2") and heads[2].startswith("sum")
    assert r"input arg0\na: float64[2]" in dot and "output 0 d: float64[]" in dot
    edges = re.findall(r"^\s*(\w+) -> (\w+);", dot, flags=re.M)
    assert edges == [("x0", "e0"), ("e0", "e1"), ("e1", "e2"), ("e2", "o0")]


def test_values_and_grads_match_known_numbers():
    g = fnad.make_graph(tanh_sq)(X)
    b = np.tanh(X)
    grads = gradients(g)
    a_var, b_var, c_var, d_var = g.invars[0], *(e.outvars[0] for e in g.eqns)
    np.testing.assert_allclose(grads[d_var], 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(grads[c_var], np.ones(2), rtol=0, atol=1e-15)
    np.testing.assert_allclose(grads[b_var], 2 * b, rtol=1e-14)
    np.testing.assert_allclose(grads[a_var], 2 * b * (1 - b * b), rtol=1e-14)
    np.testing.assert_allclose(grads[a_var], fnad.grad(tanh_sq)(X), rtol=1e-14)
    dot = g.to_dot(values=True, grads=True)
    _well_formed(dot)
    tanh_label = _label(dot, "e0")
    assert "value " + np_summary(b) in tanh_label
    assert "grad " + np_summary(2 * b) in tanh_label
    assert "value " + np_summary(X) in dot and "grad " + np_summary(2 * b * (1 - b * b)) in dot
    assert f"value {np.sum(b ** 2):.4g}" in _label(dot, "e2")


def test_grads_need_one_scalar_output_and_values_need_inputs():
    g = fnad.make_graph(lambda x: fnp.tanh(x))(X)
    with pytest.raises(ValueError, match="one scalar float output.*make_graph"):
        g.to_dot(grads=True)
    g = fnad.make_graph(tanh_sq)(X)
    g.example_inputs = None
    with pytest.raises(ValueError, match="no example inputs"):
        g.to_dot(values=True)


def test_jitted_graph_draws_with_values():
    f = fnad.jit(fnad.grad(tanh_sq))
    dot = f.graph(X).to_dot(values=True)
    _well_formed(dot)
    assert "value " + np_summary(fnad.grad(tanh_sq)(X)) in dot


def test_escaping_quotes_backslashes_and_angle_brackets():
    assert quote('a"b') == r'"a\"b"'
    assert quote("back\\slash") == r'"back\\slash"'
    assert quote("two\nlines") == r'"two\nlines"'
    assert quote("<lambda> {x|y}") == '"<lambda> {x|y}"'  # plain in quoted (non-HTML) labels

    def weird(x):
        return fnp.sum(x * 2.0)

    weird.__name__ = 'we"ird\\<name>'
    with fnad.named_scope('sc"o<p>e'):
        g = fnad.make_graph(weird)(X)
    dot = g.to_dot()
    _well_formed(dot)
    assert r'digraph "we\"ird\\<name>" {' in dot
    if shutil.which("dot"):
        _svg(dot)


def _blocks(x, n=4, same_name=False):
    for i in range(n):
        with fnad.named_scope("layer" if same_name else f"blk_{i}"):
            x = fnp.tanh(x * 0.5 + 1.0)
    return fnp.sum(x)


def _clusters(dot):
    return re.findall(r'subgraph cluster_\d+ \{\n\s*label=("(?:[^"\\]|\\.)*")', dot)


def test_named_scopes_become_clusters_and_fold():
    g = fnad.make_graph(_blocks)(X)
    assert [tuple(e.scope) for e in g.eqns[:3]] == [("blk_0",)] * 3
    unfolded = g.to_dot(fold=False)
    assert _clusters(unfolded) == [f'"blk_{i}"' for i in range(4)]
    assert len(_eqn_nodes(unfolded)) == 13
    folded = g.to_dot(values=True)
    _well_formed(folded)
    assert _clusters(folded) == ['"blk_0 .. blk_3 x4"']
    assert len(_eqn_nodes(folded)) == 4  # one block of three, and the sum
    edges = re.findall(r"^\s*(\w+) -> (\w+);", folded, flags=re.M)
    assert ("e2", "e12") in edges  # the last block's result feeds the sum, drawn from block 0
    assert ("e2", "e0") not in edges  # no back edge from one copy to the next


def test_repeated_calls_of_one_scope_fold():
    g = fnad.make_graph(lambda x: _blocks(x, 3, same_name=True))(X)
    assert _clusters(g.to_dot(fold=False)) == ['"layer"'] * 3
    assert _clusters(g.to_dot()) == ['"layer x3"']


def test_different_structure_is_not_folded():
    def f(x):
        with fnad.named_scope("a"):
            x = fnp.tanh(x)
        with fnad.named_scope("b"):
            x = fnp.exp(x)
        return fnp.sum(x)

    assert _clusters(fnad.make_graph(f)(X).to_dot()) == ['"a"', '"b"']


def test_scope_filter_draws_one_scope():
    g = fnad.make_graph(_blocks)(X)
    dot = g.to_dot(scope="blk_2", values=True)
    _well_formed(dot)
    assert len(_eqn_nodes(dot)) == 3
    assert "from outside" in dot and "to outside" in dot
    assert _clusters(dot) == ['"blk_2"']
    with pytest.raises(ValueError, match="blk_0.*named_scope"):
        g.to_dot(scope="nope")
    with pytest.raises(TypeError, match="scope name"):
        g.to_dot(scope=3)


def test_nested_scope_path_filter():
    def f(x):
        with fnad.named_scope("outer"):
            with fnad.named_scope("inner"):
                x = fnp.tanh(x)
            x = fnp.exp(x)
        return fnp.sum(x)

    g = fnad.make_graph(f)(X)
    assert [tuple(e.scope) for e in g.eqns] == [("outer", "inner"), ("outer",), ()]
    assert len(_eqn_nodes(g.to_dot(scope="outer/inner"))) == 1
    assert len(_eqn_nodes(g.to_dot(scope="outer"))) == 2
    assert _clusters(g.to_dot()) == ['"outer"', '"inner"']


def test_max_nodes_summarises_the_rest():
    g = fnad.make_graph(_blocks)(X)
    dot = g.to_dot(fold=False, max_nodes=5)
    _well_formed(dot)
    assert len(_eqn_nodes(dot)) == 5
    assert "... 8 more equations (max_nodes)" in dot and "more -> o0;" in dot
    with pytest.raises(ValueError, match="max_nodes"):
        g.to_dot(max_nodes=0)


def test_named_scope_is_checked_restored_and_free_eagerly():
    with pytest.raises(TypeError, match="non-empty str"):
        fnad.named_scope("")
    from fnad._jit.staging import current_scope
    with pytest.raises(RuntimeError):
        with fnad.named_scope("a"):
            assert current_scope() == ("a",)
            raise RuntimeError
    assert current_scope() == ()

    @fnad.named_scope("deco")
    def h(x):
        return fnp.tanh(x), current_scope()

    y, scope = h(X)
    assert scope == ("deco",) and current_scope() == ()
    np.testing.assert_array_equal(y, np.tanh(X))
    assert h.__name__ == "h"


def test_render_dot_text_and_missing_program(tmp_path, monkeypatch):
    g = fnad.make_graph(tanh_sq)(X)
    path = g.render(tmp_path / "g.dot")
    with open(path) as f:
        assert f.read() == g.to_dot()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="Graphviz program `dot`.*apt-get install graphviz"):
        g.render(tmp_path / "g.svg")


def _svg(dot):
    done = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert b"<svg" in done.stdout
    return done.stdout


@pytest.mark.skipif(shutil.which("dot") is None, reason="the Graphviz dot program is absent")
def test_dot_program_parses_every_kind_of_picture(tmp_path):
    g = fnad.make_graph(_blocks)(X)
    for kwargs in ({}, {"values": True, "grads": True}, {"fold": False}, {"scope": "blk_1"},
                   {"max_nodes": 4}):
        _svg(g.to_dot(**kwargs))
    _svg(fnad.make_graph(fnad.grad(_blocks))(X).to_dot(values=True))
    out = g.render(tmp_path / "g.svg", values=True)
    with open(out, "rb") as f:
        assert f.read().lstrip().startswith(b"<?xml")
