"""Reverse-mode automatic differentiation on scalars, in one page: the idea behind
fnad.grad without arrays, tracers or rule tables.

Every arithmetic operation on a `Value` returns a new `Value` that remembers its inputs
and, for each input, the local derivative d(output)/d(input). That record is the
computational graph. `backward()` visits the graph from the output back to the inputs in
reverse topological order and applies the chain rule: each node passes
`grad(node) * local_derivative` on to each of its inputs, where contributions add up (a
value used twice gets two contributions). fnad does the same on arrays: a primitive's VJP
rule plays the part of `local_derivative`, and the tape is built by tracers.

The script differentiates a small neuron, checks the gradients against central finite
differences, and writes the graph with every value and gradient as Graphviz DOT text
(plus a PNG when the `dot` program is installed).

    python examples/scalar_autodiff.py
    python examples/scalar_autodiff.py --dot /tmp/graph.dot
"""

import math
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _common import docs_path, parser, write_result


class Value:
    """A scalar that records how it was computed."""

    def __init__(self, data, parents=(), op="", label=""):
        self.data = float(data)
        self.grad = 0.0                # d(output)/d(self), filled in by backward()
        self.parents = parents         # ((parent Value, local derivative), ...)
        self.op, self.label = op, label

    @staticmethod
    def lift(x):
        return x if isinstance(x, Value) else Value(x, label=f"{x:g}")

    # each operation: the result, and the local derivative with respect to each input
    def __add__(self, other):
        other = Value.lift(other)
        return Value(self.data + other.data, ((self, 1.0), (other, 1.0)), "+")

    def __mul__(self, other):
        other = Value.lift(other)
        return Value(self.data * other.data, ((self, other.data), (other, self.data)), "*")

    def __pow__(self, k):              # k is a plain number
        return Value(self.data ** k, ((self, k * self.data ** (k - 1)),), f"**{k:g}")

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-Value.lift(other))

    def __truediv__(self, other):
        return self * Value.lift(other) ** -1

    __radd__ = __add__
    __rmul__ = __mul__

    def __rsub__(self, other):
        return Value.lift(other) - self

    def tanh(self):
        t = math.tanh(self.data)
        return Value(t, ((self, 1.0 - t * t),), "tanh")

    def exp(self):
        e = math.exp(self.data)
        return Value(e, ((self, e),), "exp")

    def backward(self):
        """Fill in `.grad` of every node that this value depends on."""
        order, seen = [], set()

        def visit(v):                  # depth-first: inputs before the values that use them
            if id(v) not in seen:
                seen.add(id(v))
                for parent, _ in v.parents:
                    visit(parent)
                order.append(v)

        visit(self)
        for v in order:
            v.grad = 0.0
        self.grad = 1.0                # d(output)/d(output)
        for v in reversed(order):      # outputs before inputs: v.grad is complete here
            for parent, local in v.parents:
                parent.grad += v.grad * local    # the chain rule, summed over uses
        return order


def to_dot(order):
    """The graph as Graphviz DOT text: one box per value (label, value, gradient), one
    ellipse per operation."""
    lines = ["digraph autodiff {", "  rankdir=LR;", '  node [fontname="Helvetica"];']
    num = {id(v): i for i, v in enumerate(order)}     # stable node names
    for v in order:
        name = f"{v.label} | " if v.label else ""
        lines.append(f'  v{num[id(v)]} [shape=record, label="{{ {name}value {v.data:.4f} | '
                     f'grad {v.grad:.4f} }}"];')
        if v.op:
            lines.append(f'  op{num[id(v)]} [label="{v.op}"];')
            lines.append(f"  op{num[id(v)]} -> v{num[id(v)]};")
            for parent, _ in v.parents:
                lines.append(f"  v{num[id(parent)]} -> op{num[id(v)]};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def neuron(x1, x2, w1, w2, b):
    """tanh(x1 w1 + x2 w2 + b), then a squared error against 0.5."""
    out = (x1 * w1 + x2 * w2 + b).tanh()
    out.label = "out"
    loss = (out - 0.5) ** 2
    loss.label = "loss"
    return loss


def finite_difference(f, xs, i, eps=1e-6):
    up = [Value(x + (eps if j == i else 0.0)) for j, x in enumerate(xs)]
    down = [Value(x - (eps if j == i else 0.0)) for j, x in enumerate(xs)]
    return (f(*up).data - f(*down).data) / (2 * eps)


def write_picture(path, order):
    """The graph as DOT text at `path`, and a PNG next to it when Graphviz is installed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_dot(order))
    print(f"wrote {path} ({len(order)} values)")
    if shutil.which("dot"):
        png = path.with_suffix(".png")
        subprocess.run(["dot", "-Tpng", str(path), "-o", str(png)], check=True)
        print(f"wrote {png}")
    else:
        print("the Graphviz `dot` program is not installed: no PNG (the DOT text is there)")


def build_parser():
    p = parser("scalar_autodiff", __doc__)
    p.add_output("--dot", type=Path, default=lambda args: docs_path("scalar_autodiff.dot"),
                 shown="docs/scalar_autodiff.dot",
                 help="where to write the DOT graph (a PNG goes next to it if `dot` exists)")
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    start = time.perf_counter()
    names, xs = ["x1", "x2", "w1", "w2", "b"], [2.0, -1.0, -0.5, 1.5, 0.8]
    inputs = [Value(x, label=n) for n, x in zip(names, xs)]
    loss = neuron(*inputs)
    order = loss.backward()
    worst = 0.0
    for n, v, i in zip(names, inputs, range(len(xs))):
        fd = finite_difference(neuron, xs, i)
        worst = max(worst, abs(v.grad - fd))
        print(f"d loss / d {n} = {v.grad: .8f}   (finite difference {fd: .8f})")
    print(f"loss {loss.data:.6f}; largest difference from finite differences {worst:.1e}")
    if args.dot is not None:
        write_picture(args.dot, order)
    if worst > 1e-6:
        raise SystemExit(f"scalar_autodiff: gradients differ from finite differences by {worst}")
    return write_result(args, argv, "scalar_autodiff",
                        "scalar engine: max |grad - finite difference|", worst, goal="< 1e-6",
                        start=start, values=len(order))


if __name__ == "__main__":
    main()
