"""`Graph`: a staged program (fnad/_graph/ir.py) with its views: the text form, the memory
plan and Graphviz pictures."""

from .._core.abstract import aval_of
from .dot import graph_dot, render
from .ir import Program
from .memory import memory_plan
from .text import graph_text

__all__ = ["Graph"]


class Graph(Program):
    """A staged function that prints as a small program, draws itself and runs.

    `graph(*args, **kwargs)` runs it; `str(graph)` is its text (one primitive application a
    line); `memory_plan()` the liveness of its values; `to_dot()` / `render(path)` pictures.
    """

    def memory_plan(self):
        """Liveness of every intermediate: a `MemoryPlan` with the peak bytes held at once."""
        return memory_plan(self)

    @property
    def jaxpr(self):
        """The program itself (JAX's `ClosedJaxpr.jaxpr`, for code written against
        `make_jaxpr`)."""
        return self

    @property
    def in_avals(self):
        """The abstract values (shape, dtype) of the inputs."""
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        """The abstract values (shape, dtype) of the outputs."""
        return [v.aval if hasattr(v, "aval") else aval_of(v) for v in self.outvars]

    def pretty(self):
        """The program as text, one equation a line (what `print(graph)` shows)."""
        return graph_text(self)

    __str__ = pretty

    def __repr__(self):
        return (f"<fnad Graph {self.name}: {len(self.invars)} inputs, {len(self.eqns)} "
                f"equations, {len(self.outvars)} outputs>")

    def to_dot(self, values=False, grads=False, fold=True, max_nodes=400, scope=None):
        """Graphviz DOT text: one node per equation (op, shape, dtype), edges for data flow.

        values/grads: annotate nodes with a summary of each value and of the gradient that
        flowed back through it (uses the inputs the graph was made with; grads needs a
        scalar output). fold: draw repeated blocks (`fnad.named_scope`) once, marked xN.
        scope: draw only the equations inside this named scope. max_nodes: beyond this,
        the rest is summarised in one node.
        """
        return graph_dot(self, values=values, grads=grads, fold=fold, max_nodes=max_nodes,
                         scope=scope)

    def render(self, path, fmt=None, **kwargs):
        """Write the picture with the Graphviz `dot` program (format from the extension)."""
        return render(self.to_dot(**kwargs), path, fmt)
