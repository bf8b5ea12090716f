"""Pictures of staged programs: a small MLP's loss with the value and the gradient at every
node, the program jit runs for its gradient, and a GPT whose repeated blocks are folded.

`fnad.make_graph(f)(*args)` traces `f` into a Graph; `graph.to_dot(values=True,
grads=True)` writes Graphviz DOT text in which every node shows its operation, shape and
dtype, a summary of its value (mean, std, [min, max]) and of the gradient of the loss that
flowed back through it. Blocks opened with `fnad.named_scope` (GPT's `block_i`) are drawn
as clusters; a run of blocks with the same structure is drawn once, labelled xN. SVGs are
written next to the DOT files when the Graphviz `dot` program is installed.

    python examples/graph_picture.py                  # writes docs/graph_*.dot (and .svg)
    python examples/graph_picture.py --dir /tmp/pictures
"""

import shutil
import sys
from pathlib import Path

import numpy as np

import fnad
import fnad.numpy as fnp
import fnad_nn as nn
from fnad_nn.models import GPTConfig, gpt, init_gpt

from _common import docs_path, parser


def mlp_loss(params, x, labels):
    return nn.sparse_softmax_cross_entropy(nn.mlp(params, x, activation=fnp.tanh), labels)


def gpt_pictures(seed):
    """The loss of a 4-block GPT as a graph (tokens are part of the traced function)."""
    c = GPTConfig(vocab=65, d_model=32, n_heads=4, n_layers=4, max_len=16, dtype=np.float32)
    params = init_gpt(fnad.random.PRNGKey(seed), c)
    tok = np.random.default_rng(seed).integers(0, c.vocab, (2, 17))

    def gpt_loss(p):
        return nn.sparse_softmax_cross_entropy(gpt(p, c, tok[:, :-1]), tok[:, 1:])

    return fnad.make_graph(gpt_loss)(params)


def write(graph, path, **kwargs):
    """Write `path` (.dot) and, when Graphviz is installed, the SVG next to it."""
    path.write_text(graph.to_dot(**kwargs))
    written = [path]
    if shutil.which("dot"):
        written.append(Path(graph.render(path.with_suffix(".svg"), **kwargs)))
    return written


def build_parser():
    p = parser("graph_picture", __doc__, result=False)
    p.add_output("--dir", type=Path, default=lambda args: docs_path(), shown="docs/",
                 help="where to write graph_*.dot (and .svg)")
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    rng = np.random.default_rng(args.seed)
    params = nn.init_mlp(fnad.random.PRNGKey(args.seed), [4, 8, 3], dtype=np.float64)
    x, labels = rng.standard_normal((5, 4)), rng.integers(0, 3, 5)

    loss_graph = fnad.make_graph(mlp_loss)(params, x, labels)
    print(loss_graph)
    grad_graph = fnad.jit(fnad.grad(mlp_loss)).graph(params, x, labels)
    print(grad_graph)
    gpt_graph = gpt_pictures(args.seed)
    print(f"GPT loss: {len(gpt_graph.eqns)} equations")
    if args.dir is None:
        return []
    args.dir.mkdir(parents=True, exist_ok=True)
    written = (write(loss_graph, args.dir / "graph_mlp.dot", values=True, grads=True)
               + write(grad_graph, args.dir / "graph_mlp_grad.dot", values=True)
               + write(gpt_graph, args.dir / "graph_gpt.dot"))
    for path in written:
        print(f"wrote {path}")
    if not shutil.which("dot"):
        print("the Graphviz `dot` program is not installed: DOT text only, no SVG")
    return written


if __name__ == "__main__":
    main()
